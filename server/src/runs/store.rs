//! The run store: finished bench and smoke-toolcall runs, kept for comparison and linked from
//! the journal, incidents and changes.

use crate::db::Pool;

/// Errors of the run store.
#[derive(Debug, thiserror::Error)]
pub enum RunStoreError {
    #[error("database: {0}")]
    Sqlx(#[from] sqlx::Error),
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
    pool: Pool,
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
    pub fn new(pool: Pool) -> Self {
        Self { pool }
    }

    /// Stores a finished bench run (its URL and model come from the parameters).
    pub async fn add_bench(
        &self,
        profile: Option<&str>,
        engine_version: Option<&str>,
        params: &app::domain::bench::BenchParams,
        summary: &app::domain::bench::BenchSummary,
    ) -> Result<i64, RunStoreError> {
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
    pub async fn benches(&self, profile: Option<&str>, limit: i64) -> Result<Vec<BenchRow>, RunStoreError> {
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

    pub async fn bench(&self, id: i64) -> Result<Option<BenchRow>, RunStoreError> {
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
    ) -> Result<i64, RunStoreError> {
        let (url, model, passed) = (&report.url, &report.model, report.passed());
        let report = serde_json::to_value(report).unwrap_or_default();
        let id = sqlx::query_scalar("insert into smoke_run (profile, url, model, passed, report) values ($1, $2, $3, $4, $5) returning smoke_run_id")
            .bind(profile)
            .bind(url)
            .bind(model)
            .bind(i64::from(passed))
            .bind(report.to_string())
            .fetch_one(&self.pool)
            .await?;
        Ok(id)
    }

    /// The newest smoke run of a profile: (id, passed, report, created_at).
    pub async fn last_smoke(
        &self,
        profile: &str,
    ) -> Result<Option<(i64, bool, serde_json::Value, String)>, RunStoreError> {
        let row: Option<(i64, i64, String, String)> =
            sqlx::query_as("select smoke_run_id, passed, report, created_at from smoke_run where profile = $1 order by smoke_run_id desc limit 1")
                .bind(profile)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(id, passed, report, at)| {
            (
                id,
                passed != 0,
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
