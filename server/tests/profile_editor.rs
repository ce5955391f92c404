//! Saving from the profile editor: validated server-side (errors name the field), refused
//! without a reason or from another origin, and recorded in the journal as a diff.

mod common;
use common::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn edits_are_validated_reasoned_and_journaled() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("ed", port, "");
    let console_port = free_port();
    let _console = Console::start(&env, console_port);
    eventually(Duration::from_secs(30), async || console_engines(console_port).await).await;
    let base = format!("http://127.0.0.1:{console_port}");
    let c = client();
    let save = |text: String, reason: &str| {
        let body = format!("name=ed&env_text={}&reason={}", urlencode(&text), urlencode(reason));
        let req = c
            .post(format!("{base}/api/fn/save_profile"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        async move {
            let r = req.send().await.unwrap();
            (r.status().is_success(), r.text().await.unwrap())
        }
    };
    let good = format!(
        "ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=4096\nPORT={port}\n",
        env.model().display()
    );
    let (ok, text) = save(good.clone(), "").await;
    assert!(!ok && text.contains("reason"), "{text}");
    let (ok, text) = save(good.replace("CONTEXT_LENGTH=4096", "MEM_FRACTION=1.5"), "try").await;
    assert!(
        !ok && text.contains("MEM_FRACTION"),
        "the error names the field: {text}"
    );
    let (ok, text) = save(good.clone(), "shorter context for the 24 GiB card").await;
    assert!(ok, "{text}");
    assert!(str(&env.run(&["profile", "show", "ed"]))
        .0
        .contains("CONTEXT_LENGTH=4096"));
    let list = json(c.get(format!("{base}/api/journal.json?query=24%20GiB"))).await;
    assert_eq!(list[0]["kind"], "profile-change");
    assert_eq!(list[0]["who"], "operator@console");
    assert!(list[0]["detail"]["diff"].to_string().contains("+CONTEXT_LENGTH=4096"));
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
