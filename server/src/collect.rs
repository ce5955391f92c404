//! Scraping an engine's `/metrics` into signals (the runbook's `task metrics`).

use app::domain::prometheus::parse;
use app::domain::signals::{normalise, Signals};
use std::time::Duration;

/// A scrape that could not be read, named for the operator.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    #[error("{url}: {detail}")]
    Http { url: String, detail: String },
    #[error("{url}: HTTP {status} (SGLang serves /metrics only with --enable-metrics)")]
    Status { url: String, status: u16 },
}

/// One scrape: the signals and how many lines could not be parsed (skipped, not fatal).
pub async fn scrape(http: &reqwest::Client, base: &str) -> Result<(Signals, usize), ScrapeError> {
    let url = format!("{}/metrics", base.trim_end_matches('/'));
    let resp = http
        .get(&url)
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .map_err(|e| ScrapeError::Http {
            url: url.clone(),
            detail: e.to_string(),
        })?;
    if !resp.status().is_success() {
        return Err(ScrapeError::Status {
            url,
            status: resp.status().as_u16(),
        });
    }
    let body = resp.text().await.map_err(|e| ScrapeError::Http {
        url: url.clone(),
        detail: e.to_string(),
    })?;
    let parsed = parse(&body);
    Ok((normalise(&parsed.samples), parsed.errors.len()))
}

/// The first model the server lists in `/v1/models`: what a completion is addressed to when
/// only the URL is known.
pub async fn served_model(http: &reqwest::Client, base: &str) -> Option<String> {
    let v: serde_json::Value = http
        .get(format!("{}/v1/models", base.trim_end_matches('/')))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    v.pointer("/data/0/id").and_then(|x| x.as_str()).map(str::to_string)
}
