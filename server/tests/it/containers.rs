//! Engines in containers, with real podman: a local image holding this `roofline` binary (the
//! simulator runs inside it), served, adopted by a restarted console, logged, checked against
//! the image's own help, stopped; a tag without a digest refused; a failed start diagnosed
//! from the container's log and exit code.
//!
//! Images cannot be pulled here, so the image is built locally (`podman import` of a root
//! filesystem with the binary and the libraries it links). This kernel needs `--runtime runc`
//! (crun fails on its cgroup layout, so host configuration passes it as the CLI's global
//! argument) and `default_ulimits = []` (a containers.conf in `CONTAINERS_CONF`).

use crate::common::*;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

const CLI: [&str; 3] = ["podman", "--runtime", "runc"];

fn podman(args: &[&str]) -> std::process::Output {
    Command::new(CLI[0])
        .args(&CLI[1..])
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("podman is needed for the container tests (scripts/setup.sh --browser installs it): {e}")
        })
}

/// The test image (`localhost/roofline-sim@sha256:…`), built once per test binary.
fn image() -> &'static str {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("containers.conf");
        std::fs::write(&conf, "[containers]\ndefault_ulimits = []\n").unwrap();
        // Kept for the whole test binary: podman reads it on every call.
        let kept = std::env::temp_dir().join("roofline-test-containers.conf");
        std::fs::copy(&conf, &kept).unwrap();
        std::env::set_var("CONTAINERS_CONF", &kept);

        let root = dir.path().join("rootfs");
        let bin = root.join("usr/local/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        std::fs::create_dir_all(root.join("etc")).unwrap();
        std::fs::copy(BIN, bin.join("roofline")).unwrap();
        let ldd = Command::new("ldd").arg(BIN).output().unwrap();
        for lib in String::from_utf8_lossy(&ldd.stdout)
            .split_whitespace()
            .filter(|w| w.starts_with('/'))
        {
            let to = root.join(lib.trim_start_matches('/'));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(lib, &to).unwrap();
        }
        let tar = dir.path().join("rootfs.tar");
        let out = Command::new("tar")
            .args(["-C", root.to_str().unwrap(), "-cf", tar.to_str().unwrap(), "."])
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", str(&out));
        let out = podman(&["import", tar.to_str().unwrap(), "localhost/roofline-sim:test"]);
        assert!(out.status.success(), "podman import: {:?}", str(&out));
        let out = podman(&[
            "image",
            "inspect",
            "--format",
            "{{.Digest}}",
            "localhost/roofline-sim:test",
        ]);
        let digest = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(digest.starts_with("sha256:"), "{:?}", str(&out));
        format!("localhost/roofline-sim@{digest}")
    })
}

/// A data dir with a container installation of the simulator and one profile on `port`.
fn env_with_container(profile: &str, port: u16, extra: &str) -> Env {
    let image = image();
    let env = Env::new();
    env.append_config(&format!(
        "\n[engines.sim-podman]\nkind = \"vllm\"\nsimulator = true\nruntime = \"podman\"\ncommand = [\"podman\", \"--runtime\", \"runc\"]\nimage = \"{image}\"\n"
    ));
    env.profile(
        profile,
        &format!(
            "ENGINE=sim-podman\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nTOOL_CALL_PARSER=hermes\nPORT={port}\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n{extra}",
            env.model().display()
        ),
    );
    env
}

