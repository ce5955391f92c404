//! Sign-in flood (issue 11): N concurrent wrong sign-ins for one name against a real console,
//! while a client reads `/api/engines` as the fleet of other consoles does. Reports the
//! console's peak RSS, how many attempts got as far as a password hash (401) and how many were
//! refused before any work (429), and the `/api/engines` latency during the flood.
//!
//!     cargo bench -p server --bench benches -- signin_flood [--attempts 500]
//!     cargo test -p server --bench benches -- signin_flood --short     # what scripts/test.sh runs
//!
//! `--short` (50 attempts, debug build) only proves the bench works: it exits 1 unless every
//! attempt was answered and the figures were measured.
// Benches panic on a broken setup on purpose (workspace lint: no unwrap elsewhere).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench or test panics on a broken setup, naming it, and reads as one scenario"
)]

use std::time::{Duration, Instant};

use crate::common::{add_user, arg, free_port, lat_cells, rss_mib, start_console, wait_ready, Watch, FLEET_TOKEN};

#[tokio::main]
pub async fn main() {
    let short = std::env::args().any(|a| a == "--short");
    let attempts: usize = arg("--attempts", if short { 50 } else { 500 });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("roofline.toml"),
        format!("[auth]\nfleet_token = \"{FLEET_TOKEN}\"\n"),
    )
    .unwrap();
    add_user(dir.path(), "root", "admin", "correct horse battery staple");
    let port = free_port();
    let mut console = start_console(dir.path(), port);
    let base = format!("http://127.0.0.1:{port}");
    server::tls::install_default_provider();
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(attempts + 8)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    wait_ready(&http, &base).await;
    let idle_rss = rss_mib(console.id());

    // The fleet's view during the flood, and the console's memory.
    let watch = {
        let (http, base) = (http.clone(), base.clone());
        Watch::start(console.id(), move || {
            http.get(format!("{base}/api/engines")).bearer_auth(FLEET_TOKEN)
        })
    };
    let flood_start = Instant::now();
    let statuses = futures::future::join_all((0..attempts).map(|_| {
        let http = http.clone();
        let url = format!("{base}/api/fn/login");
        async move {
            http.post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body("name=root&password=not+the+password+at+all")
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }
    }))
    .await;
    let flood_s = flood_start.elapsed().as_secs_f64();
    // Keep reading a moment after the last answer, then stop.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (peak, lat) = watch.finish().await;
    let _ = console.kill();
    let _ = console.wait();
    let count = |s: u16| statuses.iter().filter(|x| **x == s).count();
    let (hashed, refused, other) = (count(401), count(429), attempts - count(401) - count(429));
    println!("| attempts | flood (s) | reached a hash (401) | refused before work (429) | other | console RSS idle / peak (MiB) | /api/engines p50 / p99 / max during it (ms) |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {attempts} | {flood_s:.2} | {hashed} | {refused} | {other} | {idle_rss:.0} / {peak:.0} | {} |",
        lat_cells(&lat)
    );
    if other > 0 || hashed == 0 || lat.is_empty() || peak <= 0.0 {
        eprintln!("signin_flood: no figures (statuses {statuses:?})");
        std::process::exit(1);
    }
}
