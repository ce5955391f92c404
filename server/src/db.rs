//! The database: SQLite (WAL) in the data directory by default, or a PostgreSQL shared by every
//! console of a fleet (`database_url` in host configuration), both through sqlx's `Any` driver
//! with embedded migrations of the same schema, version for version (`migrations/sqlite`,
//! `migrations/postgres`). Each feature keeps its own store (profiles in `profile_store`, runs
//! in `runs::store`, changes in `changes::store`, …) over the pool opened here, in SQL both
//! back ends read the same way: `$N` parameters, timestamps bound from the clock, upserts as
//! `on conflict`.

use anyhow::Context;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
use sqlx::ConnectOptions;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// The pool every store reads and writes through.
pub type Pool = sqlx::AnyPool;
/// One connection of it (a transaction's, a lock holder's).
pub type Conn = sqlx::AnyConnection;

/// Which database is behind a pool: where SQL must differ (a write lock, a backup).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn of(pool: &Pool) -> Backend {
        match pool.connect_options().database_url.scheme() {
            "postgres" | "postgresql" => Backend::Postgres,
            _ => Backend::Sqlite,
        }
    }
}

fn install_drivers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        sqlx::any::install_drivers(&[sqlx::sqlite::any::DRIVER, sqlx::postgres::any::DRIVER]).unwrap_or(())
    });
}

/// The database host configuration names: PostgreSQL at `database_url` (its password from
/// `database_password_file` when set), else the data directory's SQLite file.
pub async fn connect(data: &crate::config::DataDir) -> anyhow::Result<Pool> {
    match &data.config.database_url {
        Some(url) => {
            let password = match &data.config.database_password_file {
                Some(f) => Some(crate::config::read_secret_file(&data.resolve(f)).context("database_password_file")?),
                None => None,
            };
            open_postgres(url, password.as_deref(), POSTGRES_CONNECTIONS).await
        }
        None => open(&data.db_path()).await,
    }
}

/// Connections one console keeps to a shared PostgreSQL (and one more listening for jobs):
/// fifty hosts hold about 250, so the server's `max_connections` must allow that (PostgreSQL's
/// default is 100; BENCHMARKS.md "Fifty hosts on one PostgreSQL").
pub const POSTGRES_CONNECTIONS: u32 = 4;

/// The longest a request waits for a connection to a shared PostgreSQL.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the database answers, as this console's heartbeat last found it: `None` while it
/// does, the time it stopped answering otherwise. One per process, as a console talks to one
/// database: the parts that must keep working without it (sessions, the journal, the
/// profiles of running engines) read it to answer from what they hold instead of waiting on
/// a database that is gone, and the header states it.
pub fn health() -> &'static Health {
    static HEALTH: std::sync::OnceLock<Health> = std::sync::OnceLock::new();
    HEALTH.get_or_init(|| Health(tokio::sync::watch::Sender::new(None)))
}

/// The database is away (the heartbeat cannot write): what can wait is skipped instead of
/// waiting [`ACQUIRE_TIMEOUT`] for a connection each time, so this host's own control answers
/// at once in its degraded mode.
pub fn away() -> bool {
    health().down_since().is_some()
}

/// Errors that say the database could not be reached, not that it answered no.
pub fn unreachable(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
    )
}

/// Whether an error means the database is gone, for the parts that then answer from what
/// they hold (remembered sessions): an unreachable database, but a pool time-out only while
/// the heartbeat also says the database is away. A pool exhausted by load is a busy database
/// that still answers: reading it as an outage honoured a disabled account's remembered
/// session.
pub fn outage(e: &sqlx::Error) -> bool {
    outage_given(e, away())
}

fn outage_given(e: &sqlx::Error, away: bool) -> bool {
    unreachable(e) && (away || !matches!(e, sqlx::Error::PoolTimedOut))
}

/// Whether the database takes a write now: a statement that changes nothing, in a transaction
/// rolled back (a timeout that drops it midway still rolls back; a raw `BEGIN` would go back to
/// the pool with SQLite's write lock held). One statement both back ends read: `where 0` was
/// SQLite's dialect, and PostgreSQL refused it ("argument of WHERE must be type boolean"), so
/// `/readyz` answered 503 on every PostgreSQL console. A read-only PostgreSQL (a standby after
/// a failover) refuses it too, as it should.
pub async fn write_probe(pool: &Pool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("update _sqlx_migrations set version = version where 1 = 0")
        .execute(&mut *tx)
        .await?;
    tx.rollback().await
}

