//! The fleet across hosts: a console lists the engines of a remote console, scrapes a bare
//! engine URL itself, and shows a host that does not answer as unreachable.

use crate::common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn remote_consoles_bare_engines_and_unreachable_hosts() {
    // Host A: a console with one running engine.
    let (host_a, engine_port) = Env::serving_vllm("eng-a", "");
    let console_a = free_port();
    let _a = Console::start(&host_a, console_a);
    // Host B lists A's console, A's engine as a bare URL, and a host that is down.
    let dead = free_port();
    let host_b = Env::with_extra_config("scrape_interval_s = 1\n");
    let config = host_b.data().join("roofline.toml");
    let mut toml = std::fs::read_to_string(&config).unwrap();
    toml.push_str(&format!(
        "\n[[fleet]]\nname = \"gpu-a\"\nconsole = \"http://127.0.0.1:{console_a}\"\n\
         [[fleet]]\nname = \"bare-a\"\nengine = \"http://127.0.0.1:{engine_port}\"\n\
         [[fleet]]\nname = \"gone\"\nconsole = \"http://127.0.0.1:{dead}\"\n"
    ));
    std::fs::write(&config, toml).unwrap();
    let console_b = free_port();
    let _b = Console::start(&host_b, console_b);

    let find = |rows: &serde_json::Value, node: &str| -> Option<serde_json::Value> {
        rows.as_array()?.iter().find(|r| r["node"] == node).cloned()
    };
    let rows = eventually(Duration::from_secs(40), async || {
        let rows = console_engines(console_b).await?;
        let remote = find(&rows, "gpu-a")?;
        let bare = find(&rows, "bare-a")?;
        (remote["state"] == "healthy" && bare["state"] == "healthy" && !bare["live"].is_null()).then_some(rows)
    })
    .await
    .expect("the remote console's engine and the bare engine appear healthy, with live signals");

    let remote = find(&rows, "gpu-a").unwrap();
    assert_eq!(remote["profile"], "eng-a");
    assert_eq!(
        remote["link"],
        format!("http://127.0.0.1:{console_a}/engines/eng-a"),
        "a remote engine links to its own console's page"
    );
    let bare = find(&rows, "bare-a").unwrap();
    assert_eq!(bare["port"], engine_port);
    assert_eq!(bare["model_name"], "m", "the probe model comes from /v1/models");
    assert!(bare["scraped_at_ms"].as_i64().is_some());
    let gone = find(&rows, "gone").expect("a host that does not answer still has a row");
    assert_eq!(gone["state"], "unreachable");
    assert!(gone["note"].as_str().unwrap().contains(&dead.to_string()));

    // The console's own /metrics counts the unreachable host's engines by state.
    let own = text(client().get(format!("http://127.0.0.1:{console_b}/metrics"))).await;
    assert!(own.contains("roofline_engines{state=\"unreachable\"} 1"), "{own}");
    assert!(
        !own.contains("roofline_scrapes_total 0\n"),
        "scrapes are counted: {own}"
    );
}
