//! The rest of the fleet: remote Roofline consoles (their `/api/engines`) and bare engines
//! (scraped and probed here like our own), polled on their own task so a slow or dead host
//! never delays the local engines' view. A host that does not answer is shown as unreachable,
//! not as an empty list.

use crate::config::FleetMember;
use crate::engine::AnswerError;
use crate::monitor::console_metrics::ConsoleMetrics;
use crate::monitor::Collector;
use app::domain::engine::{EngineKind, EngineState, EngineStatus};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How long a remote host may take to answer one poll.
const TIMEOUT: Duration = Duration::from_secs(3);
/// The largest `/api/engines` answer read from another console (a thousand engines is ~1 MiB).
const REMOTE_CAP: usize = 4 << 20;

/// A row for a host or engine we know nothing else about.
fn row(node: &str, profile: &str, kind: EngineKind, state: EngineState) -> EngineStatus {
    EngineStatus {
        node: node.to_string(),
        ..EngineStatus::blank(profile, kind, state)
    }
}

/// Splits `http://host:port/path` into host and port (for display).
fn host_port(url: &str) -> (String, u16) {
    let rest = url.split("://").nth(1).unwrap_or(url);
    let authority = rest.split('/').next().unwrap_or(rest);
    let default = if url.starts_with("https://") { 443 } else { 80 };
    match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => match p.parse() {
            Ok(port) => (h.trim_matches(['[', ']']).to_string(), port),
            Err(_) => (authority.to_string(), default),
        },
        _ => (authority.to_string(), default),
    }
}

/// One poll of a remote console: its engines, each marked with the host and a link to its
/// page there. `token` is the fleet's `[auth] fleet_token`, which the remote console asks of
/// a caller without a session.
async fn poll_console(http: &reqwest::Client, name: &str, url: &str, token: Option<&str>) -> Vec<EngineStatus> {
    let base = url.trim_end_matches('/');
    let answer = async {
        let mut request = http.get(format!("{base}/api/engines")).timeout(TIMEOUT);
        if let Some(t) = token {
            request = request.bearer_auth(t);
        }
        let resp = request.send().await.map_err(|e| AnswerError::sending(&e, TIMEOUT))?;
        if !resp.status().is_success() {
            return Err(AnswerError::Status(resp.status().as_u16()));
        }
        let body = crate::engine::read_capped(resp, REMOTE_CAP).await?;
        serde_json::from_slice::<Vec<EngineStatus>>(&body).map_err(|e| AnswerError::not_json(&e))
    };
    match answer.await {
        Ok(engines) => engines
            .into_iter()
            // A console listing its own remote hosts: show only its local engines.
            .filter(|e| e.node.is_empty())
            .map(|mut e| {
                e.link = Some(format!("{base}/engines/{}", e.profile));
                e.node = name.to_string();
                e
            })
            .collect(),
        Err(e) => {
            let mut r = row(name, "", EngineKind::Vllm, EngineState::Unreachable);
            r.note = Some(match e {
                AnswerError::Status(401) => format!(
                    "{base}: HTTP 401: its [auth] fleet_token is not this console's (or {})",
                    if token.is_some() {
                        "it has none"
                    } else {
                        "this console has none"
                    }
                ),
                e => format!("{base}: {e}"),
            });
            r.link = Some(base.to_string());
            vec![r]
        }
    }
}

/// A bare engine's `/health` and, once, the model name it serves (for the completion probe).
async fn poll_engine(http: &reqwest::Client, m: &FleetMember, url: &str, model: Option<&str>) -> EngineStatus {
    let base = url.trim_end_matches('/');
    let kind = m.kind.unwrap_or(EngineKind::Vllm);
    let (host, port) = host_port(base);
    let mut r = row(&m.name, &m.name, kind, EngineState::Unreachable);
    r.host = host;
    r.port = port;
    r.engine = "bare".into();
    let engine = crate::engine::Engine::with_client(http.clone(), base);
    let health = engine.health(TIMEOUT).await;
    r.health_code = health.as_ref().ok().copied();
    match health {
        Ok(200..=299) => r.state = EngineState::Healthy,
        Ok(code) => {
            r.state = EngineState::Unhealthy;
            r.note = Some(format!("{base}/health: HTTP {code}"));
        }
        Err(e) => r.note = Some(format!("{base}/health: {e}")),
    }
    r.model_name = match model {
        Some(m) => m.to_string(),
        None if r.state == EngineState::Healthy => engine.served_model().await.unwrap_or_default(),
        None => String::new(),
    };
    r
}

