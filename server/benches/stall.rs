//! The stall detector against the cases that fool detectors: time to call a real hang hung, and
//! false alarms on a busy or slow but healthy engine.
//!
//!     cargo bench -p server --bench benches -- stall                 # full: a 60 s prefill, 1,000-request burst
//!     cargo test -p server --bench benches -- stall --short       # what scripts/test.sh runs (25 s prefill)
//!
//! Each scenario is a real simulated vLLM process (`roofline sim vllm`, 8 sequences at once) on
//! 127.0.0.1, all running at the same time, watched by the console's own collector
//! (`monitor::Collector`: the scrape every `--scrape` seconds, 5 by default as in the host
//! config, the one-token probe on idle engines, the flat-counter check) ticking once a second
//! as the console's monitor does:
//!
//! - `hang-busy`: four long streams running, then the `hang` fault (steps stop, `/health` stays
//!   200): seconds from the fault to `hung`;
//! - `hang-idle`: no traffic, then `hang`: seconds to `hung` (the probe's case);
//! - `long-prefill`: one prompt whose prefill takes a minute (`long-prefill`), no token meanwhile;
//! - `burst`: 1,000 requests at once against 8 sequence slots;
//! - `cold-start`: the first step takes 12 s (`slow-warmup`).
//!
//! The last three must never be called hung. `--short` proves the bench runs; the figures come
//! from the full run and go in BENCHMARKS.md.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench or test panics on a broken setup, naming it, and reads as one scenario"
)]

use app::domain::engine::{EngineKind, EngineState, EngineStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "vocab_size": 128256}"#;

use crate::common::{arg, free_port};

