//! Operating the console's own state: `/healthz` and `/readyz`, `roofline backup` while the
//! console runs, `roofline restore` only once it stopped, and the copy the console makes of
//! an existing database before a migration changes its schema.

use crate::common::*;
use std::time::Duration;

fn profiles(env: &Env) -> String {
    str(&env.run(&["profile", "list"])).0
}

#[tokio::test(flavor = "multi_thread")]
async fn backup_online_restore_offline_and_a_copy_before_each_migration() {
    let env = Env::new();
    env.vllm_profile("kept", free_port(), "");
    let port = free_port();
    let console = Console::start(&env, port);
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let base = format!("http://127.0.0.1:{port}");
    let healthz = client().get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(healthz.status(), 200);
    let readyz = client().get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(readyz.status(), 200);
    assert_eq!(readyz.text().await.unwrap(), "ready\n");

    // Online: the console keeps running while the copy is taken; never over a file.
    let file = env.data().join("nightly.db");
    let out = env.run(&["backup", file.to_str().unwrap()]);
    assert!(out.status.success(), "{:?}", str(&out));
    assert!(file.metadata().unwrap().len() > 0);
    let out = env.run(&["backup", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(str(&out).1.contains("never overwrites"), "{:?}", str(&out));
    assert!(str(&env.run(&["journal", "list"])).0.contains("backup"));

    // Not while the console runs.
    env.vllm_profile("later", free_port(), "");
    let out = env.run(&["restore", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(str(&out).1.contains("a console is running"), "{:?}", str(&out));
    drop(console);

    // Garbage is refused before anything is replaced.
    let junk = env.data().join("junk.db");
    std::fs::write(&junk, "not a database at all, just text").unwrap();
    let out = env.run(&["restore", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{:?}", str(&out));
    assert!(profiles(&env).contains("later"));

    let out = env.run(&["restore", file.to_str().unwrap()]);
    assert!(out.status.success(), "{:?}", str(&out));
    let listed = profiles(&env);
    assert!(listed.contains("kept") && !listed.contains("later"), "{listed}");
    let kept_aside = std::fs::read_dir(env.data()).unwrap().flatten().any(|e| {
        e.file_name()
            .to_string_lossy()
            .starts_with("roofline.db.before-restore-")
    });
    assert!(kept_aside, "the replaced database is kept");

    // A database from before the newest migration (here: the backup with that migration
    // undone) is copied before the console migrates it.
    let old = env.data().join("old.db");
    std::fs::copy(&file, &old).unwrap();
    let newest = {
        use sqlx::Connection;
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", old.display()))
            .await
            .unwrap();
        let newest: i64 = sqlx::query_scalar("select max(version) from _sqlx_migrations")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        sqlx::query("delete from _sqlx_migrations where version = $1")
            .bind(newest)
            .execute(&mut conn)
            .await
            .unwrap();
        // Undo what the newest migration made: every table, index and trigger its file
        // creates (read from the migration itself, so the test follows the next one).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{newest}_"))
            })
            .unwrap();
        let sql = std::fs::read_to_string(file).unwrap().to_lowercase();
        let mut made: Vec<(String, String)> = Vec::new();
        let mut added: Vec<(String, String)> = Vec::new();
        for line in sql.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["create", kind @ ("table" | "index" | "trigger"), name, ..] => {
                    made.push((kind.to_string(), name.trim_end_matches('(').to_string()))
                }
                ["alter", "table", table, "add", "column", column, ..] => {
                    added.push((table.to_string(), column.to_string()))
                }
                _ => {}
            }
        }
        assert!(
            !made.is_empty() || !added.is_empty(),
            "the newest migration creates nothing this test can undo"
        );
        for (table, column) in added {
            sqlx::query(&format!("alter table {table} drop column {column}"))
                .execute(&mut conn)
                .await
                .unwrap();
        }
        // Triggers and indexes first, then tables.
        made.sort_by_key(|(kind, _)| kind == "table");
        for (kind, name) in made {
            sqlx::query(&format!("drop {kind} if exists {name}"))
                .execute(&mut conn)
                .await
                .unwrap();
        }
        conn.close().await.unwrap();
        newest
    };
    let out = env.run(&["restore", old.to_str().unwrap()]);
    assert!(out.status.success(), "{:?}", str(&out));
    assert!(profiles(&env).contains("kept"));
    let backups: Vec<String> = std::fs::read_dir(env.data().join("backups"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        backups
            .iter()
            .any(|b| b.starts_with(&format!("roofline-before-{newest}-"))),
        "{backups:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_logs_carry_one_line_per_request_with_its_id_and_the_build_is_a_metric() {
    let env = Env::new();
    let port = free_port();
    let mut child = std::process::Command::new(BIN)
        .args([
            "--data",
            env.data().to_str().unwrap(),
            "--log-format",
            "json",
            "console",
            "--addr",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let resp = client()
        .get(format!("http://127.0.0.1:{port}/healthz?token=secret"))
        .send()
        .await
        .unwrap();
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_string();
    let metrics = client()
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("roofline_build_info{version=\""), "{metrics}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let line = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["fields"]["request_id"] == id.as_str())
        .unwrap_or_else(|| panic!("no JSON line for request {id}: {log}"));
    assert_eq!(line["fields"]["path"], "/healthz", "{line}");
    assert_eq!(line["fields"]["status"], 200, "{line}");
    assert!(
        !line.to_string().contains("secret"),
        "the query is never logged: {line}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_says_503_while_the_database_takes_no_writes() {
    use sqlx::Connection;
    let env = Env::new();
    let port = free_port();
    let _console = Console::start(&env, port);
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let url = format!("http://127.0.0.1:{port}/readyz");
    assert_eq!(client().get(&url).send().await.unwrap().status(), 200);
    // Another process holds the write lock (a stuck migration, a backup tool gone wrong).
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", env.data().join("roofline.db").display()))
        .await
        .unwrap();
    sqlx::query("begin immediate").execute(&mut conn).await.unwrap();
    // The database's answer is kept for a second.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let resp = client()
        .get(&url)
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    assert!(resp.text().await.unwrap().contains("database not writable"));
    // The liveness check does not depend on it.
    let healthz = client()
        .get(format!("http://127.0.0.1:{port}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(healthz.status(), 200);
    sqlx::query("rollback").execute(&mut conn).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(client().get(&url).send().await.unwrap().status(), 200);
    // Within the second, a burst of probes takes the write lock once, not once per probe.
    let started = std::time::Instant::now();
    sqlx::query("begin immediate").execute(&mut conn).await.unwrap();
    for _ in 0..20 {
        assert_eq!(client().get(&url).send().await.unwrap().status(), 200);
    }
    assert!(started.elapsed() < Duration::from_secs(1), "answered from the cache");
    sqlx::query("rollback").execute(&mut conn).await.unwrap();
}

/// Runs SQL on the data directory's database behind the console's back (as someone with the
/// file could); the rows of the last statement, each column as text, joined by `|`.
async fn db_query(env: &Env, sql: &str) -> Vec<String> {
    use sqlx::{Connection, Row};
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", env.data().join("roofline.db").display()))
        .await
        .unwrap();
    let rows = sqlx::raw_sql(sql).fetch_all(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    rows.iter()
        .map(|r| {
            (0..r.len())
                .map(|i| {
                    r.try_get::<i64, _>(i)
                        .map(|n| n.to_string())
                        .or_else(|_| r.try_get::<String, _>(i))
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// Issue 29, items 2 and 4. A restore was copied with the backup's own mode (0644 made the
/// database world-readable), brought back the sessions that had been signed out, and left no
/// journal entry. Deleting the newest journal rows and resetting the sequence was reported
/// as "truncated" only until the next append, then "intact".
#[tokio::test(flavor = "multi_thread")]
async fn a_restore_is_private_signs_everyone_out_is_journaled_and_the_journal_cannot_be_rewound() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.add_user("alice", "admin");
    env.vllm_profile("kept", free_port(), "");
    let port = free_port();
    let console = Console::start(&env, port);
    let base = format!("http://127.0.0.1:{port}");
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    Session::login(&base, "alice").await;
    let file = env.data().join("nightly.db");
    assert!(env.run(&["backup", file.to_str().unwrap()]).status.success());
    drop(console);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(db_query(&env, "select count(*) from session").await, ["1"]);

    let out = env.run(&["restore", file.to_str().unwrap()]);
    assert!(out.status.success(), "{:?}", str(&out));
    let mode = std::fs::metadata(env.data().join("roofline.db"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the restored database is private");
    assert_eq!(
        db_query(&env, "select count(*) from session").await,
        ["0"],
        "everyone signs in again"
    );
    let sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(std::fs::read(&file).unwrap()))
    };
    let journal = str(&env.run(&["journal", "list", "--json"])).0;
    assert!(journal.contains("\"restore\""), "{journal}");
    assert!(journal.contains(&sha), "the restore names the file's hash: {journal}");
    let verify = env.run(&["journal", "verify"]);
    assert!(verify.status.success(), "{:?}", str(&verify));

    // Someone with the database file deletes the newest rows and resets the sequence.
    env.vllm_profile("more", free_port(), "");
    env.vllm_profile("evenmore", free_port(), "");
    let newest: i64 = db_query(&env, "select max(seq) from journal").await[0].parse().unwrap();
    db_query(
        &env,
        &format!(
            "drop trigger journal_no_delete; delete from journal where seq > {}; update sqlite_sequence set seq = {} where name = 'journal';",
            newest - 2,
            newest - 2
        ),
    )
    .await;
    // The next change is refused a journal row (it waits in the spool) ...
    env.vllm_profile("cover", free_port(), "");
    assert_eq!(
        db_query(&env, "select max(seq) from journal").await[0],
        (newest - 2).to_string(),
        "nothing is appended over a rewound journal"
    );
    // ... and verify keeps saying so.
    let verify = env.run(&["journal", "verify"]);
    assert_eq!(verify.status.code(), Some(1), "{:?}", str(&verify));
    assert!(
        str(&verify).0.contains("truncated") || str(&verify).1.contains("truncated"),
        "{:?}",
        str(&verify)
    );
    // The console says so on /readyz and in every page's header.
    let console = Console::start(&env, port);
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let readyz = client().get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(readyz.status(), 503);
    assert!(readyz.text().await.unwrap().contains("journal"));
    let s = Session::login(&base, "alice").await;
    let page = s.get("/journal").send().await.unwrap().text().await.unwrap();
    assert!(page.contains("journal-alarm"), "the header shows the alarm");
    drop(console);
}

/// Issue 29, item 6: the export built up to 100,000 entries in memory per request (four
/// parallel exports took the console from 404 to 1,326 MiB). It streams a page at a time now,
/// every entry of the journal, and a third export while two run is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_journal_export_streams_every_entry_and_runs_two_at_a_time() {
    const N: usize = 2_000;
    let env = Env::new();
    for who in ["vera", "olga", "root"] {
        env.add_user(who, "viewer");
    }
    {
        let data = server::config::DataDir::open(env.data()).unwrap();
        let pool = server::db::open(&data.db_path()).await.unwrap();
        let j = server::journal::Journal::new(pool).with_anchor(env.data().join("journal.head"));
        let bulk = "x".repeat(4_000);
        for i in 0..N {
            j.append(
                "ops",
                "note",
                "bulk",
                &format!("entry {i}"),
                serde_json::json!({"bulk": bulk}),
            )
            .await
            .unwrap();
        }
    }
    let port = free_port();
    let _console = Console::start(&env, port);
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let base = format!("http://127.0.0.1:{port}");
    let vera = Session::login(&base, "vera").await;
    let olga = Session::login(&base, "olga").await;
    let root = Session::login(&base, "root").await;
    // Two exports (of two accounts: one account runs one at a time) that stop reading hold
    // their places ...
    let a = vera.get("/api/journal.json").send().await.unwrap();
    let b = olga.get("/api/journal.json").send().await.unwrap();
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (200, 200));
    let mine = vera.get("/api/journal.json").send().await.unwrap();
    assert_eq!(mine.status(), 429, "a second export of the same account");
    assert!(mine.text().await.unwrap().contains("this account"));
    let c = root.get("/api/journal.json").send().await.unwrap();
    assert_eq!(c.status(), 429, "a third export while two run");
    // ... which they give back when read to the end (or dropped).
    let all: Vec<serde_json::Value> = a.json().await.unwrap();
    drop(b);
    assert!(all.len() >= N, "{} entries", all.len());
    assert!(
        all.windows(2).all(|w| w[0]["seq"].as_i64() > w[1]["seq"].as_i64()),
        "newest first"
    );
    let some: Vec<serde_json::Value> = eventually(Duration::from_secs(10), async || {
        let r = vera.get("/api/journal.json?query=entry%201999").send().await.ok()?;
        (r.status() == 200).then_some(())?;
        r.json().await.ok()
    })
    .await
    .unwrap();
    assert_eq!(some.len(), 1);
}
