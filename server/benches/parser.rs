//! Prometheus text parser throughput: ours against two published crates that keep `vllm:`
//! names (see DESIGN's ecosystem notes), on the captured vLLM and SGLang bodies, in one run.
//!
//!     cargo bench -p server --bench benches -- parser
//!     cargo test -p server --bench benches -- parser --short     # what scripts/test.sh runs
//!
//! Each parser runs for about two seconds per body after a warm-up; the figure is the median
//! of five such rounds, in MB/s of exposition text.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench or test panics on a broken setup, naming it, and reads as one scenario"
)]

use std::time::{Duration, Instant};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures")
        .join(name);
    std::fs::read_to_string(path).expect("fixture")
}

/// Runs `f` repeatedly for about `budget`; returns MB/s.
fn rate(body: &str, budget: Duration, f: &ParseFn) -> f64 {
    let mut n = 0u64;
    let t0 = Instant::now();
    while t0.elapsed() < budget {
        std::hint::black_box(f(std::hint::black_box(body)));
        n += 1;
    }
    (body.len() as f64 * n as f64) / t0.elapsed().as_secs_f64() / 1e6
}

/// A parser under test: the body in, how many items it returned out.
type ParseFn = dyn Fn(&str) -> usize;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

pub fn main() {
    // `--short` (what scripts/test.sh runs, also `--quick`): a few milliseconds per parser,
    // only to prove the bench still runs and produces its table.
    let quick = std::env::args().any(|a| a == "--quick" || a == "--short");
    let budget = Duration::from_millis(if quick { 50 } else { 400 });
    let parsers: [(&str, &ParseFn); 3] = [
        ("roofline (app::domain::prometheus)", &|b| {
            app::domain::prometheus::parse(b).samples.len()
        }),
        ("prom_text_format_parser 0.1.0", &|b| {
            prom_text_format_parser::parse_scrape(b).0.len()
        }),
        ("openmetrics-parser 0.5.1 (prometheus)", &|b| {
            openmetrics_parser::prometheus::parse_prometheus(b)
                .map(|e| e.families.len())
                .unwrap_or(0)
        }),
    ];
    println!("| body | parser | what it returned | MB/s | vs roofline |");
    println!("|---|---|---|---:|---:|");
    for name in ["vllm-v1-metrics.prom", "sglang-metrics.prom"] {
        let body = fixture(name);
        let mut ours = 0.0;
        for (i, (label, f)) in parsers.iter().enumerate() {
            let got = f(&body);
            let what = match i {
                0 => format!("{got} samples"),
                1 => format!("{got} metrics"),
                _ if got == 0 => "parse error".to_string(),
                _ => format!("{got} families"),
            };
            for _ in 0..2 {
                rate(&body, budget / 4, *f);
            }
            let mbs = median((0..5).map(|_| rate(&body, budget, *f)).collect());
            if i == 0 {
                ours = mbs;
                // Our parser must read the fixture: a bench of a parser that returns nothing
                // measures nothing.
                if got == 0 || mbs.is_nan() || mbs <= 0.0 {
                    eprintln!("parser bench: roofline parsed {got} samples of {name} at {mbs} MB/s");
                    std::process::exit(1);
                }
            }
            println!(
                "| {name} ({} KB) | {label} | {what} | {mbs:.1} | {:.1}x |",
                body.len() / 1024,
                ours / mbs
            );
        }
    }
}
