//! Accounts over real HTTP, where a process and a socket matter: event streams end with their
//! session and are bounded per session; a client's newline does not forge a log line. The
//! rules that need neither (the access table, the guard and CSRF check, roles at work, the
//! cookies, the sign-in limit, the last admin, disabling) run in-process, in `router.rs`.

use crate::common::*;
use std::time::Duration;

/// Issue 29, item 5: an open event stream kept delivering to a disabled viewer for as long as
/// it stayed open, and one session opened 400 of them. Now a stream ends within the re-check
/// interval of its session ending, and a session's streams beyond its bound are refused (429).
#[tokio::test(flavor = "multi_thread")]
async fn event_streams_end_with_their_session_and_are_bounded_per_session() {
    use futures::StreamExt;
    let env = Env::new();
    env.add_user("vera", "viewer");
    env.add_user("root", "admin");
    env.vllm_profile("s", free_port(), "");
    let port = free_port();
    let _console = Console::start_with_env(
        &env,
        port,
        &[("ROOFLINE_STREAM_RECHECK_MS", std::path::Path::new("1000"))],
    );
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let base = format!("http://127.0.0.1:{port}");
    let vera = Session::login(&base, "vera").await;
    let root = Session::login(&base, "root").await;

    // The bound: a session's streams past 16 are refused, and given back when closed.
    let mut open = Vec::new();
    for i in 0..16 {
        let r = vera.get(app::api::FLEET_STREAM).send().await.unwrap();
        assert_eq!(r.status(), 200, "stream {i}");
        open.push(r);
    }
    let r = vera.get(app::api::FLEET_STREAM).send().await.unwrap();
    assert_eq!(r.status(), 429, "the 17th stream of one session");
    assert!(r.headers().contains_key("retry-after"));
    // Another user's streams are not counted against this one.
    assert_eq!(root.get(app::api::FLEET_STREAM).send().await.unwrap().status(), 200);
    open.truncate(1);
    eventually(Duration::from_secs(10), async || {
        (vera.get(app::api::RECORDS_STREAM).send().await.ok()?.status() == 200).then_some(())
    })
    .await;

    // Disabled while the stream is open: the stream ends.
    let mut body = open.pop().unwrap().bytes_stream();
    assert!(body.next().await.is_some(), "the stream delivers");
    let r = root
        .post_json(
            "update_account",
            &serde_json::json!({"name": "vera", "role": null, "disabled": true, "password": null}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = body.next().await {
            if chunk.is_err() {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "a revoked stream ends within the re-check interval");
}

/// Issue 29, item 7: what a client typed reached the console's log verbatim, so a newline in
/// it forged a log line (a failed sign-in's name needs no account at all).
#[tokio::test(flavor = "multi_thread")]
async fn a_newline_in_what_a_client_sends_does_not_forge_a_log_line() {
    use std::io::Read;
    let env = Env::new();
    env.add_user("olga", "operator");
    let port = free_port();
    // The log goes to standard error.
    let mut console = Console(
        std::process::Command::new(BIN)
            .args(["--data", env.data().to_str().unwrap(), "console", "--addr"])
            .arg(format!("127.0.0.1:{port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let base = format!("http://127.0.0.1:{port}");
    // Every answer carries the headers that keep the console out of other sites' frames.
    let r = client().get(format!("{base}/login")).send().await.unwrap();
    assert_eq!(r.headers()["content-security-policy"], "frame-ancestors 'none'");
    assert_eq!(r.headers()["x-frame-options"], "DENY");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    // A name this console does not answer to (a page on another site whose name resolves
    // here, DNS rebinding) reads nothing, not even the public endpoints.
    let r = client()
        .get(format!("{base}/readyz"))
        .header("host", format!("rebind.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 421);
    let forged = "FORGED INFO server: admin signed in";
    let _ = Session::try_login(&base, &format!("x\n{forged}"), "wrong password").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = console.0.kill();
    let mut out = String::new();
    console.0.stderr.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(out.contains("failed sign-in"), "{out}");
    assert!(
        !out.lines().any(|l| l.trim_start().starts_with("FORGED")),
        "a line of the log was forged:\n{out}"
    );
}
