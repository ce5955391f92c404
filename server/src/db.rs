//! SQLite storage (WAL) with embedded migrations, and the profile repository.

use anyhow::Context;
use app::domain::profile::Profile;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// Errors of the profile store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("stored profile {name} is unreadable: {source}")]
    Corrupt { name: String, source: serde_json::Error },
}

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

/// A stored profile with its timestamps.
#[derive(Clone, Debug)]
pub struct StoredProfile {
    pub profile: Profile,
    pub created_at: String,
    /// Moves only when the profile's content changes (a re-import of the same file does not).
    pub updated_at: String,
}

/// The launch profiles in SQLite.
#[derive(Clone)]
pub struct ProfileStore {
    pool: SqlitePool,
}

impl ProfileStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// The pool, for the other stores of the same database.
    pub fn pool(&self) -> SqlitePool {
        self.pool.clone()
    }

    /// Inserts or replaces a profile by name; returns true when it was new.
    pub async fn upsert(&self, profile: &Profile) -> Result<bool, StoreError> {
        let body = serde_json::to_string(profile).map_err(|source| StoreError::Corrupt {
            name: profile.name.clone(),
            source,
        })?;
        let existed: Option<i64> = sqlx::query_scalar("select profile_id from profile where name = $1")
            .bind(&profile.name)
            .fetch_optional(&self.pool)
            .await?;
        sqlx::query(
            "insert into profile (name, body) values ($1, $2)
             on conflict (name) do update set body = excluded.body,
                 updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
             where profile.body != excluded.body",
        )
        .bind(&profile.name)
        .bind(body)
        .execute(&self.pool)
        .await?;
        Ok(existed.is_none())
    }

    pub async fn get(&self, name: &str) -> Result<Option<StoredProfile>, StoreError> {
        let row: Option<(String, String, String, String)> =
            sqlx::query_as("select name, body, created_at, updated_at from profile where name = $1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
        row.map(decode).transpose()
    }

    pub async fn list(&self) -> Result<Vec<StoredProfile>, StoreError> {
        let rows: Vec<(String, String, String, String)> =
            sqlx::query_as("select name, body, created_at, updated_at from profile order by name")
                .fetch_all(&self.pool)
                .await?;
        rows.into_iter().map(decode).collect()
    }
}

/// A stored benchmark run.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct BenchRow {
    pub id: i64,
    pub profile: Option<String>,
    pub url: String,
    pub model: String,
    pub engine_version: Option<String>,
    pub params: serde_json::Value,
    pub summary: serde_json::Value,
    pub created_at: String,
}

/// Gate-step results (bench and smoke-toolcall runs).
#[derive(Clone)]
pub struct RunStore {
    pool: SqlitePool,
}

type BenchTuple = (
    i64,
    Option<String>,
    String,
    String,
    Option<String>,
    String,
    String,
    String,
);

