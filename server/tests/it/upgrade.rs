//! Upgrade preflight end to end: `roofline upgrade-check` across the captured vLLM 0.33.0
//! help and the simulator's synthetic next release (a flag removed, one renamed, a switch
//! retyped, a parser renamed, a flag deprecated, a default moved), then the change through
//! review and the gate, whose metric step finds the family the new release renamed, with the
//! old profile one rollback away.

use crate::common::*;
use std::time::Duration;

const NEXT: &str =
    "[engines.sim-vllm-next]\nkind = \"vllm\"\nsimulator = true\nsimulator_version = \"0.34.0+synthetic\"\n";

fn profile_text(env: &Env, port: u16, engine: &str, parser: &str, extra: &str) -> String {
    format!(
        "ENGINE={engine}\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nTOOL_CALL_PARSER={parser}\nMAX_RUNNING_REQUESTS=8\nPORT={port}\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n{extra}",
        env.model().display()
    )
}

fn findings(check: &serde_json::Value) -> Vec<(String, String)> {
    check["flags"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["flag"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn upgrade_check_names_each_break_by_its_flag() {
    let env = Env::new();
    env.append_config(NEXT);
    let port = free_port();
    let extra = "EXTRA_ARGS='--long-prefill-token-threshold 0 --enable-chunked-prefill --disable-log-stats --enable-logging-iteration-details'\n";
    env.profile("up", &profile_text(&env, port, "sim-vllm", "llama3_json", extra));
    // The profile is fine on the installation it runs on.
    let out = env.run(&["flags", "--profile", "up"]);
    assert!(out.status.success(), "{:?}", str(&out));

    let out = env.run(&["upgrade-check", "--profile", "up", "--to", "sim-vllm-next", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", str(&out));
    let check: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(check["from_version"], "0.33.0");
    assert_eq!(check["to_version"], "0.34.0+synthetic");
    let found = findings(&check);
    for (kind, flag) in [
        ("removed", "--long-prefill-token-threshold"),
        ("renamed", "--enable-logging-iteration-details"),
        ("retyped", "--enable-chunked-prefill"),
        ("value-gone", "--tool-call-parser"),
        ("deprecated", "--disable-log-stats"),
        // The profile leaves the memory fraction to the engine, whose default moved.
        ("default-changed", "--gpu-memory-utilization"),
    ] {
        assert!(
            found.contains(&(kind.to_string(), flag.to_string())),
            "{kind} {flag} not in {found:?}"
        );
    }
    assert_eq!(found.len(), 6, "nothing else: {found:?}");
    let renamed = &check["flags"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "renamed")
        .unwrap()["to"];
    assert_eq!(renamed, "--log-iteration-details");
    let parser = check["flags"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "value-gone")
        .unwrap()
        .clone();
    assert_eq!(
        (parser["value"].as_str(), parser["suggestion"].as_str()),
        (Some("llama3_json"), Some("llama3"))
    );
    assert!(check["metrics"].is_null(), "no gate has scraped the new release yet");

    // The text report says what stops the start and what only warns.
    let out = env.run(&["upgrade-check", "--profile", "up", "--to", "sim-vllm-next"]);
    let text = str(&out).0;
    assert!(
        text.contains("BLOCKS  --tool-call-parser llama3_json: no longer a choice (closest: llama3)"),
        "{text}"
    );
    assert!(text.contains("WARN    --disable-log-stats: deprecated"), "{text}");
    assert!(text.contains("verdict: 4 findings stop the start"), "{text}");

    // Ignoring it would not get far: serve's preflight refuses it from the new release's own
    // help, and past the preflight the new release refuses the command line itself.
    let edited = profile_text(&env, port, "sim-vllm-next", "llama3_json", "");
    env.profile("up-next", &edited);
    let out = env.run(&["serve", "--profile", "up-next"]);
    assert!(!out.status.success(), "{:?}", str(&out));
    let said = format!("{:?}", str(&out));
    assert!(
        said.contains("--tool-call-parser") && said.contains("llama3_json"),
        "{said}"
    );
    assert!(said.contains("not started"), "{said}");
    let out = env.run(&["serve", "--profile", "up-next", "--no-preflight"]);
    assert!(!out.status.success(), "{:?}", str(&out));
    let said = format!("{:?}", str(&out));
    assert!(said.contains("invalid tool call parser: llama3_json"), "{said}");

    // Another engine is a new profile, not an upgrade; an unknown installation is named.
    let out = env.run(&["upgrade-check", "--profile", "up", "--to", "sim-sglang"]);
    assert!(str(&out).1.contains("not an upgrade"), "{:?}", str(&out));
    let out = env.run(&["upgrade-check", "--profile", "up", "--to", "vllm-9"]);
    assert!(
        str(&out).1.contains("no engine installation `vllm-9`"),
        "{:?}",
        str(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upgrade_goes_through_review_and_the_gate_which_checks_the_metric_names() {
    let env = Env::new();
    env.append_config(NEXT);
    let port = free_port();
    env.profile("ed", &profile_text(&env, port, "sim-vllm", "llama3_json", ""));
    env.serve_ok("ed");
    let (_console, alice, bob) = review_console(&env).await;

    // The editor's preflight for the edit as written: the parser name stops it...
    let moved = profile_text(&env, port, "sim-vllm-next", "llama3_json", "");
    let (status, body) = alice
        .call("upgrade_check", &format!("profile=ed&env_text={}", urlencode(&moved)))
        .await;
    assert_eq!(status, 200, "{body}");
    let check: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        findings(&check).contains(&("value-gone".into(), "--tool-call-parser".into())),
        "{check}"
    );
    // ...and with the parser's new name nothing does.
    let fixed = profile_text(&env, port, "sim-vllm-next", "llama3", "");
    let (status, body) = alice
        .call("upgrade_check", &format!("profile=ed&env_text={}", urlencode(&fixed)))
        .await;
    assert_eq!(status, 200, "{body}");
    let check: serde_json::Value = serde_json::from_str(&body).unwrap();
    let blocking: Vec<_> = findings(&check)
        .into_iter()
        .filter(|(k, _)| k != "default-changed" && k != "deprecated")
        .collect();
    assert!(blocking.is_empty(), "{check}");

    let form = format!(
        "profile=ed&env_text={}&reason={}&submit=true",
        urlencode(&fixed),
        urlencode("vLLM 0.34 as the runbook says")
    );
    let (status, body) = alice.call("propose_change", &form).await;
    assert_eq!(status, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    let (status, body) = review(&bob, id, true, "preflight clean").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = alice.call("start_change_gate", &format!("id={id}")).await;
    assert_eq!(status, 200, "{body}");
    let done = settle(&alice, id).await;
    assert_eq!(done["summary"]["state"], "active", "{done}");
    let steps = done["gate"]["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["model", "vram", "serve", "health", "metrics", "smoke", "bench"]);
    let metrics = &steps[4];
    assert_eq!(metrics["pass"], true, "{metrics}");
    assert_eq!(metrics["key"], "change-gate-metrics-warned", "{metrics}");
    assert!(
        metrics["detail"]
            .as_str()
            .unwrap()
            .contains("vllm:iteration_tokens_total_count"),
        "{metrics}"
    );

    // The preflight now carries what the gate scraped from the new release.
    let out = env.run(&["upgrade-check", "--profile", "ed", "--to", "sim-vllm-next", "--json"]);
    let check: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(check["metrics"]["change"], id, "{check}");
    let missing: Vec<&str> = check["metrics"]["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["signal"].as_str().unwrap())
        .collect();
    assert_eq!(missing, ["iterations"], "{check}");

    // The set it passed on is pinned, with the gate's bench (the launch procedure's step 6).
    let pinned = eventually(Duration::from_secs(20), async || {
        let (_, body) = alice.call("get_profile", "name=ed").await;
        let view: serde_json::Value = serde_json::from_str(&body).ok()?;
        let k = view["known_good"].clone();
        (k["install"] == "sim-vllm-next" && k["bench"].is_object()).then_some(k)
    })
    .await
    .expect("the gate pins the set it passed on");
    assert_eq!(pinned["facts"]["engine_version"], "0.34.0+synthetic", "{pinned}");
    assert_eq!(pinned["facts"]["torch"], "2.9.0+cu128", "{pinned}");
    assert!(pinned["bench"]["run"].as_i64().is_some(), "{pinned}");

    // The old profile is one step away.
    let (status, body) = alice
        .call("rollback_change", &format!("id={id}&reason=back+to+0.33"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(str(&env.run(&["profile", "show", "ed"]))
        .0
        .contains("ENGINE=sim-vllm\n"));
    eventually(Duration::from_secs(60), async || {
        (env.status("ed")["state"] == "healthy").then_some(())
    })
    .await
    .expect("the engine comes back on the previous release");
}
