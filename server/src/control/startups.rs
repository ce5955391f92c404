//! Startup history: each start's phase timeline, kept per profile in SQLite, read back as the
//! yardstick for a start in progress and for the engine page's timeline.

use crate::db::Pool;
pub use app::domain::phases::StartupRun;
use app::domain::phases::{PhaseMark, HISTORY};

#[derive(Clone)]
pub struct StartupStore {
    pool: Pool,
}

impl StartupStore {
    pub fn new(pool: Pool) -> Self {
        Self { pool }
    }

    pub async fn record(&self, profile: &str, run: &StartupRun) -> Result<(), sqlx::Error> {
        if crate::db::away() {
            // History, not a record of an action (the journal keeps those): not waited for.
            tracing::warn!(profile, outcome = %run.outcome, "startup phases not kept: the database is away");
            return Ok(());
        }
        let phases = serde_json::to_string(&run.phases).unwrap_or_else(|_| "[]".into());
        sqlx::query("insert into startup_run (profile, started_at_ms, outcome, phases) values ($1, $2, $3, $4)")
            .bind(profile)
            .bind(run.started_at_ms)
            .bind(&run.outcome)
            .bind(phases)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The most recent starts of a profile, oldest first (at most `limit`). A row whose phases
    /// do not parse is skipped, not fatal: the history is advice.
    pub async fn recent(&self, profile: &str, limit: usize) -> Result<Vec<StartupRun>, sqlx::Error> {
        if crate::db::away() {
            return Ok(Vec::new());
        }
        let rows: Vec<(i64, String, String)> = sqlx::query_as(
            "select started_at_ms, outcome, phases from startup_run where profile = $1 order by startup_run_id desc limit $2",
        )
        .bind(profile)
        .bind(limit.min(1000) as i64)
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<StartupRun> = rows
            .into_iter()
            .filter_map(|(started_at_ms, outcome, phases)| {
                Some(StartupRun {
                    started_at_ms,
                    outcome,
                    phases: serde_json::from_str(&phases).ok()?,
                })
            })
            .collect();
        out.reverse();
        Ok(out)
    }

    /// The phase timelines of the profile's last successful starts, oldest first.
    pub async fn ready_history(&self, profile: &str) -> Vec<Vec<PhaseMark>> {
        self.recent(profile, HISTORY * 3)
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.outcome == "ready")
            .map(|r| r.phases)
            .collect()
    }
}
