//! Engines outlive the console: after `kill -9` of the console, a new console re-adopts them.

use crate::common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn engines_are_readopted_after_the_console_is_killed() {
    let env = Env::with_extra_config("autostart = [\"auto\"]\n");
    let port = free_port();
    env.vllm_profile("auto", port, "");
    let console_port = free_port();
    let console = Console::start(&env, console_port);
    let healthy_pid = |v: serde_json::Value| -> Option<i64> {
        let e = v.as_array()?.iter().find(|e| e["profile"] == "auto")?.clone();
        (e["state"] == "healthy").then(|| e["pid"].as_i64()).flatten()
    };
    let pid = eventually(Duration::from_secs(30), async || {
        console_engines(console_port).await.and_then(healthy_pid)
    })
    .await
    .expect("autostarted engine becomes healthy");

    // kill -9: no cleanup runs in the console.
    drop(console); // SIGKILL: no cleanup of its own runs
    assert!(pid_alive(pid), "the engine outlives the console");

    let console = Console::start(&env, console_port);
    let adopted = eventually(Duration::from_secs(30), async || {
        console_engines(console_port).await.and_then(healthy_pid)
    })
    .await;
    assert_eq!(adopted, Some(pid), "same process, not a new one");
    drop(console); // SIGKILL: no cleanup of its own runs
}

/// What a service manager does on stop or restart, and worse: SIGTERM, then SIGKILL, to the
/// console's whole process group (systemd's `KillMode=process` signals only the console; even
/// a group kill must not reach the engines, which run in process groups of their own).
#[tokio::test(flavor = "multi_thread")]
async fn engines_survive_a_kill_of_the_consoles_process_group() {
    use std::os::unix::process::CommandExt;
    let env = Env::with_extra_config("autostart = [\"grp\"]\n");
    let port = free_port();
    env.vllm_profile("grp", port, "");
    let console_port = free_port();
    let start = || {
        std::process::Command::new(BIN)
            .args([
                "--data",
                env.data().to_str().unwrap(),
                "console",
                "--addr",
                &format!("127.0.0.1:{console_port}"),
            ])
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let healthy_pid = |v: serde_json::Value| -> Option<i64> {
        let e = v.as_array()?.iter().find(|e| e["profile"] == "grp")?.clone();
        (e["state"] == "healthy").then(|| e["pid"].as_i64()).flatten()
    };
    let mut console = start();
    let pid = eventually(Duration::from_secs(30), async || {
        console_engines(console_port).await.and_then(healthy_pid)
    })
    .await
    .expect("autostarted engine becomes healthy");
    let group = nix::unistd::Pid::from_raw(console.id() as i32);
    nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGTERM).unwrap();
    let stopped = eventually(Duration::from_secs(15), async || console.try_wait().unwrap()).await;
    if stopped.is_none() {
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        console.wait().unwrap();
    }
    assert!(
        pid_alive(pid),
        "the engine outlives a kill of the console's process group"
    );

    let mut again = start();
    let adopted = eventually(Duration::from_secs(30), async || {
        console_engines(console_port).await.and_then(healthy_pid)
    })
    .await;
    assert_eq!(adopted, Some(pid), "the restarted console re-adopts the same process");
    let _ = again.kill();
    let _ = again.wait();
    env.run(&["stop", "--profile", "grp"]);
}
