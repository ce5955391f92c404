//! A profile change end to end over HTTP: proposed by an operator (validated, with a reason),
//! approved by somebody else (never the author), gated on the real simulator (serve, health,
//! smoke-toolcall, bench thresholds), active, and rolled back in one step; a failing gate
//! leaves the previous profile serving. Every step lands in the journal with who did it.

use crate::common::*;
use std::time::Duration;

fn propose(id: Option<i64>, env_text: &str, reason: &str, submit: bool) -> String {
    let id = id.map(|i| format!("id={i}&")).unwrap_or_default();
    format!(
        "{id}profile=ed&env_text={}&reason={}&submit={submit}",
        urlencode(env_text),
        urlencode(reason)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_proposes_an_approver_approves_the_gate_activates_and_rollback_restores() {
    let (env, port) = Env::serving_vllm("ed", "");
    for (n, r) in [("alice", "operator"), ("bob", "approver"), ("vera", "viewer")] {
        env.add_user(n, r);
    }
    let console_port = free_port();
    let _console = Console::start(&env, console_port);
    eventually(Duration::from_secs(30), async || console_engines(console_port).await).await;
    let base = format!("http://127.0.0.1:{console_port}");
    let alice = Session::login(&base, "alice").await;
    let bob = Session::login(&base, "bob").await;
    let vera = Session::login(&base, "vera").await;
    let _ = port;
    let active = str(&env.run(&["profile", "export", "ed"])).0;
    assert!(active.contains("CONTEXT_LENGTH=8192"), "{active}");
    let good = active.replace("CONTEXT_LENGTH=8192", "CONTEXT_LENGTH=4096");

    // Validation names the field; submitting needs a reason; viewers cannot propose.
    let (status, body) = alice
        .call(
            "propose_change",
            &propose(
                None,
                &good.replace("CONTEXT_LENGTH=4096", "MEM_FRACTION=1.5"),
                "x",
                true,
            ),
        )
        .await;
    assert!(status >= 400 && body.contains("MEM_FRACTION"), "{body}");
    let (status, body) = alice.call("propose_change", &propose(None, &good, " ", true)).await;
    assert!(status >= 400 && body.contains("reason"), "{body}");
    let (status, _) = vera.call("propose_change", &propose(None, &good, "r", true)).await;
    assert_eq!(status, 403);

    let (status, body) = alice
        .call(
            "propose_change",
            &propose(None, &good, "4k context for the 24 GiB card", true),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    // Bob writes a competing change before Alice's is active: it will go stale.
    let other = good.replace("CONTEXT_LENGTH=4096", "CONTEXT_LENGTH=2048");
    let (status, body) = bob
        .call("propose_change", &propose(None, &other, "even shorter", true))
        .await;
    assert_eq!(status, 200, "{body}");
    let bobs: i64 = body.trim().parse().unwrap();

    // Nobody approves their own change; operators cannot approve at all.
    let (status, body) = review(&bob, bobs, true, "").await;
    assert!(status >= 400 && body.contains("another approver"), "{body}");
    let (status, _) = review(&alice, id, true, "").await;
    assert_eq!(status, 403);
    // Discussion goes into the history; viewers read it but do not write.
    let (status, _) = vera.call("comment_change", &format!("id={id}&text=hm")).await;
    assert_eq!(status, 403);
    let (status, body) = bob
        .call("comment_change", &format!("id={id}&text=what+about+long+prompts%3F"))
        .await;
    assert_eq!(status, 200, "{body}");
    let c = change(&bob, id).await;
    assert_eq!(c["summary"]["state"], "submitted", "a comment is not a step");
    assert!(c["events"].to_string().contains("what about long prompts?"), "{c}");
    assert_eq!(c["allowed"], serde_json::json!(["approve", "request-changes"]));
    assert!(c["diff"].to_string().contains("+CONTEXT_LENGTH=4096"), "{c}");
    // Key by key, and the command line the console would run before and after.
    assert_eq!(
        c["keys"],
        serde_json::json!([{"key": "CONTEXT_LENGTH", "before": "8192", "after": "4096"}])
    );
    let argv = |side: &str| {
        c[side]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(argv("argv_before").contains("--max-model-len 8192"), "{c}");
    assert!(argv("argv_after").contains("--max-model-len 4096"), "{c}");
    let (status, body) = review(&bob, id, true, "looks right").await;
    assert_eq!(status, 200, "{body}");

    // The gate: the candidate is served in place and checked; the profile changes only now.
    assert!(!str(&env.run(&["profile", "show", "ed"]))
        .0
        .contains("CONTEXT_LENGTH=4096"));
    let (status, _) = vera.call("start_change_gate", &format!("id={id}")).await;
    assert_eq!(status, 403);
    let (status, body) = alice.call("start_change_gate", &format!("id={id}")).await;
    assert_eq!(status, 200, "{body}");
    // While the gate holds the profile, nobody serves, stops or restarts it under the gate
    // (it would test the wrong profile), from the CLI or the engine page.
    let out = env.run(&["stop", "--profile", "ed"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", str(&out));
    assert!(str(&out).1.contains("gate holds"), "{:?}", str(&out));
    let (status, body) = alice.call("run_engine_action", "profile=ed&action=restart").await;
    assert!(status >= 400 && body.contains("gate holds"), "{status} {body}");
    let done = settle(&alice, id).await;
    assert_eq!(done["summary"]["state"], "active", "{done}");
    let steps: Vec<&str> = done["gate"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["model", "vram", "serve", "health", "metrics", "smoke", "bench"]);
    assert!(done["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["pass"] == true));
    assert!(str(&env.run(&["profile", "show", "ed"]))
        .0
        .contains("CONTEXT_LENGTH=4096"));
    assert_eq!(
        env.status("ed")["state"],
        "healthy",
        "the active engine runs the new profile"
    );

    // Bob's change was written against the old profile: it cannot be approved now.
    let bobs_view = change(&alice, bobs).await;
    assert_eq!(bobs_view["stale"], true);

    // One action rolls back, restarting the engine on the previous profile.
    let (status, body) = alice
        .call("rollback_change", &format!("id={id}&reason=clients+need+8k"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(change(&alice, id).await["summary"]["state"], "rolled-back");
    assert!(!str(&env.run(&["profile", "show", "ed"]))
        .0
        .contains("CONTEXT_LENGTH=4096"));
    eventually(Duration::from_secs(60), async || {
        let restarted = alice
            .get("/api/journal.json?query=rollback%20of%20change")
            .send()
            .await
            .ok()?
            .text()
            .await
            .ok()?
            .contains("\"ok\":true");
        (restarted && env.status("ed")["state"] == "healthy").then_some(())
    })
    .await
    .expect("the engine comes back on the previous profile");

    // A candidate that cannot start fails its gate; the previous profile serves again.
    let broken = active.replace(&env.model().display().to_string(), "/etc");
    let (_, body) = alice
        .call("propose_change", &propose(None, &broken, "move the weights", true))
        .await;
    let bad: i64 = body.trim().parse().unwrap();
    review(&bob, bad, true, "").await;
    let (status, body) = alice.call("start_change_gate", &format!("id={bad}")).await;
    assert_eq!(status, 200, "{body}");
    let failed = settle(&alice, bad).await;
    assert_eq!(failed["summary"]["state"], "gate-failed", "{failed}");
    let restore = failed["gate"]["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(restore["name"], "restore");
    assert_eq!(restore["pass"], true, "{restore}");
    assert_eq!(env.status("ed")["state"], "healthy", "{failed} {}", env.status("ed"));
    assert!(!str(&env.run(&["profile", "show", "ed"])).0.contains("/etc"));

    // A candidate the calculator says cannot fit (12 GiB of an 80 GiB GPU for 15 GiB of
    // weights) is refused before the gate touches the engine: the active one keeps serving.
    let pid = env.status("ed")["pid"].clone();
    assert!(pid.is_u64(), "{}", env.status("ed"));
    let tight = format!("{active}\nMEM_FRACTION=0.15\n");
    let (_, body) = alice
        .call("propose_change", &propose(None, &tight, "share the GPU", true))
        .await;
    let tight_id: i64 = body.trim().parse().unwrap();
    review(&bob, tight_id, true, "").await;
    let (status, body) = alice.call("start_change_gate", &format!("id={tight_id}")).await;
    assert_eq!(status, 200, "{body}");
    let refused = settle(&alice, tight_id).await;
    assert_eq!(refused["summary"]["state"], "gate-failed", "{refused}");
    let steps = refused["gate"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "nothing after the calculator: {refused}");
    assert_eq!(steps[0]["name"], "model");
    assert_eq!(
        steps[0]["pass"], true,
        "the host only warns about the test model: {refused}"
    );
    assert_eq!(steps[1]["name"], "vram");
    assert_eq!(steps[1]["pass"], false);
    assert_eq!(steps[1]["key"], "change-gate-vram-weights-do-not-fit", "{refused}");
    assert_eq!(env.status("ed")["pid"], pid, "the active engine was not restarted");
    assert_eq!(env.status("ed")["state"], "healthy");

    // The journal tells the story with who did what.
    let journal: serde_json::Value = alice
        .get("/api/journal.json?query=ed")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let kinds: Vec<(String, String)> = journal
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_string(),
                e["who"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (kind, who) in [
        ("change-submitted", "alice"),
        ("change-approved", "bob"),
        ("gate-smoke", "alice"),
        ("gate-bench", "alice"),
        ("change-activated", "alice"),
        ("change-rolled-back", "alice"),
        ("gate-failed", "alice"),
    ] {
        assert!(
            kinds.iter().any(|(k, w)| k == kind && w == who),
            "{kind} by {who} missing from {kinds:?}"
        );
    }
    let verify = env.run(&["journal", "verify"]);
    assert!(verify.status.success(), "{:?}", str(&verify));
}

// The approval bound to the content hash the approver saw is tested through the router
// in-process (`router::an_approval_binds_to_the_content_the_approver_saw`): no process needed.

/// Deny by default through the review door (issue 42): a proposed change that names a flag the
/// console cannot check is refused naming it, and the reviewer reads what the policy read each
/// extra flag of the candidate as.
#[tokio::test(flavor = "multi_thread")]
async fn the_reviewer_reads_each_extra_flag_as_the_policy_read_it() {
    let (env, _port) = Env::serving_vllm("ed", "");
    env.add_user("alice", "operator");
    let console_port = free_port();
    let _console = Console::start(&env, console_port);
    eventually(Duration::from_secs(30), async || console_engines(console_port).await).await;
    let alice = Session::login(&format!("http://127.0.0.1:{console_port}"), "alice").await;
    let active = str(&env.run(&["profile", "export", "ed"])).0;
    for (extra, named) in [
        (
            "EXTRA_ARGS='--logging-config.pylogging_config_file=/x.json'",
            "--logging-config",
        ),
        ("EXTRA_ARGS='--chat-template roofline.toml'", "roofline.toml"),
        ("EXTRA_ARGS='--tool-server demo'", "--tool-server"),
    ] {
        let (status, body) = alice
            .call(
                "propose_change",
                &propose(None, &format!("{active}{extra}\n"), "a harmless line", true),
            )
            .await;
        assert!(status >= 400 && body.contains(named), "{extra}: {status} {body}");
    }
    let candidate = format!("{active}EXTRA_ARGS='--enforce-eager --seed 7 --dtype half'\n");
    let (status, body) = alice
        .call(
            "propose_change",
            &propose(None, &candidate, "eager for the profile run", true),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    let c = change(&alice, id).await;
    let classes = extra_flags(&c, "shown");
    assert_eq!(
        classes,
        [
            ("--enforce-eager".to_string(), "switch".to_string()),
            ("--seed 7".to_string(), "number".to_string()),
            ("--dtype half".to_string(), "choice".to_string())
        ]
    );
}