/// See [`health`].
#[derive(Debug)]
pub struct Health(tokio::sync::watch::Sender<Option<i64>>);

impl Health {
    /// Since when (ms) the database has not answered, if it does not.
    pub fn down_since(&self) -> Option<i64> {
        *self.0.borrow()
    }

    /// The heartbeat failed at `now_ms`; returns whether this is news.
    pub fn set_down(&self, now_ms: i64) -> bool {
        self.0.send_if_modified(|s| s.is_none() && s.replace(now_ms).is_none())
    }

    /// The heartbeat was written; returns whether the database was away until now.
    pub fn set_up(&self) -> bool {
        self.0.send_if_modified(|s| s.take().is_some())
    }

    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<Option<i64>> {
        self.0.subscribe()
    }
}

/// Connects to a PostgreSQL (`postgres://…`) and brings its schema up to date. Consoles on
/// several hosts may start at once: sqlx's migrator holds PostgreSQL's advisory lock while it
/// migrates, so each migration runs once.
pub async fn open_postgres(url: &str, password: Option<&str>, max_connections: u32) -> anyhow::Result<Pool> {
    let pool = postgres_options(max_connections)
        .connect_with(postgres_url(url, password)?)
        .await
        .with_context(|| format!("connecting to the database {}", crate::config::redacted(url)))?;
    sqlx::migrate!("./migrations/postgres")
        .run(&pool)
        .await
        .context("running database migrations")?;
    Ok(pool)
}

/// A pool over the shared PostgreSQL that connects when first used: what the CLI works with
/// on a host cut off from the database (the degraded mode), where only this host's engines
/// are touched and the journal entry waits in the spool.
pub fn lazy_postgres(data: &crate::config::DataDir) -> anyhow::Result<Pool> {
    let Some(url) = &data.config.database_url else {
        anyhow::bail!("no database_url: the data directory's SQLite needs no network");
    };
    let password = match &data.config.database_password_file {
        Some(f) => Some(crate::config::read_secret_file(&data.resolve(f)).context("database_password_file")?),
        None => None,
    };
    Ok(postgres_options(POSTGRES_CONNECTIONS).connect_lazy_with(postgres_url(url, password.as_deref())?))
}

fn postgres_options(max_connections: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max_connections.max(1))
        .min_connections(1)
        // Bounded, so that with the network to the database gone a request fails (and the
        // degraded mode takes over) within seconds instead of waiting on the pool.
        .acquire_timeout(ACQUIRE_TIMEOUT)
}

fn postgres_url(url: &str, password: Option<&str>) -> anyhow::Result<AnyConnectOptions> {
    install_drivers();
    let mut opts = sqlx::postgres::PgConnectOptions::from_str(url)
        .map_err(|e| {
            anyhow::anyhow!(
                "database_url: not a PostgreSQL URL ({})",
                crate::config::redacted(&e.to_string())
            )
        })?
        .application_name("roofline");
    if !matches!(url.split(':').next(), Some("postgres" | "postgresql")) {
        anyhow::bail!("database_url: must start with postgres:// (SQLite is the data directory's own file)");
    }
    if let Some(p) = password {
        opts = opts.password(p);
    }
    Ok(AnyConnectOptions::from_url(&opts.to_url_lossy())
        .context("database_url")?
        .log_slow_statements(tracing::log::LevelFilter::Warn, Duration::from_secs(2)))
}