/// A simulated engine in a process group of its own, killed whole when dropped: like vLLM's,
/// the simulator's EngineCore outlives a killed API server (five were left running after
/// every short run before).
struct Engine {
    child: std::process::Child,
    port: u16,
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn engine(model: &std::path::Path, faults: &[&str], env: &[(&str, String)]) -> Engine {
    let port = free_port();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_roofline"));
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.args(["sim", "vllm", "serve"])
        .arg(model)
        .args([
            "--served-model-name",
            "m",
            "--port",
            &port.to_string(),
            "--max-num-seqs",
            "8",
        ])
        .env("ROOFLINE_SIM_STARTUP_S", "0.2")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for f in faults {
        cmd.args(["--sim-fault", f]);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    Engine {
        child: cmd.spawn().unwrap(),
        port,
    }
}

fn http() -> reqwest::Client {
    server::tls::install_default_provider();
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(300))
        .build()
        .unwrap()
}

async fn healthy(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(r) = http().get(format!("http://127.0.0.1:{port}/health")).send().await {
            if r.status().is_success() {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("engine on {port} never became healthy");
}

fn send(port: u16, n: usize, prompt_chars: usize, max_tokens: u32) {
    for i in 0..n {
        tokio::spawn(async move {
            let body = serde_json::json!({"model": "m", "prompt": format!("{i} {}", "x".repeat(prompt_chars)), "max_tokens": max_tokens, "stream": true});
            if let Ok(r) = http()
                .post(format!("http://127.0.0.1:{port}/v1/completions"))
                .json(&body)
                .send()
                .await
            {
                let _ = r.bytes().await;
            }
        });
    }
}

async fn set_fault(port: u16, fault: &str) {
    let r = http()
        .post(format!("http://127.0.0.1:{port}/sim/faults"))
        .json(&serde_json::json!({"enable": [fault]}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
}

fn row(name: &str, port: u16) -> EngineStatus {
    EngineStatus {
        host: "127.0.0.1".into(),
        port,
        model_name: "m".into(),
        ..EngineStatus::blank(name, EngineKind::Vllm, EngineState::Healthy)
    }
}

/// What one scenario gave: seconds to `hung` after the trigger, and ticks called hung that
/// should not have been.
struct Outcome {
    name: &'static str,
    detect_s: Option<f64>,
    false_alarms: usize,
    should_hang: bool,
}

#[tokio::main]
pub async fn main() {
    let short = std::env::args().any(|a| a == "--short");
    let scrape = Duration::from_secs_f64(arg("--scrape", 5.0));
    let prefill_s = if short { 25.0 } else { 60.0 };
    let burst = if short { 200 } else { 1000 };
    // The watch ends once both hangs are called and the prefill is over; the limit is only a
    // backstop, generous enough that a starved 2-core CI host still sees a busy hang (20 s flat
    // plus up to one scrape, plus slow ticks).
    let watch_s = if short { 70.0 } else { 90.0 };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), CONFIG).unwrap();
    let model = dir.path();

    let hang_busy = engine(model, &[], &[]);
    let hang_idle = engine(model, &[], &[]);
    let prefill = engine(
        model,
        &["long-prefill"],
        &[("ROOFLINE_SIM_PREFILL_S", prefill_s.to_string())],
    );
    let bursty = engine(model, &[], &[]);
    let cold = engine(model, &["slow-warmup"], &[("ROOFLINE_SIM_WARMUP_S", "12".into())]);
    let all = [&hang_busy, &hang_idle, &prefill, &bursty, &cold];
    for e in all {
        healthy(e.port).await;
    }
    let names = ["hang-busy", "hang-idle", "long-prefill", "burst", "cold-start"];
    let mut rows: Vec<EngineStatus> = all.iter().zip(names).map(|(e, n)| row(n, e.port)).collect();
    let mut collector = server::monitor::Collector::new(
        Arc::new(server::monitor::console_metrics::ConsoleMetrics::default()),
        http(),
        scrape,
        None,
    );
    let t0 = Instant::now();
    let trigger_at = 10.0;
    let mut triggered: Option<Instant> = None;
    let mut detect: [Option<f64>; 2] = [None, None];
    let mut alarms = [0usize; 5];
    let (mut ticks, mut slowest_tick) = (0usize, 0.0f64);
    // The healthy-but-slow cases start at 5 s; the hangs at 10 s.
    send(prefill.port, 1, 4000, 8);
    send(bursty.port, burst, 200, 16);
    send(cold.port, 1, 200, 16);
    send(hang_busy.port, 4, 200, 100_000);
    loop {
        let elapsed = t0.elapsed().as_secs_f64();
        if elapsed >= watch_s || (detect.iter().all(Option::is_some) && elapsed >= prefill_s + 10.0) {
            break;
        }
        if triggered.is_none() && elapsed >= trigger_at {
            set_fault(hang_busy.port, "hang").await;
            set_fault(hang_idle.port, "hang").await;
            triggered = Some(Instant::now());
        }
        for r in rows.iter_mut() {
            r.state = EngineState::Healthy;
            r.note = None;
        }
        let tick = Instant::now();
        collector.enrich(&mut rows, server::monitor::local_base).await;
        ticks += 1;
        slowest_tick = slowest_tick.max(tick.elapsed().as_secs_f64());
        for (i, r) in rows.iter().enumerate() {
            let hung = r.state == EngineState::Hung;
            match (i, triggered) {
                (0 | 1, Some(t)) if hung && detect[i].is_none() => detect[i] = Some(t.elapsed().as_secs_f64()),
                (0 | 1, None) if hung => alarms[i] += 1,
                (2..=4, _) if hung => alarms[i] += 1,
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let outcomes: Vec<Outcome> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Outcome {
            name,
            detect_s: detect.get(i).copied().flatten(),
            false_alarms: alarms[i],
            should_hang: i < 2,
        })
        .collect();
    println!(
        "stall detector: scrape every {:.0} s, flat for {:.0} s, probe on idle engines every {} s{}",
        scrape.as_secs_f64(),
        app::domain::stall::FLAT_S,
        server::monitor::PROBE_INTERVAL.as_secs(),
        if short { " (short run)" } else { "" }
    );
    println!("| scenario | time to detect | false alarms (ticks called hung) |");
    println!("|---|---|---|");
    for o in &outcomes {
        println!(
            "| {} | {} | {} |",
            o.name,
            match (o.should_hang, o.detect_s) {
                (true, Some(s)) => format!("{s:.1} s"),
                (true, None) => "not detected".into(),
                (false, _) => "— (must not be called hung)".into(),
            },
            o.false_alarms
        );
    }
    let missed = outcomes.iter().any(|o| o.should_hang && o.detect_s.is_none());
    let cried = outcomes.iter().any(|o| o.false_alarms > 0);
    if missed || cried {
        // Say what the collector last saw, so a failure on a CI host explains itself.
        eprintln!(
            "{ticks} ticks in {:.1} s, slowest {slowest_tick:.1} s",
            t0.elapsed().as_secs_f64()
        );
        for r in &rows {
            eprintln!(
                "{}: {:?}, note {:?}, metrics {:?}, probe {:?} ms, live {:?}",
                r.profile, r.state, r.note, r.metrics_note, r.probe_ms, r.live
            );
        }
        eprintln!("stall bench: a hang was missed or a healthy engine called hung");
        std::process::exit(1);
    }
}
