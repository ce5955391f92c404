//! `roofline backup FILE` (online: the console keeps running) and `roofline restore FILE`
//! (the console stopped: it holds the data directory's lock while it runs).

use crate::context::Context;

pub async fn backup(ctx: &Context, file: &std::path::Path, json: bool) -> i32 {
    match crate::db::backup(&ctx.pool, file).await {
        Ok(bytes) => {
            ctx.journal
                .record(
                    "roofline",
                    "backup",
                    "database",
                    "roofline backup",
                    serde_json::json!({"file": file.display().to_string(), "bytes": bytes}),
                )
                .await;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"file": file.display().to_string(), "bytes": bytes})
                );
            } else {
                println!("backed up the database to {} ({bytes} bytes)", file.display());
            }
            0
        }
        Err(e) => {
            eprintln!("{e:#}");
            1
        }
    }
}

/// Runs before the database is opened: a restore must not migrate or hold the file it replaces.
pub async fn restore(data: &std::path::Path, file: &std::path::Path, json: bool) -> i32 {
    let _lock = match crate::db::console_lock(data, true) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e:#}");
            return 1;
        }
    };
    if crate::config::DataDir::open(data).is_ok_and(|d| d.config.database_url.is_some()) {
        eprintln!(
            "this console's database is the fleet's PostgreSQL (database_url): restore it with pg_restore, as the team restores its other databases; `roofline restore` replaces the data directory's SQLite file"
        );
        return 2;
    }
    let db = data.join("roofline.db");
    match crate::db::restore(&db, file).await {
        Ok(saved) => match after_restore(data, &db, file, &saved).await {
            Ok(report) => {
                if json {
                    println!("{report}");
                } else {
                    println!(
                        "restored the database from {} (sha256 {}); the one it replaced is {}",
                        file.display(),
                        report["sha256"].as_str().unwrap_or(""),
                        saved.display()
                    );
                    println!("every session was signed out; the journal is re-anchored at the restored head");
                    if let Some(names) = report["passwords_differ"].as_array().filter(|a| !a.is_empty()) {
                        let names: Vec<&str> = names.iter().filter_map(|n| n.as_str()).collect();
                        println!(
                            "these accounts have the backup's password again (changed or reset since): {}",
                            names.join(", ")
                        );
                    }
                }
                0
            }
            Err(e) => {
                eprintln!("restored the database, but: {e:#}");
                1
            }
        },
        Err(e) => {
            eprintln!("{e:#}");
            1
        }
    }
}

/// What a restore must do beyond putting the file in place: sign everybody out (sessions the
/// backup holds were valid then, not now), name the accounts whose password goes back to an
/// older one, re-anchor the journal at the restored head and journal the restore with the
/// file's hash.
async fn after_restore(
    data: &std::path::Path,
    db: &std::path::Path,
    file: &std::path::Path,
    saved: &std::path::Path,
) -> anyhow::Result<serde_json::Value> {
    let sha256 = crate::models::hash::sha256_file(file, &Default::default())?;
    let dir = crate::config::DataDir::open(data)?;
    let pool = crate::db::open(db).await?;
    let dropped = sqlx::query("delete from session").execute(&pool).await?.rows_affected();
    let passwords_differ = password_changes(&pool, saved).await.unwrap_or_default();
    let journal = crate::journal::Journal::new(pool.clone())
        .with_anchor(data.join("journal.head"))
        .with_key(dir.journal_key());
    let restored = format!("{} sha256:{sha256}", file.display());
    let anchor = journal.reanchor(&restored).await?;
    let detail = serde_json::json!({
        "file": file.display().to_string(),
        "sha256": sha256,
        "previous": saved.display().to_string(),
        "sessions_dropped": dropped,
        "passwords_differ": passwords_differ,
        "anchor": {"seq": anchor.seq, "hash": anchor.hash},
    });
    journal
        .append("roofline", "restore", "database", "roofline restore", detail.clone())
        .await?;
    pool.close().await;
    Ok(detail)
}

/// Accounts whose password hash in the restored database differs from the one it replaced.
async fn password_changes(pool: &crate::db::Pool, saved: &std::path::Path) -> anyhow::Result<Vec<String>> {
    use sqlx::Connection;
    use std::str::FromStr;
    if !saved.exists() {
        return Ok(Vec::new());
    }
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&format!("sqlite://{}", saved.display()))?.read_only(true);
    let mut old = sqlx::SqliteConnection::connect_with(&opts).await?;
    let before: Vec<(String, String)> = sqlx::query_as("select name, password_hash from account")
        .fetch_all(&mut old)
        .await?;
    old.close().await.ok();
    let now: Vec<(String, String)> = sqlx::query_as("select name, password_hash from account")
        .fetch_all(pool)
        .await?;
    Ok(now
        .into_iter()
        .filter(|(name, hash)| before.iter().any(|(n, h)| n == name && h != hash))
        .map(|(name, _)| name)
        .collect())
}
