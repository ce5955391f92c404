//! The states each engine was seen to enter, kept in SQLite for the engine page's state
//! timeline (`app::domain::timeline`): written by the monitor when a tick finds a state
//! different from the last one it saw (a console start records every engine's state anew),
//! read back per range, pruned after a week.

use crate::db::Pool;
use app::domain::engine::EngineState;
use app::domain::timeline::{timeline, StateChange, StateTimeline};

/// How long changes are kept.
pub const KEEP_MS: i64 = 7 * 24 * 3600 * 1000;
/// The most changes read for one timeline (an engine flapping every second for a day is
/// 86,400: the timeline then shows the latest ones, which is where the trouble is).
const MAX_READ: i64 = 20_000;

#[derive(Clone)]
pub struct StateLog {
    pool: Pool,
}

impl StateLog {
    pub fn new(pool: Pool) -> Self {
        Self { pool }
    }

    pub async fn record(&self, profile: &str, at_ms: i64, state: EngineState) -> Result<(), sqlx::Error> {
        if crate::db::away() {
            tracing::warn!(
                profile,
                state = state.as_str(),
                "state change not kept: the database is away"
            );
            return Ok(());
        }
        sqlx::query("insert into engine_state_change (profile, at_ms, state) values ($1, $2, $3)")
            .bind(profile)
            .bind(at_ms)
            .bind(state.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The timeline of `profile` over `[from_ms, to_ms]`: the last change before the range and
    /// every change in it. A row naming an unknown state is skipped (written by a newer console).
    pub async fn timeline(&self, profile: &str, from_ms: i64, to_ms: i64) -> Result<StateTimeline, sqlx::Error> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "select at_ms, state from (
                 select at_ms, state, engine_state_change_id from engine_state_change
                 where profile = $1 and at_ms <= $2 and at_ms > $3 order by at_ms desc, engine_state_change_id desc limit $4)
             union all
             select * from (select at_ms, state from engine_state_change
                 where profile = $1 and at_ms <= $3 order by at_ms desc, engine_state_change_id desc limit 1)",
        )
        .bind(profile)
        .bind(to_ms)
        .bind(from_ms)
        .bind(MAX_READ)
        .fetch_all(&self.pool)
        .await?;
        let changes: Vec<StateChange> = rows
            .into_iter()
            .filter_map(|(at_ms, s)| {
                EngineState::ALL
                    .into_iter()
                    .find(|e| e.as_str() == s)
                    .map(|state| StateChange { at_ms, state })
            })
            .collect();
        Ok(timeline(&changes, from_ms, to_ms))
    }

    /// Drops changes older than [`KEEP_MS`] before `now_ms`.
    pub async fn prune(&self, now_ms: i64) -> Result<u64, sqlx::Error> {
        let r = sqlx::query("delete from engine_state_change where at_ms < $1")
            .bind(now_ms.saturating_sub(KEEP_MS))
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn changes_come_back_as_the_ranges_timeline() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("t.db")).await.unwrap();
        let log = StateLog::new(pool);
        for (at, s) in [
            (1_000, EngineState::Starting),
            (2_000, EngineState::Healthy),
            (5_000, EngineState::Hung),
            (6_000, EngineState::Healthy),
        ] {
            log.record("a", at, s).await.unwrap();
        }
        log.record("b", 5_500, EngineState::Dead).await.unwrap();
        let t = log.timeline("a", 3_000, 8_000).await.unwrap();
        let got: Vec<(EngineState, i64, i64)> = t.spans.iter().map(|s| (s.state, s.from_ms, s.to_ms)).collect();
        assert_eq!(
            got,
            [
                (EngineState::Healthy, 3_000, 5_000),
                (EngineState::Hung, 5_000, 6_000),
                (EngineState::Healthy, 6_000, 8_000)
            ]
        );
        assert_eq!(t.incidents, 1);
        assert_eq!(log.prune(KEEP_MS + 2_500).await.unwrap(), 2);
        assert!(log.timeline("a", 0, 1_500).await.unwrap().spans.is_empty());
    }
}
