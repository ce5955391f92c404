//! Accounts over real HTTP (the access table, guard and CSRF checks for every server function
//! run in-process, in `router.rs`): roles at work; sign-in rate-limited; cookies HttpOnly and SameSite;
//! disabling an account ends its sessions; the last admin stays.

use crate::common::*;
use app::domain::auth::Role;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn viewers_read_operators_act_admins_manage_accounts() {
    let env = Env::new();
    env.vllm_profile("acc", free_port(), "");
    for (n, r) in [
        ("vera", "viewer"),
        ("olga", "operator"),
        ("anna", "approver"),
        ("root", "admin"),
    ] {
        env.add_user(n, r);
    }
    let port = free_port();
    let _console = Console::start(&env, port);
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let base = format!("http://127.0.0.1:{port}");
    let mut sessions = std::collections::HashMap::new();
    for (n, r) in [
        ("vera", Role::Viewer),
        ("olga", Role::Operator),
        ("anna", Role::Approver),
        ("root", Role::Admin),
    ] {
        sessions.insert(r, Session::login(&base, n).await);
    }
    // With role and token a viewer reads, an operator acts.
    let (status, body) = sessions[&Role::Viewer].call("list_profiles", "").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = sessions[&Role::Viewer]
        .call("run_engine_action", "profile=acc&action=serve")
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(env.status("acc")["state"], "stopped");

    // Admins manage accounts; the last admin cannot be demoted; disabling ends sessions.
    let admin = &sessions[&Role::Admin];
    let (status, body) = admin
        .post_json(
            "update_account",
            &serde_json::json!({"name": "root", "role": "operator", "disabled": null, "password": null}),
        )
        .send()
        .await
        .map(|r| (r.status().as_u16(), r))
        .unwrap();
    let text = body.text().await.unwrap();
    assert!(status >= 400 && text.contains("last admin"), "{text}");
    let (status, body) = admin
        .call(
            "create_account",
            &format!("name=newbie&role=operator&password={}", urlencode(PASSWORD)),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = admin
        .call("create_account", "name=short&role=operator&password=abc")
        .await;
    assert!(status >= 400 && body.contains("password"), "{body}");
    let newbie = Session::login(&base, "newbie").await;
    assert_eq!(newbie.call("list_profiles", "").await.0, 200);
    let r = admin
        .post_json(
            "update_account",
            &serde_json::json!({"name": "newbie", "role": null, "disabled": true, "password": null}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        newbie.call("list_profiles", "").await.0,
        401,
        "a disabled account's session ends"
    );
    assert!(Session::try_login(&base, "newbie", PASSWORD).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn sign_in_sets_strict_cookies_and_is_rate_limited() {
    let env = Env::new();
    env.add_user("olga", "operator");
    let port = free_port();
    let _console = Console::start(&env, port);
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let base = format!("http://127.0.0.1:{port}");
    let r = client()
        .post(format!("{base}/api/fn/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("name=olga&password={}", urlencode(PASSWORD)))
        .send()
        .await
        .unwrap();
    let cookies: Vec<String> = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let session = cookies.iter().find(|c| c.starts_with("roofline_session=")).unwrap();
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Strict"),
        "{session}"
    );
    let csrf = cookies.iter().find(|c| c.starts_with("roofline_csrf=")).unwrap();
    assert!(!csrf.contains("HttpOnly") && csrf.contains("SameSite=Strict"), "{csrf}");

    // A wrong user name answers like a wrong password.
    let (_, nobody) = Session::try_login(&base, "nobody", "whatever whatever")
        .await
        .err()
        .unwrap();
    let (_, wrong) = Session::try_login(&base, "olga", "whatever whatever")
        .await
        .err()
        .unwrap();
    assert_eq!(nobody, wrong);
    for _ in 0..4 {
        assert!(Session::try_login(&base, "olga", "not the password").await.is_err());
    }
    let (_, body) = Session::try_login(&base, "olga", PASSWORD)
        .await
        .err()
        .expect("locked after five failures");
    assert!(body.contains("too many failed sign-ins"), "{body}");
}

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
