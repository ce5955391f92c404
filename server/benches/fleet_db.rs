//! Fifty hosts on one PostgreSQL (issue 16): the coordination a fleet of consoles does through
//! the shared database, at scale, with the console's own code (`hosts::runner`: register, the
//! heartbeat, publishing each host's engine rows as they change, following the other hosts'
//! rows every second, the job loop woken by `LISTEN`).
//!
//!     cargo bench -p server --bench benches -- fleet_db [--hosts 50] [--engines 20] [--seconds 60] [--scrape 5]
//!     cargo test -p server --bench benches -- fleet_db --short     # 5 hosts × 4 engines, 5 s
//!
//! The hosts are in this process, each with its own pool (`db::POSTGRES_CONNECTIONS`) and
//! listener, as fifty consoles would hold; their engines are synthetic rows whose figures move
//! every scrape interval (staggered across hosts), and a job does nothing but complete. A
//! requester queues ten jobs a second to random hosts. Measured over the window:
//! - fleet update: from a host's new figures (`scraped_at_ms`) to another host's follow
//!   reading them, on three observing hosts (first, middle, last);
//! - job claim: `claimed_ms − created_ms` of the window's jobs (one clock: this process's);
//! - CPU: this process (all the hosts' loops; per host is that over the host count), and
//!   PostgreSQL's (every `postgres` process, from /proc); its connections to the bench's
//!   database (`pg_stat_activity`).
//!
//! Needs `ROOFLINE_TEST_PG` (an admin URL: `scripts/postgres.sh start DIR` prints one); the
//! bench creates and drops a database of its own. Without it the bench says so and skips
//! (fails with `ROOFLINE_REQUIRE_PG=1`). Figures in `target/fleet-db.json`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench panics on a broken setup, naming it, and reads as one scenario"
)]

use crate::common::{arg, percentile};
use app::domain::engine::{EngineKind, EngineState, EngineStatus};
use server::hosts::{jobs, runner, Identity};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

fn now_ms() -> i64 {
    server::clock::now_ms()
}

/// utime + stime of a process, in seconds.
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rfind(')').map(|i| &stat[i + 2..]).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// CPU seconds of every `postgres` process now (server, its background workers, backends).
fn postgres_cpu() -> f64 {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().into_owned();
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            (comm.trim() == "postgres").then(|| cpu_seconds(&pid))
        })
        .sum()
}

fn rows(host: usize, engines: usize, at_ms: i64) -> Vec<EngineStatus> {
    (0..engines)
        .map(|k| {
            let mut r = EngineStatus::blank(&format!("h{host:02}-e{k:02}"), EngineKind::Vllm, EngineState::Healthy);
            r.port = 8000 + k as u16;
            r.pid = Some(1000 + k as i32);
            r.model_name = "llama-3.1-8b".into();
            r.scraped_at_ms = Some(at_ms);
            r
        })
        .collect()
}

pub fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}

