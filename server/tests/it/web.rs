//! The console as a process over real HTTP: the first admin from the secret it prints, and the
//! fleet's live signals from real simulator engines. Rendering in both languages, the guards
//! and the JSON fleet run in-process (`router.rs`).

use crate::common::*;
use std::time::Duration;

/// On a fresh data dir the console prints a one-time setup secret; it creates the first admin
/// once (signed in at once), and never again.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_admin_comes_from_the_one_time_secret() {
    use std::io::BufRead;
    let env = Env::new();
    let port = free_port();
    let mut console = Console::start_with(&env, port, &[], std::process::Stdio::piped());
    let stdout = console.0.stdout.take().unwrap();
    // Keep draining stdout: a closed pipe would end the console at its next line.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(s) = line.split("one-time setup secret: ").nth(1) {
                let _ = tx.send(s.to_string());
            }
        }
    });
    let secret = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the console prints the setup secret");
    let base = format!("http://127.0.0.1:{port}");
    eventually(Duration::from_secs(20), async || console_engines(port).await).await;
    let c = client();
    let setup = |secret: String, name: &str| {
        let body = format!("secret={secret}&name={name}&password={}", urlencode(PASSWORD));
        let req = c
            .post(format!("{base}/api/fn/setup_admin"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        async move {
            let r = req.send().await.unwrap();
            (
                r.status().as_u16(),
                r.headers().get_all("set-cookie").iter().count(),
                r.text().await.unwrap(),
            )
        }
    };
    let (status, _, body) = setup("wrong".into(), "root").await;
    assert_eq!(status, 401, "a wrong secret is a refusal, not a failure: {body}");
    assert!(body.contains("secret"), "{body}");
    let (status, cookies, body) = setup(secret.clone(), "root").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(cookies, 2, "signed in: session and CSRF cookies");
    let (_, _, body) = setup(secret, "second").await;
    assert!(
        body.contains("accounts exist already") || body.contains("secret"),
        "used up: {body}"
    );
    let admin = Session::login(&base, "root").await;
    let (status, body) = admin.call("list_accounts", "").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"root\"") && body.contains("admin"), "{body}");
    let journal = text(admin.get("/api/journal.json?query=setup")).await;
    assert!(journal.contains("account-created"), "{journal}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_fleet_carries_live_signals_and_calls_a_hang_hung() {
    let (env, port) = Env::serving_vllm("live", "");
    let console = free_port();
    let _console = Console::start(&env, console);
    let fleet = async || console_engines(console).await.map(|v| v[0].clone());
    let live = eventually(Duration::from_secs(20), async || {
        fleet().await.filter(|e| e["live"]["waiting"].is_number())
    })
    .await;
    let live = live.expect("live signals appear");
    assert_eq!(live["state"], "healthy");
    assert!(live["live"]["kv_usage"].is_number());

    set_fault(port, "hang").await;
    let _stuck = load(port, 2, 100, 10);
    let hung = eventually(Duration::from_secs(40), async || {
        fleet().await.filter(|e| e["state"] == "hung")
    })
    .await;
    let hung = hung.expect("a hang is shown as hung");
    // Whichever notices first: counters flat with work pending, or the probe on an idle engine.
    let note = hung["note"].as_str().unwrap();
    assert!(
        note.contains("no token, prompt token or engine step") || note.contains("one-token completion"),
        "{hung}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_completion_probe_that_gets_no_answer_marks_the_engine_hung() {
    let (env, port) = Env::serving_vllm("probe", "");
    let console = free_port();
    let _console = Console::start(&env, console);
    let fleet = async || console_engines(console).await.map(|v| v[0].clone());
    let answered = eventually(Duration::from_secs(20), async || {
        fleet().await.filter(|e| e["probe_ms"].is_number())
    })
    .await;
    assert!(answered.is_some(), "the probe answers on a healthy engine");
    // No client traffic at all: only the console's own probe can notice the hang.
    set_fault(port, "hang").await;
    let hung = eventually(Duration::from_secs(40), async || {
        fleet().await.filter(|e| e["state"] == "hung")
    })
    .await
    .expect("hung");
    assert!(
        hung["note"].as_str().unwrap().contains("one-token completion"),
        "{hung}"
    );
    // The verdict travels as its locale key, so each page renders it in its reader's language.
    assert_eq!(hung["verdict"]["key"], "hang-probe", "{hung}");
    assert!(
        hung["verdict"]["args"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a[0] == "held"),
        "{hung}"
    );
}

/// Slowloris and idle hoarding (RELIABILITY.md): a connection that never finishes its
/// request's headers, sends nothing, or sits idle after an answer, is closed after the header
/// deadline; one
/// address holds at most its share of connections, the next is closed at once, and the
/// console answers again as soon as some are given back.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_holding_connections_gets_a_deadline_and_a_cap() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;
    let env = Env::new();
    let port = free_port();
    let _console = Console::start(&env, port);
    let base = format!("http://127.0.0.1:{port}");
    eventually(Duration::from_secs(30), async || {
        client()
            .get(format!("{base}/healthz"))
            .send()
            .await
            .ok()
            .filter(|r| r.status().is_success())
    })
    .await
    .expect("the console answers");
    let addr = format!("127.0.0.1:{port}");
    // Waits for the server to close the connection; the bytes it sent first, and when.
    async fn closed_within(mut s: TcpStream, limit: Duration) -> Option<(Duration, String)> {
        let t = std::time::Instant::now();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match tokio::time::timeout(limit.saturating_sub(t.elapsed()), s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return Some((t.elapsed(), String::from_utf8_lossy(&got).into_owned())),
                Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
                Err(_) => return None,
            }
        }
    }
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    // Nothing at all: not even enough to tell HTTP/1 from HTTP/2.
    let silent = TcpStream::connect(&addr).await.unwrap();
    let (slow, idle, silent) = tokio::join!(
        closed_within(slow, Duration::from_secs(40)),
        closed_within(idle, Duration::from_secs(40)),
        closed_within(silent, Duration::from_secs(40))
    );
    silent.expect("a connection that sends nothing is not held for good");
    let (after, _) = slow.expect("half a request is not held for good");
    assert!(
        after >= Duration::from_secs(5),
        "closed after {after:?}: before the deadline"
    );
    let (_, answer) = idle.expect("an idle kept-alive connection is not held for good");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // The cap: 270 connections from this address; those over it are closed at once.
    let mut all = Vec::new();
    for _ in 0..270 {
        all.push(TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut held = Vec::new();
    for s in all {
        let mut probe = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(10), s.peek(&mut probe)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {}
            _ => held.push(s),
        }
    }
    assert!((240..=256).contains(&held.len()), "{} of 270 held", held.len());
    held.truncate(200);
    let r = client()
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("answers again");
    assert!(r.status().is_success());
}
