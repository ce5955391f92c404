//! `GET /api/prometheus/sd`: Prometheus HTTP service discovery for the engines of this host,
//! so a team's Prometheus scrapes every engine the console runs without a target list to keep
//! by hand. Token-protected (`[auth] prometheus_sd_token`); `packaging/prometheus/` has the
//! scrape configuration, alert rules and a Grafana dashboard for the same signals.

use super::WebState;
use app::domain::engine::{EngineState, EngineStatus};
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Json, Response};

/// The host part of the `Host` header Prometheus sent (how it reaches this machine).
fn requested_host(headers: &HeaderMap, uri: &Uri) -> Option<String> {
    let host = super::guard::requested_authority(headers, uri)?;
    // `[v6]:port` keeps its brackets (the target is `[v6]:port` again); any other name is
    // letters, digits, dots, dashes and underscores, without its port.
    let (name, allowed) = match host.strip_prefix('[') {
        Some(v6) => (format!("[{}]", v6.split(']').next()?), ".:"),
        None => (host.split(':').next()?.to_string(), ".-_"),
    };
    let inner = name.trim_start_matches('[').trim_end_matches(']');
    let ok = !inner.is_empty()
        && name.len() <= 253
        && inner.chars().all(|c| c.is_ascii_alphanumeric() || allowed.contains(c));
    ok.then_some(name)
}

/// One target group per engine of this host that is meant to run (stopped engines are not
/// targets: a deliberate stop is not an outage). An engine bound to every interface is
/// reached at the address Prometheus used for the console; one bound to a specific address
/// at that address.
pub fn target_groups(fleet: &[EngineStatus], via: Option<&str>, host: &str) -> serde_json::Value {
    let groups: Vec<_> = fleet
        .iter()
        .filter(|e| e.node.is_empty() && e.state != EngineState::Stopped && e.port != 0)
        .map(|e| {
            let addr = match e.host.as_str() {
                "0.0.0.0" | "::" | "" => via.unwrap_or("127.0.0.1").to_string(),
                h => crate::engine::fmt_host_port(h, e.port)
                    .rsplit_once(':')
                    .map_or(h.to_string(), |(a, _)| a.to_string()),
            };
            serde_json::json!({
                "targets": [format!("{addr}:{}", e.port)],
                "labels": {
                    "__metrics_path__": "/metrics",
                    "profile": e.profile,
                    "engine_kind": e.kind.as_str(),
                    "engine": e.engine,
                    "host": host,
                    "model": e.model_name,
                    "simulated": e.simulated.to_string(),
                }
            })
        })
        .collect();
    serde_json::Value::Array(groups)
}

pub async fn service_discovery(State(s): State<WebState>, headers: HeaderMap, uri: Uri) -> Response {
    let auth = &s.ctx.data.config.auth;
    if let Some(refused) = super::guard::machine_token(
        auth.prometheus_sd_token.as_deref(),
        &headers,
        "Prometheus service discovery",
        "prometheus_sd_token",
    ) {
        return refused;
    }
    let fleet = s.fleet.borrow().clone();
    Json(target_groups(
        &fleet,
        requested_host(&headers, &uri).as_deref(),
        // The host's name in the fleet (`host_name`, default the kernel's): the label the
        // history from Prometheus selects on.
        &s.ctx.data.host_name(),
    ))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(profile: &str, host: &str, port: u16, state: &str, node: &str) -> EngineStatus {
        serde_json::from_value(serde_json::json!({
            "profile": profile, "engine": "vllm-0-33", "kind": "vllm", "simulated": true, "host": host,
            "port": port, "state": state, "pid": null, "model_name": "Qwen/Qwen3-8B", "node": node
        }))
        .unwrap()
    }

    #[test]
    fn running_local_engines_become_targets_with_their_labels() {
        let fleet = [
            engine("a", "0.0.0.0", 8000, "healthy", ""),
            engine("b", "10.0.0.7", 8001, "hung", ""),
            engine("c", "::1", 8002, "starting", ""),
            engine("stopped", "0.0.0.0", 8003, "stopped", ""),
            engine("remote", "0.0.0.0", 8004, "healthy", "gpu-b"),
        ];
        let v = target_groups(&fleet, Some("gpu-a.lan"), "gpu-a");
        let groups = v.as_array().unwrap();
        assert_eq!(groups.len(), 3, "{v}");
        assert_eq!(groups[0]["targets"][0], "gpu-a.lan:8000");
        assert_eq!(groups[1]["targets"][0], "10.0.0.7:8001");
        assert_eq!(groups[2]["targets"][0], "[::1]:8002");
        let l = &groups[0]["labels"];
        assert_eq!(l["profile"], "a");
        assert_eq!(l["engine_kind"], "vllm");
        assert_eq!(l["host"], "gpu-a");
        assert_eq!(l["model"], "Qwen/Qwen3-8B");
        assert_eq!(l["simulated"], "true");
    }

    #[test]
    fn the_host_header_is_taken_only_when_it_is_a_host() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(axum::http::header::HOST, v.parse().unwrap());
            requested_host(&m, &Uri::from_static("/api/prometheus/sd"))
        };
        assert_eq!(h("gpu-a:3000").as_deref(), Some("gpu-a"));
        assert_eq!(h("[::1]:3000").as_deref(), Some("[::1]"));
        assert_eq!(h("10.0.0.5").as_deref(), Some("10.0.0.5"));
        assert_eq!(h("evil/x:3000"), None);
        assert_eq!(h("a b"), None);
    }
}
