//! HTTP to one engine (or a proxy in front of it): the one place that knows an engine's
//! address, its `/health`, the one-token completion probe, the served model, the version and
//! `/metrics`. Engine control, the monitor, incidents, the change gate and the CLI all ask
//! here, so each fact about an engine is fetched by one piece of code, with one set of
//! timeouts and size limits.
//!
//! Engines' answers are untrusted: no proxies, no redirects, and every body is read with a
//! cap ([`read_capped`]) so a hostile or broken endpoint cannot exhaust memory.

use app::domain::engine::EngineKind;
use app::domain::profile::Profile;
use app::domain::prometheus::parse;
use app::domain::signals::{normalise, Signals};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The largest `/metrics` body read (vLLM's is about 55 KB; a large MoE with many labels
/// stays far below this).
pub const METRICS_CAP: usize = 16 << 20;
/// The largest JSON answer read from a small endpoint (`/version`, `/v1/models`, a completion).
pub const JSON_CAP: usize = 1 << 20;
/// How long `/health` may take when checking whether an engine is up.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `/metrics` may take.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `/version` or `/v1/models` may take.
pub const INFO_TIMEOUT: Duration = Duration::from_secs(5);

/// The URL a client on this host reaches an engine at: its bind host (a wildcard bind is
/// reached on loopback) and port.
pub fn base_url(host: &str, port: u16) -> String {
    format!("http://{}", fmt_host_port(reachable_host(host), port))
}

/// The address of a profile's engine: its host and its port (the engine's default when the
/// profile sets none).
pub fn profile_base(p: &Profile, kind: EngineKind) -> String {
    base_url(&p.host, p.port.unwrap_or(kind.default_port()))
}

/// A wildcard bind address is reached on loopback.
pub fn reachable_host(host: &str) -> &str {
    if host == "0.0.0.0" || host == "::" {
        "127.0.0.1"
    } else {
        host
    }
}

/// `host:port`, bracketing IPv6 literals.
pub fn fmt_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A client builder with the settings every outbound connection to an engine or another
/// console uses: no proxy (engines are local or on the fleet's network), no redirects (an
/// answer that redirects is not an engine's), a short connect timeout, and rustls with the
/// roots host configuration names (`crate::tls`: the system's, plus `[tls] ca_file`).
pub fn client_builder() -> reqwest::ClientBuilder {
    crate::tls::install_default_provider();
    let builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(2));
    match crate::tls::client() {
        Some(tls) => builder.tls_backend_preconfigured(tls),
        None => builder,
    }
}

/// The process-wide client for probes and scrapes (connections are pooled across callers).
pub fn shared_client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| client_builder().build().unwrap_or_else(|_| reqwest::Client::new()))
        .clone()
}

/// An error with its causes: reqwest's own message names only the URL, the cause says what
/// went wrong (a refused connection, a certificate no root vouches for, …).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

/// Why an engine's (or another HTTP peer's) answer could not be had. Its text is what an
/// operator reads in the gate's detail, the CLI's `health` and a remote host's row.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AnswerError {
    /// Nothing answered: refused, reset, DNS; the text is the whole cause chain.
    #[error("{0}")]
    Unreachable(String),
    #[error("no answer within {0} s")]
    Timeout(u64),
    #[error("HTTP {0}")]
    Status(u16),
    /// The body (announced or actual) is larger than the cap read from such an endpoint.
    #[error("answer larger than {} MiB", .0 >> 20)]
    TooLarge(usize),
    #[error("not JSON: {0}")]
    NotJson(String),
    /// A check that was not attempted, and why (no model to address, `/health` failed).
    #[error("skipped: {0}")]
    Skipped(&'static str),
}

impl AnswerError {
    /// An answer that does not parse as what was asked for. serde's message quotes the value it
    /// did not expect (a whole string field), so a hostile peer's text is cut to 300
    /// characters before it reaches a row's note or a log line.
    pub fn not_json(e: &serde_json::Error) -> Self {
        let text = e.to_string();
        let cut: String = text.chars().take(300).collect();
        Self::NotJson(if cut.len() < text.len() { cut + "…" } else { cut })
    }

    /// A transport error of reqwest, told apart by whether the timeout ran out.
    pub fn sending(e: &reqwest::Error, timeout: Duration) -> Self {
        if e.is_timeout() {
            Self::Timeout(timeout.as_secs())
        } else {
            Self::Unreachable(error_chain(e))
        }
    }
}