impl RunStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Stores a finished bench run (its URL and model come from the parameters).
    pub async fn add_bench(
        &self,
        profile: Option<&str>,
        engine_version: Option<&str>,
        params: &app::domain::bench::BenchParams,
        summary: &app::domain::bench::BenchSummary,
    ) -> Result<i64, StoreError> {
        let (url, model) = (&params.url, &params.model);
        let params = serde_json::to_value(params).unwrap_or_default();
        let summary = serde_json::to_value(summary).unwrap_or_default();
        let id = sqlx::query_scalar(
            "insert into bench_run (profile, url, model, engine_version, params, summary) values ($1, $2, $3, $4, $5, $6) returning bench_run_id",
        )
        .bind(profile)
        .bind(url)
        .bind(model)
        .bind(engine_version)
        .bind(params.to_string())
        .bind(summary.to_string())
        .fetch_one(&self.pool)
        .await?;
        Ok(id)
    }

    /// Newest first; `profile` filters when given.
    pub async fn benches(&self, profile: Option<&str>, limit: i64) -> Result<Vec<BenchRow>, StoreError> {
        let rows: Vec<BenchTuple> = sqlx::query_as(
            "select bench_run_id, profile, url, model, engine_version, params, summary, created_at from bench_run
             where $1 is null or profile = $1 order by bench_run_id desc limit $2",
        )
        .bind(profile)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(bench_row).collect())
    }

    pub async fn bench(&self, id: i64) -> Result<Option<BenchRow>, StoreError> {
        let row: Option<BenchTuple> = sqlx::query_as(
            "select bench_run_id, profile, url, model, engine_version, params, summary, created_at from bench_run where bench_run_id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(bench_row))
    }

    /// Stores a smoke-toolcall run (URL, model and verdict come from the report).
    pub async fn add_smoke(
        &self,
        profile: Option<&str>,
        report: &app::domain::toolcall::SmokeReport,
    ) -> Result<i64, StoreError> {
        let (url, model, passed) = (&report.url, &report.model, report.passed());
        let report = serde_json::to_value(report).unwrap_or_default();
        let id = sqlx::query_scalar("insert into smoke_run (profile, url, model, passed, report) values ($1, $2, $3, $4, $5) returning smoke_run_id")
            .bind(profile)
            .bind(url)
            .bind(model)
            .bind(passed)
            .bind(report.to_string())
            .fetch_one(&self.pool)
            .await?;
        Ok(id)
    }

    /// The newest smoke run of a profile: (id, passed, report, created_at).
    pub async fn last_smoke(
        &self,
        profile: &str,
    ) -> Result<Option<(i64, bool, serde_json::Value, String)>, StoreError> {
        let row: Option<(i64, bool, String, String)> =
            sqlx::query_as("select smoke_run_id, passed, report, created_at from smoke_run where profile = $1 order by smoke_run_id desc limit 1")
                .bind(profile)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(id, passed, report, at)| {
            (
                id,
                passed,
                serde_json::from_str(&report).unwrap_or(serde_json::Value::Null),
                at,
            )
        }))
    }
}

fn bench_row((id, profile, url, model, engine_version, params, summary, created_at): BenchTuple) -> BenchRow {
    BenchRow {
        id,
        profile,
        url,
        model,
        engine_version,
        params: serde_json::from_str(&params).unwrap_or(serde_json::Value::Null),
        summary: serde_json::from_str(&summary).unwrap_or(serde_json::Value::Null),
        created_at,
    }
}

fn decode((name, body, created_at, updated_at): (String, String, String, String)) -> Result<StoredProfile, StoreError> {
    let profile = serde_json::from_str(&body).map_err(|source| StoreError::Corrupt { name, source })?;
    Ok(StoredProfile {
        profile,
        created_at,
        updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn concurrent_first_opens_migrate_once() {
        // Each open also writes, as the console does right after opening, so a WAL switch on a
        // fresh file races with a writer (the failure CI once met: "database is locked").
        for round in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("race.db");
            let opens = (0..12).map(|i| {
                let path = path.clone();
                tokio::spawn(async move {
                    let store = ProfileStore::new(open(&path).await?);
                    let text = format!("ENGINE=sim-vllm\nMODEL=/models/m\nPORT={}\n", 8100 + i);
                    let (p, _) = Profile::from_env(&format!("p{round}-{i}"), &text).unwrap();
                    store.upsert(&p).await?;
                    anyhow::Ok(())
                })
            });
            for r in futures::future::join_all(opens).await {
                r.unwrap().unwrap();
            }
        }
    }

    #[tokio::test]
    async fn env_to_db_to_env_is_identical() {
        let dir = tempfile::tempdir().unwrap();
        let pool = open(&dir.path().join("t.db")).await.unwrap();
        let store = ProfileStore::new(pool);
        let text = "ENGINE=sim-vllm\nMODEL=/models/m\nSERVED_MODEL_NAME=m\nTENSOR_PARALLEL=1\nMEM_FRACTION=0.9\nSPECULATIVE_CONFIG='{\"method\":\"ngram\"}'\nHOST=127.0.0.1\nPORT=8100\nEXTRA_ARGS='--a \"b c\"'\nENV_X=1\n";
        let (p, _) = Profile::from_env("demo", text).unwrap();
        assert!(store.upsert(&p).await.unwrap());
        assert!(!store.upsert(&p).await.unwrap());
        let back = store.get("demo").await.unwrap().unwrap();
        assert_eq!(back.profile.to_env(), text);
        assert_eq!(store.list().await.unwrap().len(), 1);
        assert!(store.get("nope").await.unwrap().is_none());
    }
}
