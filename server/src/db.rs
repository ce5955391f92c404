//! The database: SQLite (WAL) with embedded migrations. Each feature keeps its own store
//! (profiles in `profile_store`, runs in `runs::store`, changes in `changes::store`, …)
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
    let migrator = sqlx::migrate!("./migrations");
    let migrated = async {
        backup_before_migrations(&migrator, &pool, path).await?;
        migrator.run(&pool).await.context("running database migrations")
    }
    .await;
    drop(guard);
    migrated?;
    Ok(pool)
}

/// An existing database about to gain schema migrations is copied first
/// (`backups/roofline-before-VERSION-MS.db` next to it): an upgrade of the console that goes
/// wrong can be undone with `roofline restore`.
async fn backup_before_migrations(
    migrator: &sqlx::migrate::Migrator,
    pool: &SqlitePool,
    path: &Path,
) -> anyhow::Result<()> {
    let applied: Vec<i64> = match sqlx::query_scalar("select version from _sqlx_migrations where success")
        .fetch_all(pool)
        .await
    {
        Ok(v) => v,
        // A new database: nothing to keep.
        Err(_) => return Ok(()),
    };
    if applied.is_empty() {
        return Ok(());
    }
    let Some(first) = migrator.iter().map(|m| m.version).find(|v| !applied.contains(v)) else {
        return Ok(());
    };
    let dir = path.parent().unwrap_or(Path::new(".")).join("backups");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let dest = dir.join(format!("roofline-before-{first}-{}.db", crate::clock::now_ms()));
    backup(pool, &dest)
        .await
        .context("backing up the database before its schema changes")?;
    tracing::info!(backup = %dest.display(), "database backed up before migration {first}");
    Ok(())
}

/// A consistent copy of the live database (`VACUUM INTO`: readers and writers go on); never
/// overwrites. Returns the copy's size in bytes.
pub async fn backup(pool: &SqlitePool, dest: &Path) -> anyhow::Result<u64> {
    if dest.exists() {
        anyhow::bail!("{} exists: a backup never overwrites a file", dest.display());
    }
    sqlx::query("VACUUM INTO $1")
        .bind(dest.to_string_lossy().into_owned())
        .execute(pool)
        .await
        .with_context(|| format!("writing the backup {}", dest.display()))?;
    Ok(std::fs::metadata(dest)?.len())
}

/// The lock a running console holds (shared) on its data directory and `restore` takes
/// (exclusive): a database is never replaced under a console.
pub fn console_lock(data: &Path, exclusive: bool) -> anyhow::Result<nix::fcntl::Flock<std::fs::File>> {
    let path = data.join("console.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    let how = if exclusive {
        nix::fcntl::FlockArg::LockExclusiveNonblock
    } else {
        nix::fcntl::FlockArg::LockSharedNonblock
    };
    nix::fcntl::Flock::lock(file, how).map_err(|(_, e)| match e {
        nix::errno::Errno::EWOULDBLOCK if exclusive => {
            anyhow::anyhow!("a console is running on this data directory: stop it first")
        }
        e => anyhow::anyhow!("locking {}: {e}", path.display()),
    })
}

/// Replaces the database at `db` with the backup `src`, after checking that `src` is an intact
/// Roofline database no newer than this binary. The database it replaces is kept beside it
/// (`roofline.db.before-restore-MS`, with its WAL). Returns that path.
pub async fn restore(db: &Path, src: &Path) -> anyhow::Result<std::path::PathBuf> {
    use sqlx::Connection;
    // The copy is what gets checked and then renamed into place: a backup file swapped after
    // the check cannot slip in.
    let tmp = db.with_extension("db.restoring");
    let _ = std::fs::remove_file(&tmp);
    std::fs::copy(src, &tmp).with_context(|| format!("copying {}", src.display()))?;
    // `copy` takes the backup's own mode: a 0644 backup would make the database (password
    // hashes, sessions, the journal) world-readable.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("making {} private", tmp.display()))?;
    }
    let checked = async {
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", tmp.display()))?.read_only(true);
        let mut conn = sqlx::SqliteConnection::connect_with(&opts)
            .await
            .with_context(|| format!("opening the backup {}", src.display()))?;
        let check: String = sqlx::query_scalar("pragma integrity_check")
            .fetch_one(&mut conn)
            .await
            .with_context(|| format!("{} is not an SQLite database", src.display()))?;
        if check != "ok" {
            anyhow::bail!("{} fails SQLite's integrity check: {check}", src.display());
        }
        let newest: Option<i64> = sqlx::query_scalar("select max(version) from _sqlx_migrations where success")
            .fetch_one(&mut conn)
            .await
            .with_context(|| format!("{} is not a Roofline database (no migrations table)", src.display()))?;
        conn.close().await.ok();
        let ours = sqlx::migrate!("./migrations").iter().map(|m| m.version).max();
        if newest > ours {
            anyhow::bail!(
                "{} comes from a newer Roofline (schema {}): restore it with that version",
                src.display(),
                newest.unwrap_or(0)
            );
        }
        Ok(())
    }
    .await;
    if let Err(e) = checked {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let saved = db.with_extension(format!("db.before-restore-{}", crate::clock::now_ms()));
    if db.exists() {
        std::fs::rename(db, &saved).with_context(|| format!("moving {} aside", db.display()))?;
        for ext in ["-wal", "-shm"] {
            let side = std::path::PathBuf::from(format!("{}{ext}", db.display()));
            if side.exists() {
                std::fs::rename(&side, format!("{}{ext}", saved.display()))?;
            }
        }
    }
    std::fs::rename(&tmp, db)?;
    Ok(saved)
}