/// Reads a response body, refusing one larger than `cap` bytes (announced or actual).
pub async fn read_capped(mut resp: reqwest::Response, cap: usize) -> Result<Vec<u8>, AnswerError> {
    if resp.content_length().is_some_and(|n| n > cap as u64) {
        return Err(AnswerError::TooLarge(cap));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| AnswerError::Unreachable(error_chain(&e)))?
    {
        if body.len().saturating_add(chunk.len()) > cap {
            return Err(AnswerError::TooLarge(cap));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads a JSON answer of at most [`JSON_CAP`] bytes.
pub async fn read_json(resp: reqwest::Response) -> Result<serde_json::Value, AnswerError> {
    let body = read_capped(resp, JSON_CAP).await?;
    serde_json::from_slice(&body).map_err(|e| AnswerError::not_json(&e))
}

/// A scrape that could not be read, named for the operator.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    #[error("{url}: {detail}")]
    Http { url: String, detail: String },
    #[error("{url}: HTTP {status} (SGLang serves /metrics only with --enable-metrics)")]
    Status { url: String, status: u16 },
}

/// `/health` and a one-token completion, as `roofline health` and the change gate run them.
#[derive(Clone, Debug)]
pub struct HealthCheck {
    pub health_code: u16,
    pub health_ms: f64,
    pub completion: Result<(), AnswerError>,
    pub completion_ms: f64,
}

impl HealthCheck {
    pub fn ok(&self) -> bool {
        self.health_code == 200 && self.completion.is_ok()
    }
}

/// One engine, by its base URL.
#[derive(Clone, Debug)]
pub struct Engine {
    http: reqwest::Client,
    base: String,
}

impl Engine {
    /// The engine at `base` (`http://host:port`, no trailing slash needed), over the shared
    /// client.
    pub fn at(base: &str) -> Self {
        Self::with_client(shared_client(), base)
    }

    pub fn with_client(http: reqwest::Client, base: &str) -> Self {
        Self {
            http,
            base: base.trim_end_matches('/').to_string(),
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// `/health`'s status code, or why nothing answered within `timeout`.
    pub async fn health(&self, timeout: Duration) -> Result<u16, AnswerError> {
        self.http
            .get(format!("{}/health", self.base))
            .timeout(timeout)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .map_err(|e| AnswerError::sending(&e, timeout))
    }

    /// A real one-token completion (what `/health` cannot tell: vLLM's check only reads a
    /// flag). Returns its time in milliseconds, or why it failed.
    pub async fn probe(&self, model: &str, timeout: Duration) -> Result<f64, AnswerError> {
        let t0 = Instant::now();
        let body = serde_json::json!({"model": model, "prompt": "ping", "max_tokens": 1, "temperature": 0});
        match self
            .http
            .post(format!("{}/v1/completions", self.base))
            .timeout(timeout)
            .json(&body)
            .send()
            .await
        {
            Ok(r) if r.status().is_success() => {
                // The answer is read (capped) so the connection goes back to the pool.
                read_capped(r, JSON_CAP).await?;
                Ok(t0.elapsed().as_secs_f64() * 1000.0)
            }
            Ok(r) => Err(AnswerError::Status(r.status().as_u16())),
            Err(e) => Err(AnswerError::sending(&e, timeout)),
        }
    }

    /// The first model the server lists in `/v1/models`: what a completion is addressed to
    /// when only the URL is known.
    pub async fn served_model(&self) -> Option<String> {
        let r = self
            .http
            .get(format!("{}/v1/models", self.base))
            .timeout(INFO_TIMEOUT)
            .send()
            .await
            .ok()?;
        let v = read_json(r).await.ok()?;
        v.pointer("/data/0/id").and_then(|x| x.as_str()).map(str::to_string)
    }

    /// The engine's version: vLLM's `/version`, SGLang's `/server_info`.
    pub async fn version(&self) -> Option<String> {
        for path in ["/version", "/server_info"] {
            let Ok(r) = self
                .http
                .get(format!("{}{path}", self.base))
                .timeout(INFO_TIMEOUT)
                .send()
                .await
            else {
                continue;
            };
            if let Ok(v) = read_json(r).await {
                if let Some(ver) = v.get("version").and_then(|x| x.as_str()) {
                    return Some(ver.chars().take(64).collect());
                }
            }
        }
        None
    }

    /// One scrape of `/metrics`: the normalised signals and how many lines could not be
    /// parsed (skipped, not fatal).
    pub async fn scrape(&self) -> Result<(Signals, usize), ScrapeError> {
        let (samples, errors) = self.scrape_samples().await?;
        Ok((normalise(&samples), errors))
    }

    /// One scrape of `/metrics` as samples (what the upgrade's metric check reads), with the
    /// count of lines that could not be parsed.
    pub async fn scrape_samples(&self) -> Result<(Vec<app::domain::prometheus::Sample>, usize), ScrapeError> {
        let url = format!("{}/metrics", self.base);
        let http_error = |detail: String| ScrapeError::Http {
            url: url.clone(),
            detail,
        };
        let resp = self
            .http
            .get(&url)
            .timeout(SCRAPE_TIMEOUT)
            .send()
            .await
            .map_err(|e| http_error(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(ScrapeError::Status {
                url,
                status: resp.status().as_u16(),
            });
        }
        let body = read_capped(resp, METRICS_CAP)
            .await
            .map_err(|e| http_error(e.to_string()))?;
        let body = String::from_utf8_lossy(&body);
        let parsed = parse(&body);
        Ok((parsed.samples, parsed.errors.len()))
    }

    /// `/health`, then a one-token completion to `model` (or the first served model), with
    /// the generous timeouts an operator's check gets (10 s and 30 s).
    pub async fn health_check(&self, model: Option<String>) -> HealthCheck {
        let t0 = Instant::now();
        let health_code = self.health(Duration::from_secs(10)).await.unwrap_or(0);
        let health_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let model = match model {
            Some(m) => Some(m),
            None => self.served_model().await,
        };
        let t1 = Instant::now();
        let completion = match &model {
            Some(m) if health_code == 200 => self.probe(m, Duration::from_secs(30)).await.map(|_| ()),
            Some(_) => Err(AnswerError::Skipped("/health failed")),
            None => Err(AnswerError::Skipped("no model name (give --profile or fix /v1/models)")),
        };
        HealthCheck {
            health_code,
            health_ms,
            completion,
            completion_ms: t1.elapsed().as_secs_f64() * 1000.0,
        }
    }
}

/// A stand-in HTTP server on loopback for unit tests (an engine, a Prometheus, another
/// console): serves `app` on a free port until the test's runtime ends; its base URL.
#[cfg(test)]
pub(crate) async fn loopback(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_answer_quoted_in_a_parse_error_is_cut() {
        // A string where a number belongs: serde quotes the whole string in its message.
        let body = format!("[{{\"port\": \"{}\"}}]", "x".repeat(100_000));
        let e = serde_json::from_str::<Vec<app::domain::engine::EngineStatus>>(&body).unwrap_err();
        assert!(e.to_string().len() > 100_000, "serde quotes the value");
        let shown = AnswerError::not_json(&e).to_string();
        assert!(shown.len() < 1_000, "{} bytes", shown.len());
        assert!(shown.starts_with("not JSON: "), "{shown}");
    }

    #[test]
    fn wildcard_binds_are_reached_on_loopback_and_ipv6_is_bracketed() {
        assert_eq!(base_url("0.0.0.0", 8000), "http://127.0.0.1:8000");
        assert_eq!(base_url("::", 8000), "http://127.0.0.1:8000");
        assert_eq!(base_url("::1", 30000), "http://[::1]:30000");
        assert_eq!(base_url("10.1.2.3", 8000), "http://10.1.2.3:8000");
    }

    #[tokio::test]
    async fn an_oversized_answer_is_refused_not_read() {
        use axum::routing::get;
        let big = "x".repeat(JSON_CAP + 10);
        let app = axum::Router::new()
            .route("/version", get(move || async move { big }))
            .route("/v1/models", get(|| async { r#"{"data":[{"id":"m"}]}"# }));
        let e = Engine::at(&format!("{}/", loopback(app).await));
        assert_eq!(e.version().await, None);
        assert_eq!(e.served_model().await.as_deref(), Some("m"));
    }

    #[tokio::test]
    async fn redirects_are_not_followed() {
        use axum::routing::get;
        let app = axum::Router::new().route(
            "/health",
            get(|| async { axum::response::Redirect::temporary("http://127.0.0.1:9/health") }),
        );
        let e = Engine::at(&loopback(app).await);
        assert_eq!(e.health(HEALTH_TIMEOUT).await, Ok(307));
    }
}
