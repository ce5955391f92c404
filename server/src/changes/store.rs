//! Profile changes and their review history in SQLite.

use crate::db::Pool;
use app::api::{ChangeEvent, ChangeSummary};
use app::domain::review::{ChangeState, GateReport};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("profile store: {0}")]
    Profile(String),
    #[error("no change #{0}")]
    NotFound(i64),
}

/// One stored change.
#[derive(Clone, Debug)]
pub struct ChangeRow {
    pub id: i64,
    pub profile: String,
    pub author: String,
    pub state: ChangeState,
    pub reason: String,
    pub base_env: String,
    pub env: String,
    pub gate: Option<GateReport>,
    pub created_at: String,
    pub updated_at: String,
}

impl ChangeRow {
    pub fn summary(&self) -> ChangeSummary {
        ChangeSummary {
            id: self.id,
            profile: self.profile.clone(),
            author: self.author.clone(),
            state: self.state,
            reason: self.reason.clone(),
            created_at: self.created_at.clone(),
            updated_at: self.updated_at.clone(),
        }
    }
}

/// A change row as stored: read by column name ([`COLUMNS`]).
#[derive(sqlx::FromRow)]
struct Row {
    change_id: i64,
    profile: String,
    author: String,
    state: String,
    reason: String,
    base_env: String,
    env: String,
    gate_report: Option<String>,
    created_at: String,
    updated_at: String,
}

const COLUMNS: &str = "change_id, profile, author, state, reason, base_env, env, gate_report, created_at, updated_at";

