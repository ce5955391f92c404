//! The Prometheus and Alertmanager pack against the real programs (Debian's `prometheus` and
//! `prometheus-alertmanager`, installed by `scripts/setup.sh --browser`): Prometheus finds the
//! engines through the console's service discovery, a simulator fault fires one of the
//! packaged rules, Alertmanager posts it to the console, and the console opens the incident.
//! Also `promtool check rules` on the packaged rules and `promtool check metrics` on the
//! console's own `/metrics`, and every query of the packaged dashboard is valid PromQL.

use crate::common::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const PACK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../packaging");

/// A helper program, killed when dropped.
struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn need(program: &str) {
    let found = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        found.is_ok(),
        "{program} is not installed: scripts/setup.sh --browser installs Debian's prometheus and prometheus-alertmanager"
    );
}

/// The packaged rules with every `for:` cut to zero, for a test that cannot wait minutes.
fn rules_without_waiting(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(format!("{PACK}/prometheus/roofline-alerts.yml")).unwrap();
    let fast: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("for:") {
                "        for: 0s".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = dir.join("roofline-alerts.yml");
    std::fs::write(&path, fast).unwrap();
    path
}

/// An instant query; `null` while Prometheus does not answer yet.
async fn prom_query(port: u16, q: &str) -> serde_json::Value {
    let Ok(r) = client()
        .get(format!("http://127.0.0.1:{port}/api/v1/query?query={}", urlencode(q)))
        .send()
        .await
    else {
        return serde_json::Value::Null;
    };
    r.json().await.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn prometheus_discovers_engines_and_a_fired_rule_opens_an_incident() {
    need("prometheus");
    need("prometheus-alertmanager");
    need("promtool");
    let work = tempfile::tempdir().unwrap();

    // promtool on the packaged rules.
    let check = Command::new("promtool")
        .args(["check", "rules", &format!("{PACK}/prometheus/roofline-alerts.yml")])
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));

    // A console with one engine, service discovery and the webhook on.
    let env = Env::with_extra_config("scrape_interval_s = 1\n");
    let engine_port = free_port();
    env.vllm_profile("storm", engine_port, "");
    env.serve_ok("storm");
    env.append_config("\n[auth]\nalertmanager_token = \"am-token-0123456789abcdef0123456789ab\"\nprometheus_sd_token = \"sd-token-0123456789abcdef0123456789ab\"\n");
    env.add_user("root", "admin");
    let console_port = free_port();
    let _console = Console::start(&env, console_port);
    let base = format!("http://127.0.0.1:{console_port}");
    let sd = eventually(Duration::from_secs(30), async || {
        let r = client()
            .get(format!("{base}/api/prometheus/sd"))
            .bearer_auth("sd-token-0123456789abcdef0123456789ab")
            .send()
            .await
            .ok()?;
        let v: serde_json::Value = r.json().await.ok()?;
        (v.as_array()?.len() == 1).then_some(v)
    })
    .await
    .expect("service discovery lists the running engine");
    assert_eq!(sd[0]["labels"]["profile"], "storm");
    assert_eq!(sd[0]["labels"]["engine_kind"], "vllm");
    assert_eq!(sd[0]["targets"][0], format!("127.0.0.1:{engine_port}"));
    // Without the token: refused.
    let r = client().get(format!("{base}/api/prometheus/sd")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = client()
        .get(format!("{base}/api/prometheus/sd"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // promtool on the console's own /metrics: with a Prometheus token set, it needs the token.
    let r = client().get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let own = text(
        client()
            .get(format!("{base}/metrics"))
            .bearer_auth("sd-token-0123456789abcdef0123456789ab"),
    )
    .await;
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        promtool.stdin.take().unwrap().write_all(own.as_bytes()).unwrap();
    }
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Alertmanager: roofline="true" alerts to the console's webhook, at once.
    let am_port = free_port();
    let am_config = work.path().join("alertmanager.yml");
    std::fs::write(
        &am_config,
        format!(
            "route:\n  receiver: none\n  group_wait: 0s\n  group_interval: 1s\n  routes:\n    - matchers: ['roofline=\"true\"']\n      receiver: roofline\n      group_wait: 0s\n      group_interval: 1s\nreceivers:\n  - name: none\n  - name: roofline\n    webhook_configs:\n      - url: {base}/api/alerts/alertmanager\n        send_resolved: true\n        http_config:\n          authorization:\n            credentials: am-token-0123456789abcdef0123456789ab\n"
        ),
    )
    .unwrap();
    let _am = Proc(
        Command::new("prometheus-alertmanager")
            .arg(format!("--config.file={}", am_config.display()))
            .arg(format!("--storage.path={}", work.path().join("am").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{am_port}"))
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    // Prometheus: the packaged rules, engines from the console's discovery, the console itself.
    let rules = rules_without_waiting(work.path());
    let prom_port = free_port();
    let prom_config = work.path().join("prometheus.yml");
    std::fs::write(
        &prom_config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {rules}\nalerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['127.0.0.1:{am_port}']\nscrape_configs:\n  - job_name: roofline-engines\n    http_sd_configs:\n      - url: {base}/api/prometheus/sd\n        refresh_interval: 1s\n        authorization:\n          type: Bearer\n          credentials: sd-token-0123456789abcdef0123456789ab\n  - job_name: roofline-console\n    authorization:\n      type: Bearer\n      credentials: sd-token-0123456789abcdef0123456789ab\n    static_configs:\n      - targets: ['127.0.0.1:{console_port}']\n",
            rules = rules.display()
        ),
    )
    .unwrap();
    let _prom = Proc(
        Command::new("prometheus")
            .arg(format!("--config.file={}", prom_config.display()))
            .arg(format!("--storage.tsdb.path={}", work.path().join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(work.path().join("prometheus.log")).unwrap())
            .spawn()
            .unwrap(),
    );

    // Prometheus discovers the engine, with the console's labels, and scrapes it.
    let up = eventually(Duration::from_secs(60), async || {
        let v = prom_query(prom_port, "up{job=\"roofline-engines\"}").await;
        let r = v["data"]["result"].as_array()?.first()?.clone();
        (r["value"][1] == "1").then_some(r)
    })
    .await
    .unwrap_or_else(|| {
        let log = std::fs::read_to_string(work.path().join("prometheus.log")).unwrap_or_default();
        let tail: String = log.lines().rev().take(15).collect::<Vec<_>>().join("\n");
        panic!("Prometheus did not scrape the engine it discovered; its log (newest first):\n{tail}")
    });
    assert_eq!(up["metric"]["profile"], "storm");
    assert_eq!(up["metric"]["engine_kind"], "vllm");
    assert_eq!(up["metric"]["model"], "m");
    // And the console itself, with the token its /metrics needs (packaging/prometheus).
    eventually(Duration::from_secs(60), async || {
        let v = prom_query(prom_port, "up{job=\"roofline-console\"}").await;
        let r = v["data"]["result"].as_array()?.first()?.clone();
        (r["value"][1] == "1").then_some(())
    })
    .await
    .expect("Prometheus scrapes the console's /metrics with the token");

    // A preemption storm under load fires RooflinePreemptionsRising.
    set_fault(engine_port, "preemption-storm").await;
    let load_task = tokio::spawn(async move {
        loop {
            load_and_wait(engine_port, 4, 40, 50).await;
        }
    });
    let incident = eventually(Duration::from_secs(90), async || {
        let s = Session::login(&base, "root").await;
        let v: serde_json::Value = s.post_fn("list_incidents", "").send().await.ok()?.json().await.ok()?;
        v.as_array()?.iter().find(|i| i["profile"] == "storm").cloned()
    })
    .await;
    let fired = prom_query(prom_port, "ALERTS{alertname=\"RooflinePreemptionsRising\"}").await;
    load_task.abort();
    let incident = incident.unwrap_or_else(|| panic!("no incident opened; Prometheus ALERTS: {fired}"));
    assert_eq!(incident["opened_by"], "alertmanager", "{incident}");
    assert!(fired.to_string().contains("storm"), "{fired}");

    // Every query of the packaged Grafana dashboard is valid PromQL, and the engine panels
    // have data for the engine.
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{PACK}/grafana/roofline-dashboard.json")).unwrap())
            .unwrap();
    let mut with_data = 0;
    for panel in dash["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("$profile", ".*")
                .replace("$host", ".*");
            let v = prom_query(prom_port, &expr).await;
            assert_eq!(v["status"], "success", "{}: {expr}: {v}", panel["title"]);
            if v["data"]["result"].as_array().is_some_and(|r| !r.is_empty()) {
                with_data += 1;
            }
        }
    }
    assert!(with_data >= 5, "dashboard queries with data: {with_data}");
    env.run(&["stop", "--profile", "storm"]);
}

/// Issue 16: with `[prometheus] url`, the charts' longer ranges and the minutes the console's
/// memory does not hold read `query_range` from the team's Prometheus (the real one, scraping
/// a simulated engine with the labels the console's service discovery gives it).
#[tokio::test(flavor = "multi_thread")]
async fn history_beyond_the_consoles_memory_comes_from_prometheus() {
    need("prometheus");
    let work = tempfile::tempdir().unwrap();
    let prom_port = free_port();
    let env = Env::with_extra_config("host_name = \"prom-host\"\nscrape_interval_s = 1\n");
    env.append_config(&format!("\n[prometheus]\nurl = \"http://127.0.0.1:{prom_port}\"\n"));
    env.add_user("vera", "viewer");
    let port = free_port();
    env.vllm_profile("ph", port, "");
    env.serve_ok("ph");
    std::fs::write(
        work.path().join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: engines\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n        labels: {{profile: ph, host: prom-host}}\n"
        ),
    )
    .unwrap();
    let _prom = Proc(
        Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                work.path().join("prometheus.yml").display()
            ))
            .arg(format!("--storage.tsdb.path={}", work.path().join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Traffic while Prometheus scrapes, before the console exists.
    let handles = load(port, 6, 400, 4000);
    let scraped = eventually(Duration::from_secs(60), async || {
        let v = prom_query(
            prom_port,
            "sum(rate(vllm:generation_tokens_total{profile=\"ph\",host=\"prom-host\"}[60s]))",
        )
        .await;
        let x: f64 = v["data"]["result"][0]["value"][1].as_str()?.parse().ok()?;
        (x > 0.0).then_some(x)
    })
    .await;
    assert!(
        scraped.is_some(),
        "Prometheus never scraped the engine's tokens: {} / targets {}",
        prom_query(prom_port, "vllm:generation_tokens_total").await,
        client()
            .get(format!("http://127.0.0.1:{prom_port}/api/v1/targets"))
            .send()
            .await
            .map(|r| r.status().to_string())
            .unwrap_or_else(|e| e.to_string())
    );
    // Twenty seconds of history before the console exists: more than one step of 15 s.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let before_console = server::clock::now_ms();
    let console_port = free_port();
    let log = work.path().join("console.log");
    let _console = Console::start_with(&env, console_port, &[], std::fs::File::create(&log).unwrap().into());
    eventually(Duration::from_secs(20), async || console_engines(console_port).await)
        .await
        .unwrap();
    let vera = Session::login(&format!("http://127.0.0.1:{console_port}"), "vera").await;
    let series = |range: &'static str| {
        let vera = vera.clone();
        async move {
            let (code, body) = vera.call("get_series", &format!("profile=ph&range={range}")).await;
            assert_eq!(code, 200, "{body}");
            serde_json::from_str::<Vec<serde_json::Value>>(&body).unwrap()
        }
    };
    // The hour: points every 15 s from Prometheus, a console seconds old having no rollup yet.
    let hour = series("1h").await;
    assert!(!hour.is_empty(), "no points for the hour");
    assert!(hour.iter().any(|p| p["live"]["running"].as_f64().is_some()), "{hour:?}");
    assert!(
        hour.iter().any(|p| p["live"]["rates"]["generation_tokens_per_s"]
            .as_f64()
            .is_some_and(|g| g > 0.0)),
        "{hour:?}"
    );
    if let [a, b, ..] = hour.as_slice() {
        assert_eq!(
            b["t_ms"].as_i64().unwrap() - a["t_ms"].as_i64().unwrap(),
            15_000,
            "Prometheus' steps"
        );
    }
    // The quarter hour: the console's memory starts now; the minutes before are Prometheus'.
    let quarter = series("15m").await;
    assert!(
        quarter.iter().any(|p| p["t_ms"].as_i64().unwrap() < before_console),
        "nothing from before the console started: {quarter:?}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    for h in handles {
        h.abort();
    }
}
