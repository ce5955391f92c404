//! Fleet scale: a console scraping N bare engine endpoints every second, with its CPU and the
//! delay from a scrape to a browser's event stream.
//!
//!     cargo bench -p server --bench benches -- fleet_scale [--engines 1000] [--seconds 30]
//!     cargo test -p server --bench benches -- fleet_scale --short     # what scripts/test.sh runs
//!
//! `--short` (50 engines, 2 s warm-up, 3 s window, debug build) only proves the bench still
//! works: it exits 1 unless it measured scrapes, stream messages and delays. `--stream PATH`
//! points the client elsewhere (the test run uses it to show that a broken bench fails).
//!
//! The endpoints are stand-ins in this process (one axum server per port on 127.0.0.1, each
//! answering `/health`, `/v1/models`, `/v1/completions` and `/metrics` with the captured vLLM
//! body, 55 KB), so the console does real HTTP and real parsing. The console is the release
//! `roofline` binary with `scrape_interval_s = 1` and N `[[fleet]]` engines. An event-stream
//! client signs in as a real account (created with `roofline user add`, password on stdin) and
//! reads the fleet stream with its session cookie, as the fleet page does; for every row whose `scraped_at_ms`
//! is new it records now − scraped_at_ms. Console CPU is from /proc/PID/stat over the window.
//! Stand-ins, client and console share the machine's cores.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench or test panics on a broken setup, naming it, and reads as one scenario"
)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::common::{add_user, arg, arg_text, free_port, sign_in, start_console, FLEET_TOKEN};

/// The bench's account (a viewer: the fleet page needs no more).
const USER: &str = "bench";
const PASSWORD: &str = "fleet bench passphrase";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// utime + stime of a process, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rfind(')').map(|i| &stat[i + 2..]).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of the stat line; `after` starts at field 3.
    (ticks(11) + ticks(12)) / 100.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank]
}

