//! Every row of the incident runbook's tables, end to end: a simulator fault is injected, then
//! `roofline triage --profile NAME --json` captures evidence and must name that row first.
//! Each case is named after its row so a failure says which one.

use crate::common::*;
use std::time::Duration;

/// Runs the triage (blocking, in a thread) and returns the primary rule and the JSON.
async fn triage(env: &Env, profile: &str, extra: &[&str]) -> (String, serde_json::Value) {
    triage_with(env, profile, extra, &[]).await
}

/// The triage with extra environment (a GPU recording).
async fn triage_with(env: &Env, profile: &str, extra: &[&str], vars: &[(&str, String)]) -> (String, serde_json::Value) {
    let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let mut args = vec!["triage", "--profile", profile, "--window", "6", "--json"];
    args.extend_from_slice(extra);
    let args: Vec<String> = args.into_iter().map(str::to_string).collect();
    let data = env.data().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(BIN)
            .arg("--data")
            .arg(&data)
            .args(&args)
            .env("LANG", "C")
            .envs(vars)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("triage output is JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let rule = v["diagnosis"]["findings"][0]["rule"]
        .as_str()
        .unwrap_or("none")
        .to_string();
    (rule, v)
}

/// Sends `per_wave` streaming requests every 500 ms until dropped.
fn waves(
    port: u16,
    per_wave: usize,
    prompt_chars: usize,
    max_tokens: u32,
    same_prefix: bool,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for wave in 0.. {
            for i in 0..per_wave {
                let prompt = if same_prefix {
                    format!(
                        "{} {wave}-{i}",
                        "You are a helpful assistant. ".repeat(prompt_chars / 29 + 1)
                    )
                } else {
                    format!("{wave}-{i} {}", "x".repeat(prompt_chars))
                };
                tokio::spawn(stream_completion(port, prompt, max_tokens));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}

fn assert_row(row: &str, got: &str, v: &serde_json::Value) {
    assert_eq!(
        got,
        row,
        "row {row}: diagnosis {} steps {} points {}",
        serde_json::to_string_pretty(&v["diagnosis"]["findings"]).unwrap(),
        v["diagnosis"]["steps"],
        v["evidence"]["points"]
    );
    let evidence = &v["diagnosis"]["findings"][0]["evidence"];
    assert!(
        evidence.as_array().is_some_and(|e| !e.is_empty()),
        "row {row} cites evidence"
    );
}

/// A profile that fails to start with `fault`; the triage must name `row`.
async fn failed_start(row: &str, fault: &str) {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("s", port, &format!("ENV_ROOFLINE_SIM_FAULT={fault}\n"));
    let out = env.run(&["serve", "--profile", "s"]);
    assert_eq!(out.status.code(), Some(1), "row {row}: the start fails");
    let (rule, v) = triage(&env, "s", &[]).await;
    assert_row(row, &rule, &v);
}

#[tokio::test(flavor = "multi_thread")]
async fn startup_and_oom_at_start_rows() {
    for (row, fault) in [
        ("oom-start-weights", "oom-load"),
        ("oom-start-kv", "kv-too-small"),
        ("start-gpu-memory-taken", "gpu-memory-taken"),
        ("start-address-in-use", "address-in-use"),
        ("start-incomplete-weights", "missing-config"),
        ("start-unsupported-arch", "unsupported-arch"),
        ("start-driver-mismatch", "driver-mismatch"),
    ] {
        failed_start(row, fault).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn row_dead() {
    let env = Env::new();
    let port = free_port();
    env.sglang_profile("d", port, "");
    let pid = env.serve_ok("d")["pid"].as_i64().unwrap();
    set_fault(port, "crash").await;
    eventually(Duration::from_secs(10), async || (!pid_alive(pid)).then_some(())).await;
    let (rule, v) = triage(&env, "d", &[]).await;
    assert_row("dead", &rule, &v);
    // Restart is among the actions for a dead engine; the incident is stored for the console.
    let actions = v["diagnosis"]["findings"][0]["actions"].to_string();
    assert!(actions.contains("restart") && actions.contains("serve"), "{actions}");
    assert!(v["incident"].as_i64().is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn row_hung() {
    let (env, port) = Env::serving_vllm("h", "");
    set_fault(port, "hang").await;
    let (rule, v) = triage(&env, "h", &[]).await;
    assert_row("hung", &rule, &v);
}

#[tokio::test(flavor = "multi_thread")]
async fn row_oom_under_load() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("o", port, "ENV_ROOFLINE_SIM_FAULT=oom-under-load\n");
    let pid = env.serve_ok("o")["pid"].as_i64().unwrap();
    let _long = load(port, 1, 8000, 4);
    eventually(Duration::from_secs(10), async || (!pid_alive(pid)).then_some(())).await;
    let (rule, v) = triage(&env, "o", &[]).await;
    assert_row("oom-under-load", &rule, &v);
}

#[tokio::test(flavor = "multi_thread")]
async fn row_kv_exhausted() {
    let (env, port) = Env::serving_vllm("k", "ENV_ROOFLINE_SIM_GPU_GIB=24\n");
    set_fault(port, "kv-exhaustion").await;
    let w = waves(port, 6, 2000, 400, false);
    let (rule, v) = triage(&env, "k", &[]).await;
    w.abort();
    assert_row("kv-exhausted", &rule, &v);
    // A queue is not fixed by a restart: the row never offers one.
    assert!(!v["diagnosis"]["findings"][0]["actions"].to_string().contains("restart"));
}

#[tokio::test(flavor = "multi_thread")]
async fn row_seq_capped() {
    let env = Env::new();
    let port = free_port();
    env.profile(
        "q",
        &format!(
            "ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nMAX_RUNNING_REQUESTS=2\nPORT={port}\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n",
            env.model().display()
        ),
    );
    env.serve_ok("q");
    let w = waves(port, 4, 100, 400, false);
    let (rule, v) = triage(&env, "q", &[]).await;
    w.abort();
    assert_row("seq-capped", &rule, &v);
}

#[tokio::test(flavor = "multi_thread")]
async fn row_preemptions() {
    let (env, port) = Env::serving_vllm("p", "");
    set_fault(port, "preemption-storm").await;
    let w = waves(port, 3, 200, 200, false);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (rule, v) = triage(&env, "p", &[]).await;
    w.abort();
    // Preemptions come with a growing queue on the same load; the row must hold either way.
    let rules = v["diagnosis"]["findings"].to_string();
    assert!(
        rule == "preemptions" || rules.contains("\"preemptions\""),
        "row preemptions: {rules}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn row_prefix_miss_and_tpot_neighbor() {
    // Prefix miss: a shared system prompt hits the cache, then the cache stops hitting
    // between the second and third scrape of the window. Chunked prefill of 512 tokens a step
    // makes an uncached 6k-token prompt take visibly longer, as on a real engine.
    let (env, port) = Env::serving_vllm("x", "MAX_BATCHED_TOKENS=512\n");
    let w = waves(port, 2, 24000, 8, true);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let flip = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(3300)).await;
        set_fault(port, "prefix-cache-miss").await;
    });
    let (rule, v) = triage(&env, "x", &[]).await;
    w.abort();
    flip.await.unwrap();
    assert_row("prefix-miss", &rule, &v);

    // TPOT: decode slows down four times at the same traffic.
    let (env, port) = Env::serving_vllm("t", "");
    let w = waves(port, 1, 50, 60, false);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let flip = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(3300)).await;
        set_fault(port, "tpot-slowdown").await;
    });
    let (rule, v) = triage(&env, "t", &[]).await;
    w.abort();
    flip.await.unwrap();
    assert_row("tpot-neighbor", &rule, &v);
}

#[tokio::test(flavor = "multi_thread")]
async fn row_proxy_parser() {
    let (env, port) = Env::serving_vllm("r", "");
    set_fault(port, "broken-tool-parser").await;
    let (rule, v) = triage(&env, "r", &["--clients-see-errors"]).await;
    assert_row("proxy-parser", &rule, &v);
    assert!(v["diagnosis"]["findings"][0]["actions"].to_string().contains("smoke"));
}

#[test]
fn the_log_classifier_reads_a_file_alone() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures");
    let out = std::process::Command::new(BIN)
        .args(["triage", "--json", "--log"])
        .arg(dir.join("vllm-engine-dead.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a known signature is a finding");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "dead");
    assert_eq!(v["row"], "dead");
    assert!(
        v["action"].as_str().unwrap().contains("serve"),
        "the runbook's action: {v}"
    );
    let ok = std::process::Command::new(BIN)
        .args(["triage", "--log"])
        .arg(dir.join("vllm-startup-ok.log"))
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    let missing = std::process::Command::new(BIN)
        .args(["triage", "--log", "/nonexistent/engine.log"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/engine.log"));
}

/// Issue 12: an engine that dies seconds after Xid 79 on its GPU is named a GPU fault
/// (hardware, not the profile), from a real simulator death and an NVML recording.
#[tokio::test(flavor = "multi_thread")]
async fn row_gpu_fault_xid_correlated_death() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("x", port, "");
    let pid = env.serve_ok("x")["pid"].as_i64().unwrap();
    set_fault(port, "crash").await;
    eventually(Duration::from_secs(10), async || (!pid_alive(pid)).then_some(())).await;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let recording = env.data().join("gpu-xid.json");
    std::fs::write(
        &recording,
        serde_json::json!({
            "status": "available", "driver": "570.86", "cuda": "12.8",
            "gpus": [],
            "events": [{"at_ms": now_ms - 3_000, "gpu": 1, "xid": 79}],
        })
        .to_string(),
    )
    .unwrap();
    let (rule, v) = triage_with(
        &env,
        "x",
        &[],
        &[("ROOFLINE_GPU_RECORDING", recording.display().to_string())],
    )
    .await;
    assert_row("gpu-fault", &rule, &v);
    let reading = v["diagnosis"]["findings"][0]["evidence"][0].to_string();
    assert!(reading.contains("79") && reading.contains("hardware"), "{reading}");
    // The death is still diagnosed, after the GPU.
    assert!(v["diagnosis"]["findings"].to_string().contains("\"dead\""));
    // Without the event it is a plain death.
    let (rule, _) = triage(&env, "x", &[]).await;
    assert_eq!(rule, "dead");
}

/// Issue 12: a start stuck in CUDA graph capture is called "stalled in" that phase against the
/// profile's earlier starts, long before the serve timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_stalled_in_one_phase_is_flagged() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("g", port, "");
    // Two normal starts make the history.
    for _ in 0..2 {
        env.serve_ok("g");
        assert_eq!(env.run(&["stop", "--profile", "g"]).status.code(), Some(0));
    }
    env.vllm_profile(
        "g",
        port,
        "ENV_ROOFLINE_SIM_FAULT=stall-graphs\nENV_ROOFLINE_SIM_STALL_S=120\n",
    );
    let data = env.data().to_path_buf();
    let serve = std::thread::spawn(move || {
        std::process::Command::new(BIN)
            .arg("--data")
            .arg(&data)
            .args(["serve", "--profile", "g"])
            .env("LANG", "C")
            .output()
            .unwrap()
    });
    let status = || {
        let out = env.run(&["status", "--json"]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap_or_default()
    };
    let stalled = eventually(Duration::from_secs(40), async || {
        let s = status();
        let row = s.as_array()?.iter().find(|r| r["profile"] == "g")?.clone();
        row["stall"].is_object().then_some(row)
    })
    .await
    .expect("the start is flagged stalled within 40 s");
    assert_eq!(stalled["stall"]["phase"], "capturing-graphs", "{stalled}");
    assert_eq!(stalled["state"], "starting");
    let (rule, v) = triage(&env, "g", &[]).await;
    assert_row("hung", &rule, &v);
    assert_eq!(v["diagnosis"]["findings"][0]["evidence"][0]["key"], "ev-stalled-phase");
    assert_eq!(env.run(&["stop", "--profile", "g"]).status.code(), Some(0));
    let _ = serve.join();
}

/// An incomplete transfer for real (a model directory without config.json): the row cites
/// what the model check finds missing, as the runbook's action asks ("verify sha256 and the
/// directory contents").
#[tokio::test(flavor = "multi_thread")]
async fn an_incomplete_transfer_names_the_missing_files() {
    let env = Env::new();
    let empty = env.data().join("models/empty");
    env.profile(
        "s",
        &format!(
            "ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nPORT={}\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n",
            empty.display(),
            free_port()
        ),
    );
    let out = env.run(&["serve", "--profile", "s"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", str(&out));
    let (rule, v) = triage(&env, "s", &[]).await;
    assert_row("start-incomplete-weights", &rule, &v);
    let cited: Vec<&serde_json::Value> = v["diagnosis"]["findings"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["key"] == "ev-model-finding")
        .collect();
    assert!(
        cited.iter().any(|r| r["args"].to_string().contains("config.json")),
        "{}",
        v["diagnosis"]["findings"][0]
    );
}

/// Issue 13: a healthy start pins its versions; after the host's driver moved, the
/// driver-mismatch row shows each pinned version against the current one.
#[tokio::test(flavor = "multi_thread")]
async fn a_driver_mismatch_shows_the_pinned_versions_against_the_current_ones() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("pin", port, "");
    env.serve_ok("pin");
    let out = env.run(&["journal", "list", "--json"]);
    let journal = str(&out).0;
    assert!(
        journal.contains("known-good") && journal.contains("570.133.20"),
        "{journal}"
    );
    assert!(env.run(&["stop", "--profile", "pin"]).status.success());

    // The driver was upgraded under the engine (a new torch wheel would read the same way).
    env.vllm_profile("pin", port, "ENV_ROOFLINE_SIM_FAULT=driver-mismatch\n");
    let out = env.run(&["serve", "--profile", "pin"]);
    assert_eq!(out.status.code(), Some(1), "the start fails: {:?}", str(&out));
    let (rule, v) = triage_with(&env, "pin", &[], &[("ROOFLINE_SIM_DRIVER", "535.54.03".into())]).await;
    assert_row("start-driver-mismatch", &rule, &v);
    let evidence = v["diagnosis"]["findings"][0]["evidence"].as_array().unwrap().clone();
    let pin = |key: &str, field: &str| {
        evidence
            .iter()
            .find(|r| r["key"] == key && r["args"].to_string().contains(&format!("\"field\",\"{field}\"")))
            .cloned()
    };
    let driver = pin("ev-pin-moved", "driver").unwrap_or_else(|| panic!("{evidence:?}"));
    let args = driver["args"].to_string();
    assert!(args.contains("570.133.20") && args.contains("535.54.03"), "{args}");
    assert!(pin("ev-pin-same", "torch").is_some(), "{evidence:?}");
    assert!(pin("ev-pin-same", "engine").is_some(), "{evidence:?}");
    // The moved one is cited first.
    let first_pin = evidence
        .iter()
        .position(|r| r["key"].as_str().unwrap_or("").starts_with("ev-pin"))
        .unwrap();
    assert_eq!(evidence[first_pin]["key"], "ev-pin-moved");
}
