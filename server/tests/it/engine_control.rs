//! Engine control end to end: real simulator processes started, probed and stopped through
//! the `roofline` CLI.

use crate::common::*;

#[tokio::test(flavor = "multi_thread")]
async fn serve_healthy_logs_stop() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("p1", port, "");
    let served = env.serve_ok("p1");
    assert_eq!(served["result"], "started");
    let pid = served["pid"].as_i64().unwrap();
    assert!(pid_alive(pid));
    assert_eq!(env.status("p1")["state"], "healthy");

    let health = env.run(&["health", "--profile", "p1"]);
    assert!(health.status.success(), "{:?}", str(&health));
    assert!(str(&health).0.contains("/health 200"));

    let logs = env.run(&["logs", "--profile", "p1", "--lines", "50"]);
    let (out, _) = str(&logs);
    assert!(out.contains("GPU KV cache size:"), "{out}");
    assert!(out.contains("Application startup complete."));

    // The engine got the air-gap environment.
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    for var in [
        "HF_HUB_OFFLINE=1",
        "TRANSFORMERS_OFFLINE=1",
        "VLLM_NO_USAGE_STATS=1",
        "DO_NOT_TRACK=1",
    ] {
        assert!(environ.contains(var), "{var} missing");
    }

    let stop = env.run(&["stop", "--profile", "p1", "--json"]);
    assert!(stop.status.success());
    let v: serde_json::Value = serde_json::from_slice(&stop.stdout).unwrap();
    assert_eq!(v["result"], "stopped");
    assert_eq!(v["killed"], false, "SIGTERM should have been enough");
    assert!(!pid_alive(pid));
    assert_eq!(env.status("p1")["state"], "stopped");
    // The log survives the stop.
    assert!(str(&env.run(&["logs", "--profile", "p1"]))
        .0
        .contains("Application startup complete."));
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_is_idempotent_and_restart_replaces_the_process() {
    let env = Env::new();
    let port = free_port();
    env.sglang_profile("s1", port, "");
    let first = env.serve_ok("s1");
    let again = env.serve_ok("s1");
    assert_eq!(again["result"], "already-running");
    assert_eq!(again["pid"], first["pid"]);
    let restart = env.run(&["restart", "--profile", "s1", "--json"]);
    assert!(restart.status.success(), "{:?}", str(&restart));
    let new_pid = env.status("s1")["pid"].as_i64().unwrap();
    assert_ne!(Some(new_pid), first["pid"].as_i64());
    assert!(!pid_alive(first["pid"].as_i64().unwrap()));
    // The previous run's log is kept next to the new one.
    assert!(env.data().join("state/s1/engine.log.1").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn busy_port_is_refused_naming_the_owner() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("owner", port, "");
    env.vllm_profile("intruder", port, "");
    env.serve_ok("owner");
    let out = env.run(&["serve", "--profile", "intruder"]);
    assert_eq!(out.status.code(), Some(1));
    let (_, err) = str(&out);
    assert!(
        err.contains(&format!("port {port} is in use by profile owner")),
        "{err}"
    );
    assert_eq!(env.status("owner")["state"], "healthy", "the owner is untouched");

    // A foreign listener (this test process) is named by its process.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let foreign = listener.local_addr().unwrap().port();
    env.vllm_profile("blocked", foreign, "");
    let out = env.run(&["serve", "--profile", "blocked"]);
    assert_eq!(out.status.code(), Some(1));
    let (_, err) = str(&out);
    assert!(
        err.contains("a foreign process") && err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_during_start_reports_the_startup_failure_row() {
    let env = Env::new();
    let cases = [
        ("oom", "ENV_ROOFLINE_SIM_FAULT=oom-load\n", "cuda-oom-load"),
        ("kv", "ENV_ROOFLINE_SIM_FAULT=kv-too-small\n", "kv-too-small"),
        (
            "arch",
            "ENV_ROOFLINE_SIM_FAULT=unsupported-arch\n",
            "unsupported-architecture",
        ),
        ("driver", "ENV_ROOFLINE_SIM_FAULT=driver-mismatch\n", "driver-mismatch"),
    ];
    for (name, extra, row) in cases {
        env.vllm_profile(name, free_port(), extra);
        let out = env.run(&["serve", "--profile", name, "--json"]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["failure"]["row"], row, "{name}: {v}");
        assert!(!v["failure"]["last_lines"].as_array().unwrap().is_empty());
        let st = env.status(name);
        assert_eq!(st["state"], "dead");
        assert_eq!(st["failure"]["row"], row);
    }
    // An incomplete transfer: the model directory has no config.json (SGLang wording).
    env.profile(
        "empty",
        &format!(
            "ENGINE=sim-sglang\nMODEL={}\nPORT={}\nENV_ROOFLINE_SIM_STARTUP_S=0.2\n",
            env.data().join("models/empty").display(),
            free_port()
        ),
    );
    let out = env.run(&["serve", "--profile", "empty"]);
    assert_eq!(out.status.code(), Some(1));
    let (_, err) = str(&out);
    assert!(
        err.contains("does not appear to have a file named config.json"),
        "{err}"
    );
    assert!(
        err.contains("Symptom: `config.json` or the tokenizer is missing"),
        "{err}"
    );
    // Real KV arithmetic: a 128k context does not fit on a 16 GiB simulated GPU.
    env.vllm_profile("long", free_port(), "ENV_ROOFLINE_SIM_GPU_GIB=24\n");
    let p = env.data().join("long.env");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("CONTEXT_LENGTH=8192", "CONTEXT_LENGTH=131072");
    std::fs::write(&p, text).unwrap();
    assert!(env.run(&["profile", "import", p.to_str().unwrap()]).status.success());
    // The calculator knows it before the launch: refused, the figure named.
    let out = env.run(&["serve", "--profile", "long", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "refused", "{v}");
    assert_eq!(v["preflight"][0]["check"], "vram", "{v}");
    assert!(
        v["preflight"][0]["detail"].as_str().unwrap().contains("kv-too-small"),
        "{v}"
    );
    // Overridden, the engine's own failure gets its row.
    let out = env.run(&["serve", "--profile", "long", "--json", "--no-preflight"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["failure"]["row"], "kv-too-small", "{v}");
    let journal = str(&env.run(&["journal", "list", "--profile", "long", "--json"])).0;
    assert!(journal.contains("--no-preflight"), "{journal}");
}

#[tokio::test(flavor = "multi_thread")]
async fn model_paths_are_confined_to_the_models_root() {
    let env = Env::new();
    env.profile(
        "escape",
        &format!("ENGINE=sim-vllm\nMODEL=/etc\nPORT={}\n", free_port()),
    );
    let out = env.run(&["serve", "--profile", "escape"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(str(&out).1.contains("outside the models root"), "{:?}", str(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_pid_file_is_not_adopted() {
    let env = Env::new();
    env.vllm_profile("stale", free_port(), "");
    // A record pointing at a live process that is not ours (this test), with another start time.
    let dir = env.data().join("state/stale");
    std::fs::create_dir_all(&dir).unwrap();
    let rec = serde_json::json!({"profile": "stale", "pid": std::process::id(), "start_ticks": 1, "argv": ["x"], "host": "127.0.0.1", "port": 1, "started_at": 0});
    std::fs::write(dir.join("engine.json"), rec.to_string()).unwrap();
    let st = env.status("stale");
    assert_eq!(st["state"], "dead");
    // Stop must not signal the unrelated process.
    let out = env.run(&["stop", "--profile", "stale", "--json"]);
    assert!(str(&out).0.contains("not-running"));
    assert!(pid_alive(std::process::id() as i64));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_profiles_are_refused_with_field_and_line() {
    let env = Env::new();
    let path = env.data().join("bad.env");
    std::fs::write(&path, "ENGINE=sim-vllm\nMODEL=/m\nMEM_FRACTION=1.4\nTENSOR_PARALEL=2\n").unwrap();
    let out = env.run(&["profile", "import", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let (_, err) = str(&out);
    assert!(err.contains("bad.env:3: error: MEM_FRACTION"), "{err}");
    assert!(
        err.contains("bad.env:4: error: TENSOR_PARALEL: unknown key (did you mean TENSOR_PARALLEL?)"),
        "{err}"
    );
    std::fs::write(&path, "ENGINE=nope\nMODEL=/m\n").unwrap();
    let out = env.run(&["profile", "import", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(str(&out).1.contains("bad.env:1: error: ENGINE"));
    // Export gives back the canonical file.
    env.vllm_profile("good", 8123, "");
    let exported = str(&env.run(&["profile", "export", "good"])).0;
    let again = env.data().join("again.env");
    std::fs::write(&again, &exported).unwrap();
    assert!(env
        .run(&["profile", "import", again.to_str().unwrap(), "--name", "good"])
        .status
        .success());
    assert_eq!(str(&env.run(&["profile", "export", "good"])).0, exported);
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_escalates_to_sigkill_after_the_grace_period() {
    let env = Env::new();
    env.vllm_profile("wedged", free_port(), "ENV_ROOFLINE_SIM_IGNORE_SIGTERM=1\n");
    let pid = env.serve_ok("wedged")["pid"].as_i64().unwrap();
    let t0 = std::time::Instant::now();
    let out = env.run(&["stop", "--profile", "wedged", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["killed"], true, "{v}");
    assert!(
        t0.elapsed() >= std::time::Duration::from_secs(5),
        "the grace period (stop_grace_s = 5) was honoured"
    );
    assert!(!pid_alive(pid));
}

/// Issue 11: stop waited for the leader only; TP workers that ignore SIGTERM (stuck in a CUDA
/// call) survived with the GPU memory. Now the whole process group is gone when stop returns.
#[tokio::test(flavor = "multi_thread")]
async fn stop_ends_every_worker_of_a_tp_engine_even_those_that_ignore_sigterm() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile(
        "tp2",
        port,
        "TENSOR_PARALLEL=2\nENV_ROOFLINE_SIM_WORKERS_IGNORE_SIGTERM=1\n",
    );
    let pid = env.serve_ok("tp2")["pid"].as_i64().unwrap() as i32;
    let members = || server::control::procfs::group_members(pid);
    assert!(members().len() >= 2, "leader and a worker: {:?}", members());
    let out = env.run(&["stop", "--profile", "tp2", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "stopped", "{v}");
    assert_eq!(v["killed"], true, "the worker needed SIGKILL: {v}");
    assert!(members().is_empty(), "survivors in the engine's group: {:?}", members());
}

/// Issue 11: the console's files are its own, whatever the caller's umask.
#[test]
fn the_database_and_state_are_private_to_the_console() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.vllm_profile("p", free_port(), "");
    let mode = std::fs::metadata(env.data().join("roofline.db"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "roofline.db is {mode:o}");
    let head = std::fs::metadata(env.data().join("journal.head"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(head & 0o077, 0, "journal.head is {head:o}");
}