async fn stand_in(body: &'static str) -> u16 {
    use axum::routing::{get, post};
    let app = axum::Router::new()
        .route("/health", get(|| async { "" }))
        .route(
            "/metrics",
            get(move || async move { ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], body) }),
        )
        .route(
            "/v1/models",
            get(|| async { axum::Json(serde_json::json!({"object": "list", "data": [{"id": "m", "object": "model"}]})) }),
        )
        .route(
            "/v1/completions",
            post(|| async {
                axum::Json(serde_json::json!({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": "x", "finish_reason": "length"}]}))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

#[tokio::main]
pub async fn main() {
    let short = std::env::args().any(|a| a == "--short");
    let engines: usize = arg("--engines", if short { 50 } else { 1000 });
    let seconds: u64 = arg("--seconds", if short { 3 } else { 30 });
    let warmup: u64 = arg("--warmup", if short { 2 } else { 10 });
    let stream = arg_text("--stream").unwrap_or_else(|| app::api::FLEET_STREAM.to_string());
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/vllm-v1-metrics.prom");
    let body: &'static str = Box::leak(std::fs::read_to_string(fixture).unwrap().into_boxed_str());

    let mut ports = Vec::with_capacity(engines);
    for _ in 0..engines {
        ports.push(stand_in(body).await);
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config = format!("scrape_interval_s = 1\n\n[auth]\nfleet_token = \"{FLEET_TOKEN}\"\n");
    for (i, port) in ports.iter().enumerate() {
        config.push_str(&format!(
            "\n[[fleet]]\nname = \"e{i:04}\"\nengine = \"http://127.0.0.1:{port}\"\n"
        ));
    }
    std::fs::write(dir.path().join("roofline.toml"), config).unwrap();
    // A real account, created the way an operator would (password on stdin, never argv).
    add_user(dir.path(), USER, "viewer", PASSWORD);
    let console_port = free_port();
    let mut console = start_console(dir.path(), console_port);
    let base = format!("http://127.0.0.1:{console_port}");
    server::tls::install_default_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();

    // Wait for every engine to be scraped once.
    let t0 = Instant::now();
    loop {
        let rows: Option<Vec<serde_json::Value>> = async {
            http.get(format!("{base}/api/engines"))
                .bearer_auth(FLEET_TOKEN)
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()
        }
        .await;
        let live = rows
            .map(|r| {
                r.iter()
                    .filter(|e| e["state"] == "healthy" && !e["live"].is_null())
                    .count()
            })
            .unwrap_or(0);
        if live == engines {
            break;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            let _ = console.kill();
            panic!("only {live} of {engines} engines came up in 120 s");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "all {engines} engines live after {:.1} s; warming up {warmup} s",
        t0.elapsed().as_secs_f64()
    );

    // The console's own counters, read with our parser.
    let counter = |text: &str, name: &str| -> f64 {
        app::domain::prometheus::parse(text)
            .samples
            .iter()
            .find(|s| s.name == name)
            .map_or(0.0, |s| s.value)
    };
    let console_metrics = || async {
        http.get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };

    // The browser's view: the fleet event stream, signed in.
    let cookie = sign_in(&http, &base, USER, PASSWORD).await;
    let mut resp = http
        .get(format!("{base}{stream}"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    if !resp.status().is_success() {
        let _ = console.kill();
        eprintln!("fleet_scale: {stream} answered HTTP {}", resp.status());
        std::process::exit(1);
    }
    let mut seen: HashMap<String, i64> = HashMap::new();
    let mut delays: Vec<f64> = Vec::new();
    let mut buf = String::new();
    let start = Instant::now();
    let mut window: Option<(Instant, f64, f64, String)> = None;
    let mut messages = 0u64;
    while start.elapsed() < Duration::from_secs(warmup + seconds) {
        if window.is_none() && start.elapsed() >= Duration::from_secs(warmup) {
            let m = console_metrics().await;
            window = Some((
                Instant::now(),
                cpu_seconds(console.id()),
                cpu_seconds(std::process::id()),
                m,
            ));
            delays.clear();
            messages = 0;
        }
        let chunk = match tokio::time::timeout(Duration::from_secs(5), resp.chunk()).await {
            Ok(Ok(Some(c))) => c,
            _ => break,
        };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            let received = now_ms();
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect::<Vec<_>>()
                .join("\n");
            let Ok(rows) = serde_json::from_str::<Vec<serde_json::Value>>(&data) else {
                continue;
            };
            messages += 1;
            for r in rows {
                let (Some(node), Some(at)) = (r["node"].as_str(), r["scraped_at_ms"].as_i64()) else {
                    continue;
                };
                if seen.get(node) != Some(&at) {
                    seen.insert(node.to_string(), at);
                    delays.push((received - at) as f64);
                }
            }
        }
    }
    let Some((w0, console_cpu0, own_cpu0, metrics0)) = window else {
        let _ = console.kill();
        eprintln!("fleet_scale: the stream ended before the measurement window ({messages} messages)");
        std::process::exit(1);
    };
    let elapsed = w0.elapsed().as_secs_f64();
    let console_cores = (cpu_seconds(console.id()) - console_cpu0) / elapsed;
    let own_cores = (cpu_seconds(std::process::id()) - own_cpu0) / elapsed;
    let metrics1 = console_metrics().await;
    let _ = console.kill();
    let _ = console.wait();
    delays.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let rate = |name: &str| (counter(&metrics1, name) - counter(&metrics0, name)) / elapsed;
    let scrape_rate = rate("roofline_scrapes_total");
    let error_rate = rate("roofline_scrape_errors_total");
    println!("| engines | window (s) | scrapes/s | scrape errors/s | console CPU (cores) | stand-ins + client CPU (cores) | stream messages/s | scrape→stream delay p50 / p99 / max (ms) |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {engines} | {elapsed:.0} | {scrape_rate:.0} | {error_rate:.1} | {console_cores:.2} | {own_cores:.2} | {:.1} | {:.0} / {:.0} / {:.0} |",
        messages as f64 / elapsed,
        percentile(&delays, 0.5),
        percentile(&delays, 0.99),
        delays.last().copied().unwrap_or(f64::NAN),
    );
    // A bench that measured nothing has stopped working: fail, so the test run notices.
    if scrape_rate <= 0.0 || messages == 0 || delays.is_empty() {
        eprintln!(
            "fleet_scale: no figures (scrapes/s {scrape_rate:.1}, {messages} messages, {} delays)",
            delays.len()
        );
        std::process::exit(1);
    }
}