/// Names of the containers labelled with the profile, running or not.
fn containers_of(profile: &str) -> Vec<String> {
    let out = podman(&[
        "ps",
        "--all",
        "--filter",
        &format!("label=io.roofline.profile={profile}"),
        "--format",
        "{{.Names}} {{.Status}}",
    ]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn journal(env: &Env, profile: &str) -> Vec<serde_json::Value> {
    let out = env.run(&["journal", "list", "--profile", profile, "--json"]);
    assert!(out.status.success(), "{:?}", str(&out));
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_containerised_engine_is_served_adopted_logged_checked_and_stopped() {
    let port = free_port();
    let env = env_with_container("boxed", port, "");
    let digest = image().split_once('@').unwrap().1.to_string();

    let served = env.serve_ok("boxed");
    let pid = served["pid"].as_i64().unwrap();
    assert_eq!(containers_of("boxed").len(), 1, "{:?}", containers_of("boxed"));
    assert!(
        containers_of("boxed")[0].starts_with("roofline-boxed Up"),
        "{:?}",
        containers_of("boxed")
    );
    // The recorded pid is the container's init process on this host.
    let out = podman(&["container", "inspect", "--format", "{{.State.Pid}}", "roofline-boxed"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), pid.to_string());
    let status = env.status("boxed");
    assert_eq!(status["state"], "healthy", "{status}");
    assert_eq!(status["simulated"], true);

    // The engine's own startup lines reach `roofline logs` through the container CLI.
    let out = env.run(&["logs", "--profile", "boxed", "--lines", "200"]);
    let (logs, _) = str(&out);
    assert!(logs.contains("Application startup complete"), "{logs}");

    // The journal's serve entry names the image and the digest the runtime ran.
    let serve = journal(&env, "boxed")
        .into_iter()
        .find(|e| e["kind"] == "serve")
        .expect("a serve entry");
    assert_eq!(serve["detail"]["image"], image(), "{serve}");
    assert_eq!(serve["detail"]["image_digest"], digest, "{serve}");

    // flags runs the image's own --help (a one-off container, removed after).
    let out = env.run(&["flags", "--profile", "boxed", "--json"]);
    assert!(out.status.success(), "{:?}", str(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["known"].as_u64().unwrap() > 3, "{report}");
    // Only this console's: the other tests' preflights run one-off containers at the same time.
    let console = std::fs::read_to_string(env.data().join("console.id")).unwrap();
    let out = podman(&[
        "ps",
        "--all",
        "--filter",
        &format!("label=io.roofline.console={}", console.trim()),
        "--format",
        "{{.Names}}",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "roofline-boxed",
        "one-off containers are removed"
    );

    // A console killed and started again adopts the same container.
    let console_port = free_port();
    let healthy_pid = |v: serde_json::Value| -> Option<i64> {
        let e = v.as_array()?.iter().find(|e| e["profile"] == "boxed")?.clone();
        (e["state"] == "healthy").then(|| e["pid"].as_i64()).flatten()
    };
    let console = Console::start(&env, console_port);
    let seen = eventually(Duration::from_secs(30), async || {
        console_engines(console_port).await.and_then(healthy_pid)
    })
    .await;
    assert_eq!(seen, Some(pid));
    drop(console); // SIGKILL: no cleanup of its own runs
    assert!(pid_alive(pid), "the container outlives the console");
    let console = Console::start(&env, console_port);
    let adopted = eventually(Duration::from_secs(30), async || {
        console_engines(console_port).await.and_then(healthy_pid)
    })
    .await;
    assert_eq!(adopted, Some(pid), "the same container, not a new one");
    drop(console);

    // Its record lost, a serve finds the running container through the CLI and adopts it
    // rather than starting a second one.
    std::fs::remove_file(env.data().join("state/boxed/engine.json")).unwrap();
    let again = env.serve_ok("boxed");
    assert_eq!(again["result"], "already-running", "{again}");
    assert_eq!(again["pid"].as_i64(), Some(pid));
    assert_eq!(containers_of("boxed").len(), 1);

    // The follower that copies the container's output into engine.log is killed: the next
    // status starts another one, from the log's last write on.
    let record = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(env.data().join("state/boxed/engine.json")).unwrap()).unwrap()
    };
    let follower = record()["container"]["follower_pid"].as_i64().unwrap();
    assert!(follower > 1 && pid_alive(follower), "{}", record());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(follower as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    eventually(Duration::from_secs(5), async || (!pid_alive(follower)).then_some(())).await;
    assert_eq!(env.status("boxed")["state"], "healthy");
    let next = record()["container"]["follower_pid"].as_i64().unwrap();
    assert!(next != follower && pid_alive(next), "a new follower: {}", record());

    // The known-good set of the start pins the image digest.
    let known: Vec<_> = journal(&env, "boxed")
        .into_iter()
        .filter(|e| e["kind"] == "known-good")
        .collect();
    assert!(known.iter().any(|e| e["detail"]["image"] == digest), "{known:?}");

    // Stop goes through the CLI: the container is stopped and removed, the port is free.
    let out = env.run(&["stop", "--profile", "boxed", "--json"]);
    assert!(out.status.success(), "{:?}", str(&out));
    assert!(containers_of("boxed").is_empty(), "{:?}", containers_of("boxed"));
    assert!(!pid_alive(pid));
    assert!(
        std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(),
        "port {port} is free"
    );
    assert_eq!(env.status("boxed")["state"], "stopped");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_container_start_is_diagnosed_from_its_log_and_exit_code() {
    let port = free_port();
    let env = env_with_container("oomy", port, "ENV_ROOFLINE_SIM_FAULT=oom-load\n");
    let out = env.run(&["serve", "--profile", "oomy", "--json"]);
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["failure"]["row"], "cuda-oom-load", "{v}");
    assert!(v["error"].as_str().unwrap().contains("exit: code"), "{v}");
    let status = env.status("oomy");
    assert_eq!(status["state"], "dead", "{status}");
    // Its log and exit code are kept in the state dir: the exited container is removed.
    assert!(containers_of("oomy").is_empty(), "{:?}", containers_of("oomy"));
    let out = env.run(&["logs", "--profile", "oomy", "--lines", "100"]);
    assert!(str(&out).0.contains("CUDA out of memory"), "{:?}", str(&out));
    // A container left under the name (a console killed mid-start) does not block the next.
    let out = podman(&[
        "create",
        "--name",
        "roofline-oomy",
        "--label",
        "io.roofline.profile=oomy",
        image(),
        "true",
    ]);
    assert!(out.status.success(), "{:?}", str(&out));
    let _ = env.run(&["serve", "--profile", "oomy", "--json"]);
    assert!(containers_of("oomy").is_empty(), "{:?}", containers_of("oomy"));
    let _ = env.run(&["stop", "--profile", "oomy"]);
    assert!(containers_of("oomy").is_empty(), "{:?}", containers_of("oomy"));
}

#[test]
fn an_image_by_tag_is_refused_with_the_runbooks_words() {
    let env = Env::new();
    env.append_config(
        "\n[engines.latest]\nkind = \"vllm\"\nruntime = \"podman\"\nimage = \"vllm/vllm-openai:latest\"\n",
    );
    let out = env.run(&["status"]);
    assert_eq!(out.status.code(), Some(2), "{:?}", str(&out));
    let (_, err) = str(&out);
    assert!(
        err.contains("[engines.latest] image `vllm/vllm-openai:latest`"),
        "{err}"
    );
    assert!(err.contains("docker image by digest, not by the latest tag"), "{err}");
    assert!(Path::new(BIN).exists());
}

/// Issue 29, item 3: anyone who can start containers in the console's runtime could start
/// one with the profile's name and label, and `serve` adopted it as the engine (skipping the
/// digest pin, the model check and the port check). Here the impostor is the console's own
/// container started again without the console's label: refused, named, left running, and an
/// incident is opened.
#[tokio::test(flavor = "multi_thread")]
async fn a_container_the_console_did_not_start_is_refused_not_adopted() {
    let port = free_port();
    let env = env_with_container("twin", port, "");
    env.serve_ok("twin");
    let out = podman(&[
        "container",
        "inspect",
        "--format",
        "{{json .Config.CreateCommand}}",
        "roofline-twin",
    ]);
    let created: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(env.run(&["stop", "--profile", "twin"]).status.success());
    // The same command line, less the console's label.
    let mut argv = Vec::new();
    let mut i = 0;
    while i < created.len() {
        if created[i] == "--label"
            && created
                .get(i + 1)
                .is_some_and(|l| l.starts_with("io.roofline.console="))
        {
            i += 2;
            continue;
        }
        argv.push(created[i].clone());
        i += 1;
    }
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert!(out.status.success(), "the impostor starts: {:?}", str(&out));
    eventually(Duration::from_secs(30), async || {
        containers_of("twin").iter().any(|c| c.contains(" Up")).then_some(())
    })
    .await
    .unwrap();

    let out = env.run(&["serve", "--profile", "twin", "--json"]);
    let (stdout, stderr) = str(&out);
    assert!(!out.status.success(), "adopted: {stdout} {stderr}");
    assert!(
        stdout.contains("roofline-twin") && stdout.contains("io.roofline.console"),
        "{stdout}"
    );
    assert!(
        containers_of("twin").iter().any(|c| c.contains(" Up")),
        "left running for someone to inspect: {:?}",
        containers_of("twin")
    );
    assert_ne!(env.status("twin")["state"], "healthy");
    let incidents: i64 = {
        use sqlx::Connection;
        let mut conn =
            sqlx::SqliteConnection::connect(&format!("sqlite://{}", env.data().join("roofline.db").display()))
                .await
                .unwrap();
        sqlx::query_scalar("select count(*) from incident where profile = 'twin'")
            .fetch_one(&mut conn)
            .await
            .unwrap()
    };
    assert_eq!(incidents, 1, "an incident is opened");
    let _ = podman(&["rm", "--force", "roofline-twin"]);
}
