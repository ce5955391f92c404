//! Domain logic against the real captured data in testdata/fixtures (copied from
//! shared/fixtures): engine logs through the startup-failure classifier, metrics bodies
//! through the parser.

use app::domain::prometheus::parse;
use app::domain::startup_failure::{classify, FailureRow};
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn row(name: &str) -> Option<FailureRow> {
    let text = fixture(name);
    classify(text.lines().filter(|l| !l.starts_with('#'))).map(|m| m.row)
}

#[test]
fn real_failure_logs_map_to_their_rows() {
    assert_eq!(row("vllm-oom-load.log"), Some(FailureRow::CudaOomAtLoad));
    assert_eq!(row("vllm-kv-too-small.log"), Some(FailureRow::KvCacheTooSmall));
    assert_eq!(row("vllm-address-in-use.log"), Some(FailureRow::AddressInUse));
    assert_eq!(row("vllm-startup-ok.log"), None);
    assert_eq!(row("sglang-startup-ok.log"), None);
}

#[test]
fn captured_metrics_bodies_parse_without_errors() {
    for (name, must) in [
        ("vllm-v1-metrics.prom", "vllm:kv_cache_usage_perc"),
        ("sglang-metrics.prom", "sglang:token_usage"),
    ] {
        let p = parse(&fixture(name));
        assert!(p.errors.is_empty(), "{name}: {:?}", p.errors);
        assert!(p.samples.iter().any(|s| s.name == must), "{name} lacks {must}");
        assert!(p.samples.len() > 100);
    }
}

#[test]
fn startup_milestones_are_recognised_in_real_logs() {
    use app::domain::phases::StartupPhase;
    for (name, expect) in [
        ("vllm-startup-ok.log", StartupPhase::Ready),
        ("sglang-startup-ok.log", StartupPhase::Ready),
    ] {
        let max = fixture(name).lines().filter_map(StartupPhase::from_log_line).max();
        assert_eq!(max, Some(expect), "{name}");
    }
}
