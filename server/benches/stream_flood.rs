//! Event-stream and journal-export floods (issue 29) against a real console, while another
//! user reads `/api/engines`. Reports the console's RSS (idle and peak) and that user's
//! latency during each flood.
//!
//! - Streams: one viewer signs in `--sessions` times and opens `--streams` engine streams per
//!   session, never reading them; then the engine's log grows by `--log-mib` MiB at once.
//!   Before issue 29 every stream was let in and each buffered up to 16 events of 1 MiB of log;
//!   before issue 42 one account's sessions together could hold all 256 (now 32).
//! - Exports: `--entries` journal entries of 2 KB each; `--exports` exports at once, read
//!   slowly. Before, each built the whole journal (up to 100,000 entries) in memory; since
//!   issue 42 one account runs one export at a time, so the others are refused.
//!
//! Run:
//!
//!     cargo bench -p server --bench benches -- stream_flood
//!     cargo test -p server --bench benches -- stream_flood --short     # what scripts/test.sh runs
//!
//! `--short` (fewer sessions, entries and log, debug build) proves the bench works: it exits
//! 1 unless the bounds held (streams past the caps refused, exports past two refused, every
//! accepted export complete) and the figures were measured.
// Benches panic on a broken setup on purpose (workspace lint: no unwrap elsewhere).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench or test panics on a broken setup, naming it, and reads as one scenario"
)]

use std::time::Duration;

use crate::common::{add_user, arg, free_port, lat_cells, rss_mib, sign_in, start_console, wait_ready, Watch};

const PASSWORD: &str = "correct horse battery staple";

