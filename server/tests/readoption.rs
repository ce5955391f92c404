//! Engines outlive the console: after `kill -9` of the console, a new console re-adopts them.
// Tests and benches panic on a broken setup on purpose (workspace lint: no unwrap elsewhere).
#![allow(clippy::unwrap_used)]

mod common;
use common::*;
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