/// One feed of the two sources of other hosts' rows (remote consoles over HTTP, a shared
/// database), each as it lands.
pub fn merged(
    a: Option<watch::Receiver<Vec<EngineStatus>>>,
    b: Option<watch::Receiver<Vec<EngineStatus>>>,
) -> Option<watch::Receiver<Vec<EngineStatus>>> {
    let (mut a, mut b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => return a.or(b),
    };
    let (tx, rx) = watch::channel(Vec::new());
    tokio::spawn(async move {
        loop {
            let mut rows = a.borrow_and_update().clone();
            rows.extend(b.borrow_and_update().iter().cloned());
            tx.send_if_modified(|cur| std::mem::replace(cur, rows.clone()) != rows);
            tokio::select! {
                r = a.changed() => if r.is_err() { return },
                r = b.changed() => if r.is_err() { return },
                _ = tx.closed() => return,
            }
        }
    });
    Some(rx)
}

/// Starts polling the fleet's other hosts; `None` when the host configuration lists none.
/// `fleet_token` goes to the other consoles (never to bare engines).
pub fn start(
    members: Vec<FleetMember>,
    fleet_token: Option<String>,
    http: reqwest::Client,
    metrics: Arc<ConsoleMetrics>,
    scrape_interval_s: u64,
) -> Option<watch::Receiver<Vec<EngineStatus>>> {
    if members.is_empty() {
        return None;
    }
    let (tx, rx) = watch::channel(Vec::new());
    tokio::spawn(async move {
        let mut collector = Collector::new(metrics, http.clone(), Duration::from_secs(scrape_interval_s), None);
        let mut models: HashMap<String, String> = HashMap::new();
        let bases: HashMap<String, String> = members
            .iter()
            .filter_map(|m| {
                m.engine
                    .as_ref()
                    .map(|u| (m.name.clone(), u.trim_end_matches('/').to_string()))
            })
            .collect();
        loop {
            let polls = members.iter().map(|m| {
                let http = &http;
                let model = models.get(&m.name).cloned();
                let token = fleet_token.as_deref();
                async move {
                    match (&m.console, &m.engine) {
                        (Some(url), _) => poll_console(http, &m.name, url, token).await,
                        (None, Some(url)) => vec![poll_engine(http, m, url, model.as_deref()).await],
                        (None, None) => Vec::new(),
                    }
                }
            });
            let started = tokio::time::Instant::now();
            let mut rows: Vec<EngineStatus> = futures::future::join_all(polls).await.into_iter().flatten().collect();
            for r in rows.iter().filter(|r| r.engine == "bare" && !r.model_name.is_empty()) {
                models.insert(r.node.clone(), r.model_name.clone());
            }
            // Bare engines get the same scrape, probe and hung check as ours.
            let (mut bare, remote): (Vec<_>, Vec<_>) = rows.drain(..).partition(|r| r.engine == "bare");
            collector
                .enrich(&mut bare, |r| bases.get(&r.node).cloned().unwrap_or_default())
                .await;
            let next: Vec<EngineStatus> = remote.into_iter().chain(bare).collect();
            tx.send_replace(next);
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep_until(started + crate::monitor::INTERVAL).await;
        }
    });
    Some(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A console on loopback that answers `/api/engines` only to `Bearer right`.
    async fn console_wanting(token: &'static str) -> String {
        use axum::http::{header, HeaderMap, StatusCode};
        let rows = serde_json::to_string(&[EngineStatus::blank("p", EngineKind::Vllm, EngineState::Healthy)]).unwrap();
        let app = axum::Router::new().route(
            "/api/engines",
            axum::routing::get(move |h: HeaderMap| async move {
                let sent = h.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
                if sent == Some(format!("Bearer {token}").as_str()) {
                    (StatusCode::OK, rows)
                } else {
                    (StatusCode::UNAUTHORIZED, "sign in first".to_string())
                }
            }),
        );
        crate::engine::loopback(app).await
    }

    #[tokio::test]
    async fn a_console_is_read_with_the_fleet_token_and_a_refusal_names_it() {
        crate::tls::install_default_provider();
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        let url = console_wanting("right").await;
        let rows = poll_console(&http, "gpu-b", &url, Some("right")).await;
        assert_eq!((rows[0].profile.as_str(), rows[0].state), ("p", EngineState::Healthy));
        assert_eq!(rows[0].node, "gpu-b");
        for (token, says) in [
            (Some("wrong"), "is not this console's"),
            (None, "this console has none"),
        ] {
            let rows = poll_console(&http, "gpu-b", &url, token).await;
            assert_eq!(rows[0].state, EngineState::Unreachable);
            let note = rows[0].note.clone().unwrap_or_default();
            assert!(note.contains("fleet_token") && note.contains(says), "{note}");
        }
    }

    #[test]
    fn urls_split_into_host_and_port() {
        assert_eq!(host_port("http://gpu-b:8000"), ("gpu-b".into(), 8000));
        assert_eq!(host_port("http://10.0.0.6:8000/"), ("10.0.0.6".into(), 8000));
        assert_eq!(host_port("https://engine.lan"), ("engine.lan".into(), 443));
        assert_eq!(host_port("http://[::1]:9000"), ("::1".into(), 9000));
    }
}