/// Opens (creating if needed) an SQLite database and brings its schema up to date.
///
/// The console and CLI commands may open a fresh database at the same moment. Switching a new
/// database into WAL needs an exclusive lock that SQLite's busy timeout does not wait for, and
/// migrations are not safe to run twice concurrently, so both happen under a file lock.
pub async fn open(path: &Path) -> anyhow::Result<Pool> {
    install_drivers();
    let opts = SqliteConnectOptions::new().filename(path).create_if_missing(true);
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
    // WAL is a property of the file: set once, here, under the lock.
    {
        use sqlx::Connection;
        let conn = sqlx::SqliteConnection::connect_with(&opts.clone().journal_mode(SqliteJournalMode::Wal))
            .await
            .with_context(|| format!("opening database {}", path.display()))?;
        conn.close().await.ok();
    }
    let any = AnyConnectOptions::from_url(&opts.to_url_lossy())
        .with_context(|| format!("opening database {}", path.display()))?;
    let pool = AnyPoolOptions::new()
        .max_connections(4)
        .min_connections(1)
        .after_connect(|conn, _| {
            Box::pin(async move {
                use sqlx::Executor;
                conn.execute("pragma busy_timeout = 10000").await?;
                conn.execute("pragma foreign_keys = on").await?;
                Ok(())
            })
        })
        .connect_with(any)
        .await
        .with_context(|| format!("opening database {}", path.display()))?;
    let migrator = sqlx::migrate!("./migrations/sqlite");
    let migrated = async {
        backup_before_migrations(&migrator, &pool, path).await?;
        migrator.run(&pool).await.context("running database migrations")
    }
    .await;
    drop(guard);
    migrated?;
    Ok(pool)
}

/// Begins a transaction that holds the write lock named `lock` from its first statement, so
/// that what it reads (the journal's head, the active profile, the admins) cannot change
/// before it writes: SQLite's `begin immediate` (the database's one write lock),
/// PostgreSQL's transaction-scoped advisory lock (held by one console of the fleet at a time,
/// released at commit or rollback). A transaction sqlx tracks: dropped before its commit (a
/// request cancelled midway) it rolls back, never going back to the pool holding the lock.
pub async fn begin_write(pool: &Pool, lock: i64) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
    match Backend::of(pool) {
        Backend::Sqlite => pool.begin_with("begin immediate").await,
        Backend::Postgres => {
            let mut tx = pool.begin().await?;
            sqlx::query("select count(*) from (select pg_advisory_xact_lock($1)) as held")
                .bind(lock)
                .execute(&mut *tx)
                .await?;
            Ok(tx)
        }
    }
}

