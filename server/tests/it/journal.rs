//! The change journal from outside: CLI actions and profile changes are recorded with who and
//! why, and `roofline journal verify` finds a row edited behind the console's back.

use crate::common::*;

#[tokio::test(flavor = "multi_thread")]
async fn actions_are_journaled_and_tampering_is_evident() {
    let env = Env::new();
    let port = free_port();
    env.vllm_profile("j", port, "");
    let out = env.run(&["serve", "--profile", "j", "--reason", "first start after the move"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    let out = env.run(&["stop", "--profile", "j", "--reason", "maintenance window"]);
    assert_eq!(out.status.code(), Some(0));
    // A profile change is recorded as a diff.
    let file = env.data().join("j.env");
    let text = format!(
        "ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=4096\nPORT={port}\n",
        env.model().display()
    );
    std::fs::write(&file, text).unwrap();
    let out = env.run(&["profile", "import", file.to_str().unwrap(), "--name", "j"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));

    let list: serde_json::Value =
        serde_json::from_str(&str(&env.run(&["--json", "journal", "list", "--profile", "j"])).0).unwrap();
    let kinds: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        // The healthy start pins its versions (`known-good`) before the serve is recorded.
        vec!["profile-change", "stop", "serve", "known-good", "profile-import"],
        "newest first"
    );
    let serve = &list[2];
    assert_eq!(serve["reason"], "first start after the move");
    assert!(serve["who"].as_str().unwrap().ends_with("@cli"));
    assert_eq!(serve["detail"]["ok"], true);
    assert_eq!(serve["detail"]["engine"], "sim-vllm");
    let diff = list[0]["detail"]["diff"].to_string();
    assert!(
        diff.contains("+CONTEXT_LENGTH=4096") && diff.contains("-CONTEXT_LENGTH=8192"),
        "{diff}"
    );

    let ok = env.run(&["journal", "verify"]);
    assert_eq!(ok.status.code(), Some(0));
    assert!(str(&ok).0.contains("5 entries"), "{:?}", str(&ok));

    // Someone edits the database file directly (dropping the guard trigger first).
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", env.data().join("roofline.db").display()))
        .await
        .unwrap();
    sqlx::query("drop trigger journal_no_update")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("update journal set reason = 'routine' where kind = 'stop'")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let broken = env.run(&["journal", "verify"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(str(&broken).0.contains("BROKEN at entry #4"), "{:?}", str(&broken));
}
