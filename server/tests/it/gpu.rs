//! `roofline gpu` with recorded readings (the NVML seam): our engines' processes are named,
//! foreign ones are flagged; without a driver the answer says so.

use crate::common::*;

fn recording(env: &Env, pid: i64) -> std::path::PathBuf {
    let recording = serde_json::json!({"status": "available", "driver": "570.86.15", "gpus": [{
        "index": 0, "name": "NVIDIA H200", "uuid": "GPU-0", "memory_used_bytes": 75u64 << 30, "memory_total_bytes": 141u64 << 30,
        "memory_reserved_bytes": 616u64 << 20, "utilization_pct": 97, "temperature_c": 64, "power_w": 612.5, "power_limit_w": 700.0, "sm_clock_mhz": 1755,
        "throttle": ["sw_power_cap"],
        "processes": [{"pid": pid, "used_bytes": 70u64 << 30}, {"pid": 1, "used_bytes": 5u64 << 30}]}]});
    let path = env.data().join("gpu.json");
    std::fs::write(&path, recording.to_string()).unwrap();
    path
}

#[test]
fn recorded_readings_mark_our_engine_and_a_foreign_process() {
    let (env, _port) = Env::serving_vllm("g", "");
    env.add_user("vera", "viewer");
    let pid = env.status("g")["pid"].as_i64().unwrap();
    let path = recording(&env, pid);
    let out = std::process::Command::new(BIN)
        .args(["--data", env.data().to_str().unwrap(), "gpu", "--json"])
        .env("ROOFLINE_GPU_RECORDING", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a foreign process is a finding");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["foreign_processes"], 1);
    let procs = &v["gpu"]["gpus"][0]["processes"];
    assert_eq!(procs[0]["profile"], "g");
    assert!(procs[1]["profile"].is_null());
    let text = std::process::Command::new(BIN)
        .args(["--data", env.data().to_str().unwrap(), "gpu"])
        .env("ROOFLINE_GPU_RECORDING", &path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("engine g") && text.contains("FOREIGN") && text.contains("throttled: sw_power_cap"),
        "{text}"
    );
}

/// A reading the release binary took through NVML on a real H200 (testdata/gpu/README.md) reads
/// back the same: the busy GPU's power cap, the foreign PyTorch process, the memory in GiB.
#[test]
fn a_real_h200_reading_replays_as_it_was_taken() {
    let env = Env::new();
    let replay = |name: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/gpu")
            .join(name);
        std::process::Command::new(BIN)
            .args(["--data", env.data().to_str().unwrap(), "gpu"])
            .env("ROOFLINE_GPU_RECORDING", &path)
            .output()
            .unwrap()
    };
    let idle = replay("h200-idle.json");
    assert_eq!(idle.status.code(), Some(0), "{:?}", str(&idle));
    let (text, _) = str(&idle);
    assert!(text.contains("driver 580.159.04, CUDA 13.0"), "{text}");
    assert!(text.contains("NVIDIA H200: memory 0.0/140.4 GiB, util 0%"), "{text}");
    let busy = replay("h200-busy.json");
    assert_eq!(busy.status.code(), Some(1), "a foreign process is a finding");
    let (text, _) = str(&busy);
    assert!(text.contains("memory 21.0/140.4 GiB, util 100%"), "{text}");
    assert!(text.contains("throttled: sw_power_cap"), "{text}");
    assert!(text.contains("505") && text.contains("FOREIGN"), "{text}");
}

#[test]
fn without_a_driver_gpu_says_so_plainly() {
    if std::path::Path::new("/dev/nvidiactl").exists() {
        return;
    }
    let env = Env::new();
    let out = env.run(&["gpu"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(str(&out).0.contains("no NVIDIA driver"), "{:?}", str(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_console_shows_gpus_per_engine_and_on_the_engine_page() {
    let (env, _port) = Env::serving_vllm("g", "");
    env.add_user("vera", "viewer");
    let pid = env.status("g")["pid"].as_i64().unwrap();
    let path = recording(&env, pid);
    let console_port = free_port();
    let _console = Console::start_with_env(&env, console_port, &[("ROOFLINE_GPU_RECORDING", &path)]);
    // The fleet row carries the engine's GPU summary (memory, temperature) for the table.
    let gpu = eventually(std::time::Duration::from_secs(30), async || {
        let rows = console_engines(console_port).await?;
        let row = rows.as_array()?.iter().find(|r| r["profile"] == "g")?.clone();
        (!row["gpu"].is_null()).then(|| row["gpu"].clone())
    })
    .await
    .expect("the engine's GPU summary appears");
    assert_eq!(gpu["gpus"], 1);
    assert_eq!(gpu["memory_used_gib"], 75.0);
    assert_eq!(gpu["temperature_c"], 64.0);
    // The engine page's data lists the GPU with its processes: ours named by profile, the
    // other one foreign (the page's GPU section, drawn in the browser when shown, renders
    // these: end2end engine_control.spec.ts).
    let vera = Session::login(&format!("http://127.0.0.1:{console_port}"), "vera").await;
    let (status, body) = vera.call("get_engine", "profile=g").await;
    assert_eq!(status, 200, "{body}");
    let detail: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["gpu"]["status"], "available", "{body}");
    let reading = &detail["gpu"]["gpus"][0];
    let owners: Vec<&serde_json::Value> = reading["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["profile"])
        .collect();
    assert!(
        owners.contains(&&serde_json::json!("g")) && owners.contains(&&serde_json::Value::Null),
        "{body}"
    );
    assert!(
        reading["throttle"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("sw_power_cap")),
        "{body}"
    );
    assert_eq!(
        (reading["power_w"].as_f64(), reading["power_limit_w"].as_f64()),
        (Some(612.5), Some(700.0)),
        "{body}"
    );
    // The page itself carries the GPU section's link and place, drawn once shown.
    let html = text(vera.get("/engines/g?section=gpu")).await;
    assert!(html.contains("data-section=\"gpu\""), "{html}");
    // The calculator's "this host" GPU is what CUDA will report: NVML's total less the
    // driver's reserve (616 MiB on an H200), not the total the GPU panel shows.
    let (status, body) = vera.call("list_host_gpus", "").await;
    assert_eq!(status, 200, "{body}");
    let gpus: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(gpus[0]["name"], "NVIDIA H200");
    assert_eq!(gpus[0]["total_gib"], 141.0);
    let usable = gpus[0]["usable_gib"].as_f64().unwrap();
    assert!((usable - (141.0 - 616.0 / 1024.0)).abs() < 1e-9, "{usable}");
}
