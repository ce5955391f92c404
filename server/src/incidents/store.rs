//! Incidents in SQLite: one row per incident (evidence, diagnosis, latest re-check,
//! postmortem) and an append-only timeline.

use crate::db::Pool;
use app::domain::incident::{Entry, Incident, IncidentSummary, Postmortem, TimelineEntry};
use app::domain::triage::{Diagnosis, Evidence};

#[derive(Debug, thiserror::Error)]
pub enum IncidentError {
    #[error("incident database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("stored incident {id} is unreadable: {source}")]
    Corrupt { id: i64, source: serde_json::Error },
    #[error("no incident #{0}")]
    NotFound(i64),
}

#[derive(Clone)]
pub struct IncidentStore {
    pool: Pool,
}

/// An incident row as stored: read by column name.
#[derive(sqlx::FromRow)]
struct Row {
    incident_id: i64,
    profile: String,
    opened_at: String,
    opened_by: String,
    /// 0 or 1: the column is an integer on both back ends.
    resolved: i64,
    evidence: String,
    diagnosis: String,
    latest: Option<String>,
    postmortem: String,
}

impl IncidentStore {
    pub fn new(pool: Pool) -> Self {
        Self { pool }
    }

    pub async fn create(
        &self,
        profile: &str,
        opened_by: &str,
        ev: &Evidence,
        d: &Diagnosis,
    ) -> Result<i64, IncidentError> {
        let id = sqlx::query_scalar(
            "insert into incident (profile, opened_by, evidence, diagnosis) values ($1, $2, $3, $4) returning incident_id",
        )
        .bind(profile)
        .bind(opened_by)
        .bind(serde_json::to_string(ev).unwrap_or_default())
        .bind(serde_json::to_string(d).unwrap_or_default())
        .fetch_one(&self.pool)
        .await?;
        Ok(id)
    }

    /// Appends to the timeline (there is no update or delete of timeline rows).
    pub async fn append(&self, id: i64, who: &str, entry: &Entry) -> Result<(), IncidentError> {
        sqlx::query("insert into incident_event (incident_id, who, entry) values ($1, $2, $3)")
            .bind(id)
            .bind(who)
            .bind(serde_json::to_string(entry).unwrap_or_default())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_latest(&self, id: i64, ev: &Evidence, d: &Diagnosis) -> Result<(), IncidentError> {
        sqlx::query("update incident set latest = $2 where incident_id = $1")
            .bind(id)
            .bind(serde_json::to_string(&(ev, d)).unwrap_or_default())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_postmortem(&self, id: i64, p: &Postmortem) -> Result<(), IncidentError> {
        let r = sqlx::query("update incident set postmortem = $2 where incident_id = $1")
            .bind(id)
            .bind(serde_json::to_string(p).unwrap_or_default())
            .execute(&self.pool)
            .await?;
        if r.rows_affected() == 0 {
            return Err(IncidentError::NotFound(id));
        }
        Ok(())
    }

    pub async fn resolve(&self, id: i64) -> Result<(), IncidentError> {
        sqlx::query("update incident set resolved = 1 where incident_id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The open incident of a profile, if any (an alert joins it instead of opening another).
    pub async fn open_for(&self, profile: &str) -> Result<Option<i64>, IncidentError> {
        Ok(sqlx::query_scalar(
            "select incident_id from incident where profile = $1 and resolved = 0 order by incident_id desc limit 1",
        )
        .bind(profile)
        .fetch_optional(&self.pool)
        .await?)
    }

    pub async fn get(&self, id: i64) -> Result<Incident, IncidentError> {
        let row: Option<Row> = sqlx::query_as(
            "select incident_id, profile, opened_at, opened_by, resolved, evidence, diagnosis, latest, postmortem from incident where incident_id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let Row {
            incident_id: id,
            profile,
            opened_at,
            opened_by,
            resolved,
            evidence,
            diagnosis,
            latest,
            postmortem,
        } = row.ok_or(IncidentError::NotFound(id))?;
        let corrupt = |source| IncidentError::Corrupt { id, source };
        let events: Vec<(String, String, String)> = sqlx::query_as(
            "select at, who, entry from incident_event where incident_id = $1 order by incident_event_id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let timeline = events
            .into_iter()
            .map(|(at, who, entry)| {
                Ok(TimelineEntry {
                    at,
                    who,
                    entry: serde_json::from_str(&entry).map_err(corrupt)?,
                })
            })
            .collect::<Result<Vec<_>, IncidentError>>()?;
        Ok(Incident {
            id,
            profile,
            opened_at,
            opened_by,
            resolved: resolved != 0,
            evidence: serde_json::from_str(&evidence).map_err(corrupt)?,
            diagnosis: serde_json::from_str(&diagnosis).map_err(corrupt)?,
            latest: latest.map(|l| serde_json::from_str(&l)).transpose().map_err(corrupt)?,
            timeline,
            postmortem: serde_json::from_str(&postmortem).map_err(corrupt)?,
        })
    }

    /// Newest first.
    pub async fn list(&self, limit: i64) -> Result<Vec<IncidentSummary>, IncidentError> {
        let rows: Vec<(i64, String, String, String, i64, String)> = sqlx::query_as(
            "select incident_id, profile, opened_at, opened_by, resolved, diagnosis from incident order by incident_id desc limit $1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(id, profile, opened_at, opened_by, resolved, diagnosis)| IncidentSummary {
                    id,
                    profile,
                    opened_at,
                    opened_by,
                    resolved: resolved != 0,
                    rule: serde_json::from_str::<Diagnosis>(&diagnosis)
                        .ok()
                        .and_then(|d| d.primary().map(|f| f.rule)),
                },
            )
            .collect())
    }
}
