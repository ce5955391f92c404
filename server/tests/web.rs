//! The console over real HTTP: server rendering in both languages, the guards that stand in
//! for accounts (loopback only, no cross-origin writes), and the JSON fleet.

mod common;
use common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn pages_render_in_the_negotiated_language_and_writes_need_our_origin() {
    let env = Env::new();
    env.vllm_profile("web1", free_port(), "");
    let port = free_port();
    let _console = Console::start(&env, port);
    let base = format!("http://127.0.0.1:{port}");
    let c = client();
    let up = eventually(Duration::from_secs(20), async || {
        c.get(format!("{base}/api/engines")).send().await.ok()
    })
    .await;
    assert!(up.is_some(), "console did not come up");

    let en = text(c.get(&base)).await;
    assert!(en.contains("<html lang=\"en\"") && en.contains(">Fleet<"), "{en}");
    assert!(en.contains("web1"));
    let ru = text(c.get(&base).header("cookie", "lang=ru")).await;
    assert!(ru.contains("<html lang=\"ru\"") && ru.contains("Парк движков"));
    let ru_header = text(
        c.get(format!("{base}/profiles"))
            .header("accept-language", "ru-RU,ru;q=0.9"),
    )
    .await;
    assert!(ru_header.contains("Профили запуска"));
    let profile = text(c.get(format!("{base}/profiles/web1"))).await;
    assert!(
        profile.contains("--served-model-name m"),
        "the rendered command line is shown"
    );
    let missing = c.get(format!("{base}/nope")).send().await.unwrap();
    assert_eq!(missing.status(), 404);

    // A cross-origin write is refused before it reaches engine control.
    let evil = c
        .post(format!("{base}/api/fn/run_engine_action"))
        .header("origin", "http://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("profile=web1&action=serve")
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

#[test]
fn the_console_refuses_to_listen_beyond_loopback() {
    let env = Env::new();
    let out = env.run(&["console", "--addr", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(str(&out).1.contains("loopback"), "{:?}", str(&out));
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
    // Whichever notices first: the queue that does not move, or the console's own probe.
    let note = hung["note"].as_str().unwrap();
    assert!(
        note.contains("no token generated") || note.contains("one-token completion"),
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
}