/// An existing database about to gain schema migrations is copied first
/// (`backups/roofline-before-VERSION-MS.db` next to it): an upgrade of the console that goes
/// wrong can be undone with `roofline restore`.
async fn backup_before_migrations(migrator: &sqlx::migrate::Migrator, pool: &Pool, path: &Path) -> anyhow::Result<()> {
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
pub async fn backup(pool: &Pool, dest: &Path) -> anyhow::Result<u64> {
    if Backend::of(pool) == Backend::Postgres {
        anyhow::bail!("the database is PostgreSQL (database_url): back it up with pg_dump, as the team backs up its other databases");
    }
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
        let ours = sqlx::migrate!("./migrations/sqlite").iter().map(|m| m.version).max();
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

/// Databases for the store tests: each test runs against SQLite and, where the test run
/// started one (`scripts/postgres.sh`, `ROOFLINE_TEST_PG`), a PostgreSQL database of its own.
/// `ROOFLINE_REQUIRE_PG=1` (set by `scripts/test.sh`) turns a missing PostgreSQL into a
/// failure rather than a skip.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Backend, Pool};

    pub struct TestDb {
        pub pool: Pool,
        pub backend: Backend,
        /// What another console opens: the SQLite file, or the PostgreSQL URL.
        target: String,
        _dir: Option<tempfile::TempDir>,
    }

    impl TestDb {
        /// A second console on the same database (another process on this host for SQLite,
        /// another host for PostgreSQL), with its own pool and connections.
        pub async fn another_console(&self) -> Pool {
            match self.backend {
                Backend::Sqlite => super::open(std::path::Path::new(&self.target)).await.unwrap(),
                Backend::Postgres => super::open_postgres(&self.target, None, 4).await.unwrap(),
            }
        }
    }

    pub async fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roofline.db");
        TestDb {
            pool: super::open(&path).await.unwrap(),
            backend: Backend::Sqlite,
            target: path.display().to_string(),
            _dir: Some(dir),
        }
    }

    /// A fresh PostgreSQL database (`t_` and random hex) on the test run's server.
    pub async fn postgres() -> Option<TestDb> {
        use sqlx::{Connection, Executor};
        let Ok(admin) = std::env::var("ROOFLINE_TEST_PG") else {
            assert!(
                std::env::var("ROOFLINE_REQUIRE_PG").as_deref() != Ok("1"),
                "ROOFLINE_REQUIRE_PG=1 but ROOFLINE_TEST_PG is not set (scripts/postgres.sh start DIR prints it)"
            );
            eprintln!("no ROOFLINE_TEST_PG: this store test runs on SQLite only");
            return None;
        };
        let name = format!("t_{}", hex::encode(rand::random::<[u8; 8]>()));
        let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
        conn.execute(format!("create database {name}").as_str()).await.unwrap();
        conn.close().await.ok();
        let (base, _) = admin.rsplit_once('/').unwrap();
        let url = format!("{base}/{name}");
        Some(TestDb {
            pool: super::open_postgres(&url, None, 4).await.unwrap(),
            backend: Backend::Postgres,
            target: url,
            _dir: None,
        })
    }

    /// SQLite, then PostgreSQL where there is one.
    pub async fn both() -> Vec<TestDb> {
        let mut dbs = vec![sqlite().await];
        dbs.extend(postgres().await);
        dbs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn the_write_probe_runs_on_both_back_ends() {
        for db in testing::both().await {
            write_probe(&db.pool)
                .await
                .unwrap_or_else(|e| panic!("{:?}: {e}", db.backend));
        }
    }

    #[test]
    fn a_pool_time_out_is_an_outage_only_while_the_heartbeat_says_so() {
        let io = || sqlx::Error::Io(std::io::Error::other("connection refused"));
        assert!(outage_given(&io(), false), "a refused connection is the database gone");
        assert!(!outage_given(&sqlx::Error::PoolTimedOut, false), "a busy pool is not");
        assert!(outage_given(&sqlx::Error::PoolTimedOut, true));
        assert!(!outage_given(&sqlx::Error::RowNotFound, true), "an answer is an answer");
    }

    #[test]
    fn a_logged_url_has_no_password() {
        assert_eq!(
            crate::config::redacted("postgres://rf:s3cret@db:5432/roofline"),
            "postgres://rf:***@db:5432/roofline"
        );
        assert_eq!(
            crate::config::redacted("postgres://rf@db/roofline"),
            "postgres://rf@db/roofline"
        );
        assert_eq!(
            crate::config::redacted("postgres://a:b@c@db/x?sslmode=require"),
            "postgres://a:***@db/x?sslmode=require"
        );
        assert_eq!(crate::config::redacted("nonsense"), "(not a URL)");
        assert_eq!(
            crate::config::redacted("postgres://db/x?user=rf&password=s3cret&sslmode=require"),
            "postgres://db/x?user=rf&password=***&sslmode=require"
        );
    }

    /// The two back ends hold the same schema, version for version: the same migrations, the
    /// same tables with the same columns (integer and text alike on both).
    #[tokio::test]
    async fn both_back_ends_have_the_same_migrations_and_tables() {
        let sqlite_versions: Vec<_> = sqlx::migrate!("./migrations/sqlite")
            .iter()
            .map(|m| (m.version, m.description.to_string()))
            .collect();
        let pg_versions: Vec<_> = sqlx::migrate!("./migrations/postgres")
            .iter()
            .map(|m| (m.version, m.description.to_string()))
            .collect();
        assert_eq!(sqlite_versions, pg_versions);
        let Some(pg) = testing::postgres().await else {
            return;
        };
        let lite = testing::sqlite().await;
        let tables: Vec<String> = sqlx::query_scalar(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name <> '_sqlx_migrations' order by name",
        )
        .fetch_all(&lite.pool)
        .await
        .unwrap();
        let mut on_sqlite = Vec::new();
        for t in &tables {
            let cols: Vec<(String, String)> = sqlx::query_as(&format!(
                "select name, lower(type) from pragma_table_info('{t}') order by name"
            ))
            .fetch_all(&lite.pool)
            .await
            .unwrap();
            on_sqlite.extend(
                cols.into_iter()
                    .map(|(c, ty)| (t.clone(), c, ty.replace("integer", "int"))),
            );
        }
        let on_pg: Vec<(String, String, String)> = sqlx::query_as(
            "select table_name::text, column_name::text, data_type::text from information_schema.columns
             where table_schema = 'public' and table_name <> '_sqlx_migrations' order by table_name, column_name",
        )
        .fetch_all(&pg.pool)
        .await
        .unwrap();
        let on_pg: Vec<_> = on_pg
            .into_iter()
            .map(|(t, c, ty)| (t, c, ty.replace("bigint", "int")))
            .collect();
        assert_eq!(on_sqlite, on_pg);
    }
}
