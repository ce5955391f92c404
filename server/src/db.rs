//! The database: SQLite (WAL) with embedded migrations. Each feature keeps its own store
//! (profiles in `control::profiles`, runs in `runs::store`, changes in `review::store`, …)
//! over the pool opened here.

use anyhow::Context;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// Opens (creating if needed) the database and brings its schema up to date.
///
/// The console and CLI commands may open a fresh database at the same moment. Switching a new
/// database into WAL needs an exclusive lock that SQLite's busy timeout does not wait for, and
/// migrations are not safe to run twice concurrently, so both happen under a file lock.
pub async fn open(path: &Path) -> anyhow::Result<SqlitePool> {
    let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(true);
    let lock_path = path.with_extension("migrate.lock");
    let guard = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)?;
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| anyhow::anyhow!("locking {}: {e}", lock_path.display()))
    })
    .await??;
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .min_connections(1)
        .connect_with(opts)
        .await
        .with_context(|| format!("opening database {}", path.display()))?;
    let migrated = sqlx::migrate!("./migrations")
        .run(&pool)
        .await
        .context("running database migrations");
    drop(guard);
    migrated?;
    Ok(pool)
}
