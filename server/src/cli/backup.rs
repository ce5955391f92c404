//! `roofline backup FILE` (online: the console keeps running) and `roofline restore FILE`
//! (the console stopped: it holds the data directory's lock while it runs).

use crate::control::EngineControl;

pub async fn backup(control: &EngineControl, file: &std::path::Path, json: bool) -> i32 {
    match crate::db::backup(&control.store.pool(), file).await {
        Ok(bytes) => {
            control
                .journal()
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
    match crate::db::restore(&data.join("roofline.db"), file).await {
        Ok(saved) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"restored": file.display().to_string(), "previous": saved.display().to_string()})
                );
            } else {
                println!(
                    "restored the database from {}; the one it replaced is {}",
                    file.display(),
                    saved.display()
                );
            }
            0
        }
        Err(e) => {
            eprintln!("{e:#}");
            1
        }
    }
}
