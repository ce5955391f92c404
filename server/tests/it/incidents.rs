//! Incidents through the console: an Alertmanager alert opens one (and a second alert joins
//! it), actions need a reason and must be offered by the diagnosis, and the postmortem
//! downloads as Markdown.

use crate::common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn alerts_open_and_join_incidents_and_actions_follow_the_runbook() {
    let (env, _port) = Env::serving_vllm("eng", "");
    env.append_config("\n[auth]\nalertmanager_token = \"am-secret-token-0123456789abcdef0123\"\n");
    env.add_user("olga", "operator");
    env.add_user("vera", "viewer");
    let console_port = free_port();
    let _console = Console::start(&env, console_port);
    let base = format!("http://127.0.0.1:{console_port}");
    eventually(Duration::from_secs(30), async || console_engines(console_port).await).await;
    let c = client();
    let olga = Session::login(&base, "olga").await;
    let alert = |status: &str| {
        serde_json::json!({"version": "4", "status": status, "receiver": "roofline", "alerts": [
            {"status": status, "labels": {"alertname": "EngineQueueGrowing", "profile": "eng"}, "annotations": {}},
            {"status": status, "labels": {"alertname": "Other", "profile": "not-ours"}}
        ]})
    };
    let alerts_url = format!("{base}/api/alerts/alertmanager");
    // Alertmanager authenticates with its bearer token; without it nothing opens.
    let r = c.post(&alerts_url).json(&alert("firing")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = c
        .post(&alerts_url)
        .bearer_auth("wrong")
        .json(&alert("firing"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    server::tls::install_default_provider();
    let c = reqwest::Client::builder()
        .no_proxy()
        .default_headers(
            [(
                reqwest::header::AUTHORIZATION,
                "Bearer am-secret-token-0123456789abcdef0123".parse().unwrap(),
            )]
            .into_iter()
            .collect(),
        )
        .build()
        .unwrap();
    let first = json(c.post(&alerts_url).json(&alert("firing"))).await;
    let id = first["incidents"][0]
        .as_i64()
        .expect("an alert for our engine opens an incident");
    assert_eq!(
        first["incidents"].as_array().unwrap().len(),
        1,
        "an unknown profile is ignored"
    );
    let again = json(c.post(&alerts_url).json(&alert("firing"))).await;
    assert_eq!(again["incidents"][0], id, "a second alert joins the open incident");
    // Issue 29: Alertmanager re-sends what still fires, and anyone with the token can post
    // thousands of alerts: 5 posts made 506 timeline rows. A repeat adds nothing; a flood of
    // distinct alerts adds a bounded number of rows and one note of what was left out.
    let rows = || async {
        use sqlx::Connection;
        let mut conn =
            sqlx::SqliteConnection::connect(&format!("sqlite://{}", env.data().join("roofline.db").display()))
                .await
                .unwrap();
        let n: i64 = sqlx::query_scalar("select count(*) from incident_event where incident_id = $1")
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        n
    };
    let before = rows().await;
    for _ in 0..5 {
        json(c.post(&alerts_url).json(&alert("firing"))).await;
    }
    assert_eq!(rows().await, before, "a firing alert re-sent adds nothing");
    let many: Vec<serde_json::Value> = (0..500)
        .map(
            |i| serde_json::json!({"status": "firing", "labels": {"alertname": format!("Flood{i}"), "profile": "eng"}}),
        )
        .collect();
    for _ in 0..5 {
        let r = c
            .post(&alerts_url)
            .json(&serde_json::json!({"version": "4", "status": "firing", "alerts": many}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let added = rows().await - before;
    assert!(added <= 25, "{added} timeline rows from 5 posts of 500 alerts");
    let bad = c
        .post(format!("{base}/api/alerts/alertmanager"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let act = |action: serde_json::Value, reason: &str| {
        let body = serde_json::json!({"id": id, "action": action, "reason": reason});
        let req = olga.post_json("incident_action", &body);
        async move { req.send().await.unwrap() }
    };
    // No reason: refused. Restart on a healthy engine: not offered (operating rule 3).
    let r = act(serde_json::json!({"kind": "stop"}), "  ").await;
    assert!(!r.status().is_success());
    assert!(r.text().await.unwrap().contains("reason"));
    let r = act(serde_json::json!({"kind": "restart"}), "just because").await;
    assert!(!r.status().is_success());
    assert!(r.text().await.unwrap().contains("not offered"));
    assert_eq!(env.status("eng")["state"], "healthy", "nothing was touched");

    // A note goes on the timeline; the postmortem downloads in either language.
    let (status, body) = olga
        .call("incident_note", &format!("id={id}&text=paged+by+Alertmanager"))
        .await;
    assert_eq!(status, 200, "{body}");
    // A viewer reads the incident but cannot write on it.
    let vera = Session::login(&base, "vera").await;
    let (status, body) = vera.call("incident_note", &format!("id={id}&text=x")).await;
    assert_eq!(status, 403, "{body}");
    let (status, _) = vera.call("get_incident", &format!("id={id}")).await;
    assert_eq!(status, 200);
    let md = text(olga.get(&format!("/api/incidents/{id}/postmortem.md?lang=en"))).await;
    assert!(md.starts_with("# Postmortem: incident"), "{md}");
    assert!(
        md.contains("EngineQueueGrowing") && md.contains("paged by Alertmanager"),
        "{md}"
    );
    let ru = text(olga.get(&format!("/api/incidents/{id}/postmortem.md?lang=ru"))).await;
    assert!(ru.contains("## Таймлайн") && ru.contains("## Корневая причина"), "{ru}");
    let missing = olga.get("/api/incidents/9999/postmortem.md").send().await.unwrap();
    assert_eq!(missing.status(), 404);

    // Cross-origin writes are refused like every other write.
    let evil = olga
        .post_fn("incident_note", &format!("id={id}&text=x"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(evil.status(), 403);
}

/// The live pages' stream (`/api/events/records`): versions on connect, then a new event when
/// an incident is recorded, here by another process (`roofline triage` from the CLI), which the
/// database's triggers catch as they catch the console's own writes.
#[tokio::test(flavor = "multi_thread")]
async fn the_record_stream_moves_when_another_process_records_an_incident() {
    use futures::StreamExt;
    let (env, _port) = Env::serving_vllm("eng", "");
    env.add_user("vera", "viewer");
    let console_port = free_port();
    let _console = Console::start(&env, console_port);
    let base = format!("http://127.0.0.1:{console_port}");
    eventually(Duration::from_secs(30), async || console_engines(console_port).await).await;
    let vera = Session::login(&base, "vera").await;
    let anonymous = client().get(format!("{base}/api/events/records")).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);

    let streaming = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = streaming
        .get(format!("{base}/api/events/records"))
        .header("cookie", &vera.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut body = r.bytes_stream();
    let mut buf = String::new();
    let mut next_event = async || -> serde_json::Value {
        loop {
            if let Some(end) = buf.find("\n\n") {
                let event: String = buf.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return serde_json::from_str(data).unwrap();
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), body.next())
                .await
                .expect("an event within 20 s")
                .expect("the stream stays open")
                .unwrap();
            buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    let first = next_event().await;
    assert_eq!(first["incidents"], 0, "{first}");

    let out = env.run(&["triage", "--profile", "eng", "--window", "2", "--json"]);
    assert!(out.status.success() || out.status.code() == Some(1), "{:?}", str(&out));
    let moved = next_event().await;
    assert!(moved["incidents"].as_i64().unwrap() > 0, "{moved}");
    assert_eq!(moved["changes"], first["changes"], "{moved}");
    let list = vera.call("list_incidents", "").await;
    assert!(list.1.contains("\"eng\""), "{list:?}");
}
