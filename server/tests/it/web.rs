//! The console over real HTTP: server rendering in both languages, the guards (sign-in for
//! pages, no cross-origin writes), and the JSON fleet.

use crate::common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn pages_render_in_the_negotiated_language_and_writes_need_our_origin() {
    let env = Env::new();
    env.vllm_profile("web1", free_port(), "");
    env.add_user("olga", "operator");
    let port = free_port();
    let _console = Console::start(&env, port);
    let base = format!("http://127.0.0.1:{port}");
    let anon = client();
    let up = eventually(Duration::from_secs(20), async || {
        anon.get(format!("{base}/api/engines")).send().await.ok()
    })
    .await;
    assert!(up.is_some(), "console did not come up");
    // Pages need a session: without one, the sign-in page (and back afterwards).
    server::tls::install_default_provider();
    let r = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{base}/profiles/web1"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/login?next=/profiles/web1");
    let login_page = text(anon.get(format!("{base}/login"))).await;
    assert!(login_page.contains("data-testid=\"login-submit\""));

    let session = Session::login(&base, "olga").await;
    let c = client();
    let get = |path: &str| c.get(format!("{base}{path}")).header("cookie", &session.cookie);
    let en = text(get("")).await;
    assert!(en.contains("<html lang=\"en\"") && en.contains(">Fleet<"), "{en}");
    assert!(en.contains("web1"));
    let ru = text(c.get(&base).header("cookie", format!("lang=ru; {}", session.cookie))).await;
    assert!(ru.contains("<html lang=\"ru\"") && ru.contains("Парк движков"));
    let ru_header = text(get("/profiles").header("accept-language", "ru-RU,ru;q=0.9")).await;
    assert!(ru_header.contains("Профили запуска"));
    let profile = text(get("/profiles/web1")).await;
    assert!(
        profile.contains("--served-model-name m"),
        "the rendered command line is shown"
    );
    let missing = get("/nope").send().await.unwrap();
    assert_eq!(missing.status(), 404);

    // A cross-origin write is refused before it reaches engine control.
    let evil = session
        .post_fn("run_engine_action", "profile=web1&action=serve")
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(evil.status(), 403);
    assert_eq!(env.status("web1")["state"], "stopped");

    // The console's own /metrics, in Prometheus text format.
    let own = text(c.get(format!("{base}/metrics"))).await;
    let parsed = app::domain::prometheus::parse(&own);
    assert!(parsed.errors.is_empty(), "{own}");
    let value = |name: &str, state: Option<&str>| {
        parsed
            .samples
            .iter()
            .find(|s| s.name == name && state.is_none_or(|st| s.label("state") == Some(st)))
            .map(|s| s.value)
    };
    assert_eq!(value("roofline_engines", Some("stopped")), Some(1.0));
    assert!(value("roofline_scrapes_total", None).is_some());
    assert!(value("roofline_sse_clients", None).is_some());

    let fleet = json(c.get(format!("{base}/api/engines"))).await;
    assert_eq!(fleet[0]["profile"], "web1");
    assert_eq!(fleet[0]["simulated"], true);
}

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
