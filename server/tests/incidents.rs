//! Incidents through the console: an Alertmanager alert opens one (and a second alert joins
//! it), actions need a reason and must be offered by the diagnosis, and the postmortem
//! downloads as Markdown.

mod common;
use common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn alerts_open_and_join_incidents_and_actions_follow_the_runbook() {
    let (env, _port) = Env::serving_vllm("eng", "");
    let console_port = free_port();
    let _console = Console::start(&env, console_port);
    let base = format!("http://127.0.0.1:{console_port}");
    eventually(Duration::from_secs(30), async || console_engines(console_port).await).await;
    let c = client();
    let alert = |status: &str| {
        serde_json::json!({"version": "4", "status": status, "receiver": "roofline", "alerts": [
            {"status": status, "labels": {"alertname": "EngineQueueGrowing", "profile": "eng"}, "annotations": {}},
            {"status": status, "labels": {"alertname": "Other", "profile": "not-ours"}}
        ]})
    };
    let alerts_url = format!("{base}/api/alerts/alertmanager");
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
    let bad = c
        .post(format!("{base}/api/alerts/alertmanager"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let act = |action: serde_json::Value, reason: &str| {
        let body = serde_json::json!({"id": id, "action": action, "reason": reason});
        let c = c.clone();
        let url = format!("{base}/api/fn/incident_action");
        async move { c.post(url).json(&body).send().await.unwrap() }
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
    let r = c
        .post(format!("{base}/api/fn/incident_note"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("id={id}&text=paged+by+Alertmanager"))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let md = text(c.get(format!("{base}/api/incidents/{id}/postmortem.md?lang=en"))).await;
    assert!(md.starts_with("# Postmortem: incident"), "{md}");
    assert!(
        md.contains("EngineQueueGrowing") && md.contains("paged by Alertmanager"),
        "{md}"
    );
    let ru = text(c.get(format!("{base}/api/incidents/{id}/postmortem.md?lang=ru"))).await;
    assert!(ru.contains("## Таймлайн") && ru.contains("## Корневая причина"), "{ru}");
    let missing = c
        .get(format!("{base}/api/incidents/9999/postmortem.md"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    // Cross-origin writes are refused like every other write.
    let evil = c
        .post(format!("{base}/api/fn/incident_note"))
        .header("origin", "http://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("id={id}&text=x"))
        .send()
        .await
        .unwrap();
    assert_eq!(evil.status(), 403);
}