fn decode(r: Row) -> ChangeRow {
    ChangeRow {
        id: r.change_id,
        profile: r.profile,
        author: r.author,
        // An unknown state (a newer console wrote it) reads as withdrawn: nothing acts on it.
        state: ChangeState::parse(&r.state).unwrap_or(ChangeState::Withdrawn),
        reason: r.reason,
        base_env: r.base_env,
        env: r.env,
        gate: r.gate_report.and_then(|g| serde_json::from_str(&g).ok()),
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

/// What an activation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    Done,
    /// The change was no longer gating with that content.
    Moved,
    /// The active profile changed since the change was written.
    Stale,
}

/// The write lock activations hold on a shared PostgreSQL ("roofact").
const ACTIVATE_LOCK: i64 = 0x726f_6f66_6163_7400;

async fn activate_on(
    conn: &mut crate::db::Conn,
    id: i64,
    env: &str,
    base_env: &str,
    candidate: &app::domain::profile::Profile,
) -> Result<Activation, StoreError> {
    use crate::profile_store::{get_on, upsert_on};
    let active = get_on(conn, &candidate.name)
        .await
        .map_err(|e| StoreError::Profile(e.to_string()))?
        .map(|s| s.profile.to_env())
        .unwrap_or_default();
    if active != base_env {
        return Ok(Activation::Stale);
    }
    let moved = sqlx::query(
        "update profile_change set state = 'active', updated_at = $3, activated_at = $3
         where change_id = $1 and state = 'gating' and env = $2",
    )
    .bind(id)
    .bind(env)
    .bind(crate::clock::now_text())
    .execute(&mut *conn)
    .await?;
    if moved.rows_affected() != 1 {
        return Ok(Activation::Moved);
    }
    upsert_on(conn, candidate)
        .await
        .map_err(|e| StoreError::Profile(e.to_string()))?;
    Ok(Activation::Done)
}

#[derive(Clone)]
pub struct ChangeStore {
    pool: Pool,
}

impl ChangeStore {
    pub fn new(pool: Pool) -> Self {
        Self { pool }
    }

    pub async fn insert(
        &self,
        profile: &str,
        author: &str,
        state: ChangeState,
        reason: &str,
        base_env: &str,
        env: &str,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "insert into profile_change (profile, author, state, reason, base_env, env)
             values ($1, $2, $3, $4, $5, $6) returning change_id",
        )
        .bind(profile)
        .bind(author)
        .bind(state.as_str())
        .bind(reason)
        .bind(base_env)
        .bind(env)
        .fetch_one(&self.pool)
        .await?)
    }

    pub async fn get(&self, id: i64) -> Result<ChangeRow, StoreError> {
        let row: Option<Row> = sqlx::query_as(&format!("select {COLUMNS} from profile_change where change_id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(decode).ok_or(StoreError::NotFound(id))
    }

    pub async fn list(&self, profile: Option<&str>) -> Result<Vec<ChangeRow>, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "select {COLUMNS} from profile_change where $1 is null or profile = $1 order by change_id desc limit 500"
        ))
        .bind(profile)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(decode).collect())
    }

    /// New content (and reason) for a change being reworked, in its new state.
    /// Rewrites a change's content, only while it is still in `from` (the state the author's
    /// edit was allowed in); false when somebody acted on it first.
    pub async fn update_content(
        &self,
        id: i64,
        from: ChangeState,
        state: ChangeState,
        reason: &str,
        base_env: &str,
        env: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "update profile_change set state = $2, reason = $3, base_env = $4, env = $5,
                 updated_at = $7 where change_id = $1 and state = $6",
        )
        .bind(id)
        .bind(state.as_str())
        .bind(reason)
        .bind(base_env)
        .bind(env)
        .bind(from.as_str())
        .bind(crate::clock::now_text())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves a change from `from` to `to` only while its content is still `env` (what the
    /// reviewer saw): an edit between the review page and the click cannot be approved.
    pub async fn transition_reviewed(
        &self,
        id: i64,
        from: ChangeState,
        to: ChangeState,
        env: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "update profile_change set state = $3, updated_at = $5
             where change_id = $1 and state = $2 and env = $4",
        )
        .bind(id)
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(env)
        .bind(crate::clock::now_text())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Makes a gated change active in one transaction: the change must still be gating with
    /// the content that was gated, the active profile must still be the one it was written
    /// against, and then the profile and the change's state are written together. The
    /// transaction holds the write lock from its start (`db::begin_write`): two consoles
    /// activating at once are taken one after the other, the second finding the first's
    /// profile (stale) or change (moved), where a plain transaction failed the second with
    /// "database is locked" on SQLite and let both write the profile on PostgreSQL.
    pub async fn activate(
        &self,
        id: i64,
        env: &str,
        base_env: &str,
        candidate: &app::domain::profile::Profile,
    ) -> Result<Activation, StoreError> {
        let mut tx = crate::db::begin_write(&self.pool, ACTIVATE_LOCK).await?;
        let outcome = activate_on(&mut tx, id, env, base_env, candidate).await?;
        if outcome == Activation::Done {
            tx.commit().await?;
        }
        Ok(outcome)
    }

    /// Moves a change from `from` to `to`; false when it was not in `from` any more (somebody
    /// else acted first), so two approvals or two gates never both go through.
    pub async fn transition(&self, id: i64, from: ChangeState, to: ChangeState) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "update profile_change set state = $3, updated_at = $4,
                 activated_at = case when $3 = 'active' then $4 else activated_at end
             where change_id = $1 and state = $2",
        )
        .bind(id)
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(crate::clock::now_text())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn set_gate(&self, id: i64, report: &GateReport) -> Result<(), StoreError> {
        sqlx::query("update profile_change set gate_report = $2 where change_id = $1")
            .bind(id)
            .bind(serde_json::to_string(report).unwrap_or_default())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The profile's most recently activated change that is still active.
    pub async fn newest_active(&self, profile: &str) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "select change_id from profile_change where profile = $1 and activated_at is not null
             order by activated_at desc, change_id desc limit 1",
        )
        .bind(profile)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Whether another change of the profile is in its gate now.
    pub async fn gating(&self, profile: &str) -> Result<Option<i64>, StoreError> {
        Ok(
            sqlx::query_scalar("select change_id from profile_change where profile = $1 and state = 'gating' limit 1")
                .bind(profile)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// Gates cut off by a console restart: they can never report, so they failed.
    pub async fn interrupted_gates(&self) -> Result<Vec<i64>, StoreError> {
        Ok(
            sqlx::query_scalar("select change_id from profile_change where state = 'gating'")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    pub async fn add_event(&self, id: i64, who: &str, kind: &str, text: &str) -> Result<(), StoreError> {
        sqlx::query("insert into change_event (change_id, who, kind, text) values ($1, $2, $3, $4)")
            .bind(id)
            .bind(who)
            .bind(kind)
            .bind(text)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn events(&self, id: i64) -> Result<Vec<ChangeEvent>, StoreError> {
        let rows: Vec<(String, String, String, String)> =
            sqlx::query_as("select who, kind, text, at from change_event where change_id = $1 order by event_id")
                .bind(id)
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .into_iter()
            .map(|(who, kind, text, at)| ChangeEvent { who, kind, text, at })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::profile::Profile;

    /// Issue 16: the review's compare-and-set holds across consoles sharing the database: two
    /// approvers on two hosts clicking at once, or two gates finishing at once, let one through.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_consoles_acting_on_one_change_at_once_let_one_through() {
        for db in crate::db::testing::both().await {
            let (a, b) = (
                ChangeStore::new(db.pool.clone()),
                ChangeStore::new(db.another_console().await),
            );
            let (candidate, _) = Profile::from_env("p", "ENGINE=sim-vllm\nMODEL=/models/m\nPORT=8101\n").unwrap();
            let (active, _) = Profile::from_env("p", "ENGINE=sim-vllm\nMODEL=/models/m\nPORT=8100\n").unwrap();
            let (base, env) = (&active.to_env(), &candidate.to_env());
            crate::profile_store::ProfileStore::new(db.pool.clone())
                .upsert(&active)
                .await
                .unwrap();
            for round in 0..10 {
                let id = a
                    .insert("p", "alice", ChangeState::Submitted, &format!("r{round}"), base, env)
                    .await
                    .unwrap();
                let (x, y) = tokio::join!(
                    a.transition_reviewed(id, ChangeState::Submitted, ChangeState::Approved, env),
                    b.transition_reviewed(id, ChangeState::Submitted, ChangeState::Approved, env),
                );
                assert!(
                    x.unwrap() ^ y.unwrap(),
                    "{:?} round {round}: one approval goes through",
                    db.backend
                );
                assert!(a
                    .transition(id, ChangeState::Approved, ChangeState::Gating)
                    .await
                    .unwrap());
                let (x, y) = tokio::join!(
                    a.activate(id, env, base, &candidate),
                    b.activate(id, env, base, &candidate)
                );
                let mut outcomes = [x.unwrap(), y.unwrap()];
                outcomes.sort_by_key(|o| *o != Activation::Done);
                assert_eq!(outcomes[0], Activation::Done, "{:?} round {round}", db.backend);
                assert_ne!(
                    outcomes[1],
                    Activation::Done,
                    "{:?} round {round}: activated twice",
                    db.backend
                );
                assert_eq!(b.get(id).await.unwrap().state, ChangeState::Active);
                // The next round's change is written against the profile now active.
                crate::profile_store::ProfileStore::new(db.pool.clone())
                    .upsert(&active)
                    .await
                    .unwrap();
            }
        }
    }
}