#[tokio::main]
pub async fn main() {
    let short = std::env::args().any(|a| a == "--short");
    let sessions: usize = arg("--sessions", if short { 3 } else { 20 });
    let per_session: usize = arg("--streams", 20);
    let log_mib: usize = arg("--log-mib", if short { 8 } else { 64 });
    let entries: usize = arg("--entries", if short { 1_000 } else { 20_000 });
    let exports: usize = arg("--exports", 4);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let bin = env!("CARGO_BIN_EXE_roofline");
    add_user(data, "vera", "viewer", PASSWORD);
    add_user(data, "olga", "viewer", PASSWORD);
    std::fs::create_dir_all(data.join("models/m")).unwrap();
    std::fs::write(data.join("models/m/config.json"), "{}").unwrap();
    std::fs::write(
        data.join("roofline.toml"),
        "models_root = \"models\"\nstate_dir = \"state\"\n\n[engines.sim-vllm]\nkind = \"vllm\"\nsimulator = true\n",
    )
    .unwrap();
    let profile = data.join("p.env");
    std::fs::write(
        &profile,
        format!(
            "ENGINE=sim-vllm\nMODEL={}\nPORT=18999\n",
            data.join("models/m").display()
        ),
    )
    .unwrap();
    let out = std::process::Command::new(bin)
        .args([
            "--data",
            data.to_str().unwrap(),
            "profile",
            "import",
            profile.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    {
        let dd = server::config::DataDir::open(data).unwrap();
        let pool = server::db::open(&dd.db_path()).await.unwrap();
        let j = server::journal::Journal::new(pool.clone()).with_anchor(data.join("journal.head"));
        let bulk = "x".repeat(2_000);
        for i in 0..entries {
            j.append(
                "ops",
                "note",
                "bulk",
                &format!("entry {i}"),
                serde_json::json!({"bulk": bulk}),
            )
            .await
            .unwrap();
        }
        pool.close().await;
    }
    let port = free_port();
    let mut console = start_console(data, port);
    let base = format!("http://127.0.0.1:{port}");
    server::tls::install_default_provider();
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    wait_ready(&http, &base).await;
    // Every sign-in first: a password hash (argon2id) takes tens of MiB that the allocator
    // keeps, which is not what this bench measures.
    let olga = sign_in(&http, &base, "olga", PASSWORD).await;
    let mut cookies = Vec::new();
    for _ in 0..=sessions {
        cookies.push(sign_in(&http, &base, "vera", PASSWORD).await);
    }
    let vera = cookies.pop().unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pid = console.id();
    let idle = rss_mib(pid);

    // Streams opened and abandoned by one viewer, then a burst of log.
    let reads = {
        let (http, base, olga) = (http.clone(), base.clone(), olga.clone());
        move || http.get(format!("{base}/api/engines")).header("cookie", &olga)
    };
    let watch = Watch::start(pid, reads.clone());
    let mut held = Vec::new();
    let (mut accepted, mut refused, mut other) = (0usize, 0usize, 0usize);
    for cookie in &cookies {
        for _ in 0..per_session {
            // A client of its own per stream: each holds its connection and never reads.
            let c = reqwest::Client::builder().no_proxy().build().unwrap();
            match c
                .get(format!("{base}/api/events/engines/p"))
                .header("cookie", cookie)
                .send()
                .await
            {
                Ok(r) if r.status() == 200 => {
                    accepted += 1;
                    held.push((c, r));
                }
                Ok(r) if r.status() == 429 => refused += 1,
                _ => other += 1,
            }
        }
    }
    let log = data.join("state/p/engine.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let line = format!("INFO {} engine log line of a busy engine\n", "y".repeat(120));
        for _ in 0..(log_mib << 20) / line.len() {
            f.write_all(line.as_bytes()).unwrap();
        }
    }
    tokio::time::sleep(Duration::from_secs(if short { 3 } else { 10 })).await;
    let (stream_peak, stream_lat) = watch.finish().await;
    drop(held);

    // Parallel exports, read slowly.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before_exports = rss_mib(pid);
    let watch = Watch::start(pid, reads);
    let results = futures::future::join_all((0..exports).map(|_| {
        let (base, vera) = (base.clone(), vera.clone());
        async move {
            let c = reqwest::Client::builder().no_proxy().build().unwrap();
            let r = c
                .get(format!("{base}/api/journal.json"))
                .header("cookie", &vera)
                .send()
                .await
                .ok()?;
            let status = r.status().as_u16();
            let mut bytes = 0usize;
            let mut body = r.bytes_stream();
            use futures::StreamExt;
            let mut text = Vec::new();
            while let Some(Ok(chunk)) = body.next().await {
                bytes += chunk.len();
                text.extend_from_slice(&chunk);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let n = serde_json::from_slice::<Vec<serde_json::Value>>(&text)
                .map(|v| v.len())
                .ok();
            Some((status, bytes, n))
        }
    }))
    .await;
    let (export_peak, export_lat) = watch.finish().await;
    let _ = console.kill();
    let _ = console.wait();

    let ok_exports: Vec<_> = results.iter().flatten().filter(|r| r.0 == 200).collect();
    let refused_exports = results.iter().flatten().filter(|r| r.0 == 429).count();
    let complete = ok_exports.iter().all(|r| r.2.is_some_and(|n| n >= entries));
    println!("| flood | attempted | accepted | refused (429) | console RSS before / peak (MiB) | other user's /api/engines p50 / p99 / max (ms) |");
    println!("|---|---:|---:|---:|---:|---:|");
    println!(
        "| {sessions} sessions × {per_session} engine streams, unread, then {log_mib} MiB of log | {} | {accepted} | {refused} | {idle:.0} / {stream_peak:.0} | {} |",
        sessions * per_session,
        lat_cells(&stream_lat)
    );
    println!(
        "| {exports} journal exports at once ({entries} entries of 2 KB, {:.0} MiB each) | {exports} | {} | {refused_exports} | {before_exports:.0} / {export_peak:.0} | {} |",
        ok_exports.first().map_or(0.0, |r| r.1 as f64 / (1 << 20) as f64),
        ok_exports.len(),
        lat_cells(&export_lat)
    );
    use server::web::streams::{PER_ACCOUNT, PER_SESSION, TOTAL};
    let caps_held = accepted <= TOTAL.min(sessions * PER_SESSION).min(PER_ACCOUNT)
        && (sessions * per_session <= accepted || refused > 0);
    // One account exports one at a time.
    if other > 0 || !caps_held || ok_exports.len() > 1 || !complete || stream_lat.is_empty() || stream_peak <= 0.0 {
        eprintln!("stream_flood: bounds not held or no figures (accepted {accepted}, refused {refused}, other {other}, exports {results:?})");
        std::process::exit(1);
    }
}
