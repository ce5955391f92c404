//! The console's own `/metrics`, for the Prometheus its operators already run: how scraping
//! and probing go, how many browsers are connected, and engines by state.

use app::domain::engine::{EngineState, EngineStatus};
use app::domain::prometheus::{escape_label, format_value};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

/// Counters shared by the supervisor and the HTTP handlers.
#[derive(Default, Debug)]
pub struct ConsoleMetrics {
    scrapes: AtomicU64,
    scrape_errors: AtomicU64,
    scrape_micros: AtomicU64,
    probes: AtomicU64,
    probe_failures: AtomicU64,
    sse_clients: AtomicI64,
}

impl ConsoleMetrics {
    pub fn scraped(&self, ok: bool, elapsed: std::time::Duration) {
        self.scrapes.fetch_add(1, Ordering::Relaxed);
        if !ok {
            self.scrape_errors.fetch_add(1, Ordering::Relaxed);
        }
        self.scrape_micros
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn probed(&self, ok: bool) {
        self.probes.fetch_add(1, Ordering::Relaxed);
        if !ok {
            self.probe_failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts an event-stream client for as long as the guard lives.
    pub fn sse_client(self: &Arc<Self>) -> SseClient {
        self.sse_clients.fetch_add(1, Ordering::Relaxed);
        SseClient(self.clone())
    }

    /// The exposition body.
    pub fn render(&self, fleet: &[EngineStatus], gpu: &app::domain::gpu::GpuState) -> String {
        let mut out = String::new();
        let mut family = |name: &str, kind: &str, help: &str, samples: Vec<(String, f64)>| {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
            for (labels, v) in samples {
                out.push_str(&format!("{name}{labels} {}\n", format_value(v)));
            }
        };
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
        family(
            "roofline_build_info",
            "gauge",
            "The console's version; always 1.",
            vec![(format!("{{version=\"{}\"}}", env!("CARGO_PKG_VERSION")), 1.0)],
        );
        family(
            "roofline_scrapes_total",
            "counter",
            "Scrapes of engine /metrics.",
            vec![(String::new(), load(&self.scrapes))],
        );
        family(
            "roofline_scrape_errors_total",
            "counter",
            "Scrapes that failed.",
            vec![(String::new(), load(&self.scrape_errors))],
        );
        family(
            "roofline_scrape_duration_seconds_total",
            "counter",
            "Time spent scraping.",
            vec![(String::new(), load(&self.scrape_micros) / 1e6)],
        );
        family(
            "roofline_completion_probes_total",
            "counter",
            "One-token completion probes sent.",
            vec![(String::new(), load(&self.probes))],
        );
        family(
            "roofline_completion_probe_failures_total",
            "counter",
            "Probes without an answer in time.",
            vec![(String::new(), load(&self.probe_failures))],
        );
        family(
            "roofline_sse_clients",
            "gauge",
            "Browsers connected to event streams.",
            vec![(String::new(), self.sse_clients.load(Ordering::Relaxed) as f64)],
        );
        let by_state = EngineState::ALL
            .iter()
            .map(|s| {
                (
                    format!("{{state=\"{}\"}}", escape_label(s.as_str())),
                    fleet.iter().filter(|e| e.state == *s).count() as f64,
                )
            })
            .collect();
        family("roofline_engines", "gauge", "Engines by state.", by_state);
        // One series per engine of this host, for alert rules on the console's own verdicts
        // (hung is decided here, from counters and probes, not by any engine metric).
        let per_engine = fleet
            .iter()
            .filter(|e| e.node.is_empty())
            .map(|e| {
                (
                    format!(
                        "{{profile=\"{}\",engine_kind=\"{}\",state=\"{}\"}}",
                        escape_label(&e.profile),
                        e.kind.as_str(),
                        escape_label(e.state.as_str())
                    ),
                    1.0,
                )
            })
            .collect();
        family(
            "roofline_engine_state",
            "gauge",
            "The current state of each engine on this host (1 for its state).",
            per_engine,
        );
        let (throttled, xids) = match gpu {
            app::domain::gpu::GpuState::Available { gpus, events, .. } => {
                let throttled = gpus
                    .iter()
                    .flat_map(|g| {
                        g.throttle
                            .iter()
                            .map(move |r| (format!("{{gpu=\"{}\",reason=\"{}\"}}", g.index, escape_label(r)), 1.0))
                    })
                    .collect();
                let mut last: std::collections::BTreeMap<(u32, String), i64> = Default::default();
                for ev in events {
                    let code = match (ev.xid, ev.double_bit_ecc) {
                        (Some(x), _) => x.to_string(),
                        (None, _) => "dbe".to_string(),
                    };
                    let at = last.entry((ev.gpu, code)).or_insert(ev.at_ms);
                    *at = (*at).max(ev.at_ms);
                }
                let xids = last
                    .into_iter()
                    .map(|((g, code), at)| (format!("{{gpu=\"{g}\",xid=\"{code}\"}}"), at as f64 / 1000.0))
                    .collect();
                (throttled, xids)
            }
            _ => (Vec::new(), Vec::new()),
        };
        family(
            "roofline_gpu_throttled",
            "gauge",
            "Active clock throttle reasons per GPU (NVML), 1 while active.",
            throttled,
        );
        family(
            "roofline_gpu_last_critical_event_timestamp_seconds",
            "gauge",
            "When the console last received each Xid (or a double-bit ECC error, xid=\"dbe\") per GPU.",
            xids,
        );
        out
    }
}

/// Decrements the client gauge when an event stream ends.
pub struct SseClient(Arc<ConsoleMetrics>);

impl Drop for SseClient {
    fn drop(&mut self) {
        self.0.sse_clients.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_states_throttling_and_xids_are_series_alert_rules_can_use() {
        use app::domain::gpu::{GpuEvent, GpuReading, GpuState};
        let mut engine: EngineStatus = serde_json::from_value(serde_json::json!({
            "profile": "qwen", "engine": "vllm", "kind": "vllm", "simulated": false, "host": "127.0.0.1",
            "port": 8000, "state": "hung", "pid": null, "model_name": "m", "node": ""
        }))
        .unwrap();
        let mut remote = engine.clone();
        remote.node = "gpu-b".into();
        remote.profile = "other".into();
        engine.state = EngineState::Hung;
        let gpu = GpuState::Available {
            driver: None,
            cuda: None,
            gpus: vec![GpuReading {
                index: 1,
                throttle: vec!["hw_thermal_slowdown".into()],
                ..serde_json::from_value(serde_json::json!({"index": 1, "name": "H100", "uuid": "u",
                    "memory_used_bytes": 0, "memory_total_bytes": 1, "processes": [], "throttle": []}))
                .unwrap()
            }],
            events: vec![
                GpuEvent {
                    at_ms: 1_000,
                    gpu: 1,
                    xid: Some(79),
                    double_bit_ecc: false,
                },
                GpuEvent {
                    at_ms: 5_000,
                    gpu: 1,
                    xid: Some(79),
                    double_bit_ecc: false,
                },
                GpuEvent {
                    at_ms: 7_000,
                    gpu: 0,
                    xid: None,
                    double_bit_ecc: true,
                },
            ],
        };
        let text = ConsoleMetrics::default().render(&[engine, remote], &gpu);
        assert!(
            text.contains("roofline_engine_state{profile=\"qwen\",engine_kind=\"vllm\",state=\"hung\"} 1"),
            "{text}"
        );
        assert!(
            !text.contains("profile=\"other\""),
            "another host's engines are its console's to report"
        );
        assert!(
            text.contains("roofline_gpu_throttled{gpu=\"1\",reason=\"hw_thermal_slowdown\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("roofline_gpu_last_critical_event_timestamp_seconds{gpu=\"1\",xid=\"79\"} 5"),
            "{text}"
        );
        assert!(
            text.contains("roofline_gpu_last_critical_event_timestamp_seconds{gpu=\"0\",xid=\"dbe\"} 7"),
            "{text}"
        );
        assert!(app::domain::prometheus::parse(&text).errors.is_empty());
    }

    #[test]
    fn renders_parseable_exposition() {
        let m = Arc::new(ConsoleMetrics::default());
        m.scraped(true, std::time::Duration::from_millis(3));
        m.scraped(false, std::time::Duration::from_millis(1));
        let guard = m.sse_client();
        let body = m.render(&[], &app::domain::gpu::GpuState::NoDriver { reason: String::new() });
        let parsed = app::domain::prometheus::parse(&body);
        assert!(parsed.errors.is_empty());
        let get = |n: &str| parsed.samples.iter().find(|s| s.name == n).unwrap().value;
        assert_eq!(get("roofline_scrapes_total"), 2.0);
        assert_eq!(get("roofline_scrape_errors_total"), 1.0);
        assert_eq!(get("roofline_sse_clients"), 1.0);
        drop(guard);
        let parsed = app::domain::prometheus::parse(
            &m.render(&[], &app::domain::gpu::GpuState::NoDriver { reason: String::new() }),
        );
        assert_eq!(
            parsed
                .samples
                .iter()
                .find(|s| s.name == "roofline_sse_clients")
                .unwrap()
                .value,
            0.0
        );
        assert_eq!(
            parsed.samples.iter().filter(|s| s.name == "roofline_engines").count(),
            EngineState::ALL.len()
        );
    }
}