async fn run() {
    use sqlx::{Connection, Executor};
    let short = std::env::args().any(|a| a == "--short");
    let hosts: usize = arg("--hosts", if short { 5 } else { 50 });
    let engines: usize = arg("--engines", if short { 4 } else { 20 });
    let seconds: u64 = arg("--seconds", if short { 5 } else { 60 });
    let scrape: u64 = arg("--scrape", 5);
    let Ok(admin) = std::env::var("ROOFLINE_TEST_PG") else {
        assert!(
            std::env::var("ROOFLINE_REQUIRE_PG").as_deref() != Ok("1"),
            "fleet_db: ROOFLINE_REQUIRE_PG=1 but no ROOFLINE_TEST_PG"
        );
        println!("fleet_db: skipped (no ROOFLINE_TEST_PG: scripts/postgres.sh start DIR prints one)");
        return;
    };
    let db = format!("fleet_bench_{}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    conn.execute(format!("create database {db}").as_str()).await.unwrap();
    let url = format!("{}/{db}", admin.rsplit_once('/').unwrap().0);
    let stale = server::hosts::stale_after_ms(scrape);

    // The hosts: each its own pool, registry row, heartbeat, publisher, follower, job loop.
    let mut feeds = Vec::new();
    let mut follows = Vec::new();
    for h in 0..hosts {
        let pool = server::db::open_postgres(&url, None, server::db::POSTGRES_CONNECTIONS)
            .await
            .unwrap();
        let me = Arc::new(Identity {
            name: format!("bench-{h:02}"),
            url: format!("http://10.0.0.{h}:3000"),
            console_id: format!("console-{h:02}"),
            run: format!("run-{h:02}"),
        });
        runner::join(&pool, &me, &Default::default(), stale).await.unwrap();
        tokio::spawn(runner::heartbeat(pool.clone(), me.clone(), Duration::from_secs(scrape)));
        let (tx, rx) = watch::channel(rows(h, engines, now_ms()));
        tokio::spawn(runner::publish(pool.clone(), me.clone(), rx));
        tokio::spawn(runner::job_loop(pool.clone(), me.clone(), |_job| async {
            jobs::Outcome::done("done")
        }));
        follows.push(runner::follow(pool.clone(), me.clone(), stale));
        feeds.push(tx);
    }
    // Each host's figures move every scrape interval, the hosts staggered across it.
    for (h, tx) in feeds.iter().enumerate() {
        let tx = tx.clone();
        let offset = Duration::from_millis(scrape * 1000 * h as u64 / hosts as u64);
        tokio::spawn(async move {
            tokio::time::sleep(offset).await;
            let mut every = tokio::time::interval(Duration::from_secs(scrape));
            loop {
                every.tick().await;
                if tx.send(rows(h, engines, now_ms())).is_err() {
                    return;
                }
            }
        });
    }
    // Three hosts observe the fleet as its page would.
    let window_open = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let delays: Arc<Mutex<Vec<f64>>> = Arc::default();
    for h in [0, hosts / 2, hosts - 1] {
        let mut rx = follows[h].clone();
        let (delays, open) = (delays.clone(), window_open.clone());
        tokio::spawn(async move {
            let mut seen: HashMap<String, i64> = HashMap::new();
            while rx.changed().await.is_ok() {
                let now = now_ms();
                for r in rx.borrow_and_update().iter() {
                    let Some(at) = r.scraped_at_ms else { continue };
                    if seen.insert(r.profile.clone(), at).is_some_and(|before| before < at)
                        && open.load(std::sync::atomic::Ordering::Relaxed)
                    {
                        delays.lock().unwrap().push((now - at) as f64);
                    }
                }
            }
        });
    }
    // The requester: ten jobs a second to random hosts.
    let requester = server::db::open_postgres(&url, None, 2).await.unwrap();
    let queued: Arc<Mutex<Vec<i64>>> = Arc::default();
    {
        let (requester, queued, open) = (requester.clone(), queued.clone(), window_open.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(100));
            loop {
                every.tick().await;
                let host = format!("bench-{:02}", rand::random::<u32>() as usize % hosts);
                let job = jobs::NewJob {
                    host: &host,
                    profile: "h00-e00",
                    action: app::api::JobAction::Restart,
                    args: &app::api::JobArgs::default(),
                    requested_by: "bench",
                    requested_on: "bench-requester",
                    reason: "",
                };
                if let Ok(id) = jobs::insert(&requester, &job, now_ms()).await {
                    if open.load(std::sync::atomic::Ordering::Relaxed) {
                        queued.lock().unwrap().push(id);
                    }
                }
            }
        });
    }

    let warm = Duration::from_secs(if short { 2 } else { 10 });
    tokio::time::sleep(warm).await;
    let me = std::process::id().to_string();
    let (cpu0, pg0, t0) = (cpu_seconds(&me), postgres_cpu(), Instant::now());
    window_open.store(true, std::sync::atomic::Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    window_open.store(false, std::sync::atomic::Ordering::Relaxed);
    let elapsed = t0.elapsed().as_secs_f64();
    let (cpu, pg_cpu) = ((cpu_seconds(&me) - cpu0) / elapsed, (postgres_cpu() - pg0) / elapsed);
    let connections: i64 = sqlx::query_scalar("select count(*) from pg_stat_activity where datname = $1")
        .bind(&db)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    // Let the window's last jobs finish, then read their claims.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ids = queued.lock().unwrap().clone();
    let mut claims = Vec::new();
    let mut unclaimed = 0;
    for id in &ids {
        match jobs::get(&requester, *id).await.unwrap() {
            Some(j) if j.claimed_ms.is_some() => claims.push((j.claimed_ms.unwrap() - j.created_ms) as f64),
            _ => unclaimed += 1,
        }
    }
    claims.sort_by(f64::total_cmp);
    let mut delays = delays.lock().unwrap().clone();
    delays.sort_by(f64::total_cmp);
    let report = serde_json::json!({
        "hosts": hosts,
        "engines_per_host": engines,
        "scrape_interval_s": scrape,
        "window_s": elapsed,
        "fleet_update_ms": {"n": delays.len(), "p50": percentile(&delays, 0.5), "p99": percentile(&delays, 0.99), "max": delays.last()},
        "job_claim_ms": {"n": claims.len(), "unclaimed": unclaimed, "p50": percentile(&claims, 0.5), "p99": percentile(&claims, 0.99), "max": claims.last()},
        "bench_process_cores": cpu,
        "cores_per_host": cpu / hosts as f64,
        "postgres_cores": pg_cpu,
        "postgres_connections": connections,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fleet-db.json");
    std::fs::write(&out, report.to_string()).ok();
    assert!(!delays.is_empty(), "fleet_db: no fleet update was observed");
    assert!(
        !claims.is_empty() && unclaimed == 0,
        "fleet_db: {unclaimed} of {} jobs never claimed",
        ids.len()
    );
    drop(follows);
    drop(feeds);
    conn.execute(format!("drop database {db} with (force)").as_str())
        .await
        .ok();
}
