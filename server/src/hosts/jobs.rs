//! The job queue: an action on an engine of another host, as rows. The requester inserts;
//! the owning host claims one row at a time (`for update skip locked` on PostgreSQL, so
//! consoles never wait on each other's claims; SQLite's one writer makes the update atomic
//! there), performs it, and completes it with its outcome. A claim and a completion are
//! compare-and-set on the row's state and the claiming run: a job is performed at most
//! once, and one left running by a console that restarted is failed with that reason, never
//! run again behind the requester's back.

use crate::db::{Backend, Pool};
use app::api::{JobAction, JobArgs, JobRow, JobState};

/// A job as the requester writes it.
pub struct NewJob<'a> {
    pub host: &'a str,
    pub profile: &'a str,
    pub action: JobAction,
    pub args: &'a JobArgs,
    pub requested_by: &'a str,
    pub requested_on: &'a str,
    pub reason: &'a str,
}

/// The most of an outcome kept (a log's tail, an error): the rest is on the host.
pub const MAX_OUTCOME: usize = 64 << 10;

/// The most of a job's arguments read back (they are a few numbers).
const MAX_ARGS: usize = 4 << 10;

const COLUMNS: &str = "job_id, host, profile, action, args, requested_by, requested_on, reason, state, outcome, result_id, created_ms, claimed_ms, finished_ms";

#[derive(sqlx::FromRow)]
struct Row {
    job_id: i64,
    host: String,
    profile: String,
    action: String,
    args: String,
    requested_by: String,
    requested_on: String,
    reason: String,
    state: String,
    outcome: Option<String>,
    result_id: Option<i64>,
    created_ms: i64,
    claimed_ms: Option<i64>,
    finished_ms: Option<i64>,
}

impl Row {
    /// A row whose action, state or arguments this version does not know (a newer console
    /// wrote it, or somebody wrote the table by hand) is shown as failed with what it says,
    /// not dropped, and never performed.
    fn decode(self) -> JobRow {
        let args = (self.args.len() <= MAX_ARGS)
            .then(|| serde_json::from_str::<JobArgs>(&self.args).ok())
            .flatten();
        let (action, state, outcome, args) = match (JobAction::parse(&self.action), JobState::parse(&self.state), args)
        {
            (Some(a), Some(s), Some(args)) => (a, s, self.outcome, args),
            _ => (
                JobAction::Logs,
                JobState::Failed,
                Some(format!(
                    "unknown action {:?}, state {:?} or arguments {:?}",
                    self.action,
                    self.state,
                    self.args.chars().take(200).collect::<String>()
                )),
                JobArgs::default(),
            ),
        };
        JobRow {
            id: self.job_id,
            host: self.host,
            profile: self.profile,
            action,
            args,
            requested_by: self.requested_by,
            requested_on: self.requested_on,
            reason: self.reason,
            state,
            outcome,
            result_id: self.result_id,
            created_ms: self.created_ms,
            claimed_ms: self.claimed_ms,
            finished_ms: self.finished_ms,
        }
    }
}

/// Queues a job; on PostgreSQL its insert notifies the owning host (`roofline_job`).
pub async fn insert(pool: &Pool, job: &NewJob<'_>, now_ms: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "insert into job (host, profile, action, args, requested_by, requested_on, reason, state, created_ms)
         values ($1, $2, $3, $8, $4, $5, $6, 'queued', $7) returning job_id",
    )
    .bind(job.host)
    .bind(job.profile)
    .bind(job.action.as_str())
    .bind(job.requested_by)
    .bind(job.requested_on)
    .bind(job.reason)
    .bind(now_ms)
    .bind(serde_json::to_string(job.args).unwrap_or_else(|_| "{}".into()))
    .fetch_one(pool)
    .await
}

/// Claims the oldest queued job of `host` for this console's `run`; `None` when none waits.
pub async fn claim(pool: &Pool, host: &str, run: &str, now_ms: i64) -> Result<Option<JobRow>, sqlx::Error> {
    let lock = match Backend::of(pool) {
        Backend::Postgres => "for update skip locked",
        Backend::Sqlite => "",
    };
    let row: Option<Row> = sqlx::query_as(&format!(
        "update job set state = 'running', claimed_ms = $2, claimed_by = $3
         where job_id = (select job_id from job where host = $1 and state = 'queued' order by job_id limit 1 {lock})
           and state = 'queued'
         returning {COLUMNS}"
    ))
    .bind(host)
    .bind(now_ms)
    .bind(run)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(Row::decode))
}

/// How a job ended on its host.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub ok: bool,
    /// What the host reported: the result, the error, or the log.
    pub text: String,
    /// What it made, if anything: the incident, the stored run.
    pub result_id: Option<i64>,
}

impl Outcome {
    pub fn done(text: impl Into<String>) -> Self {
        Self {
            ok: true,
            text: text.into(),
            result_id: None,
        }
    }

    pub fn failed(text: impl Into<String>) -> Self {
        Self {
            ok: false,
            text: text.into(),
            result_id: None,
        }
    }
}

/// Completes a job this run claimed; false when it was not running under this run any more.
pub async fn finish(pool: &Pool, id: i64, run: &str, outcome: &Outcome, now_ms: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "update job set state = $3, outcome = $4, finished_ms = $5, result_id = $6
         where job_id = $1 and claimed_by = $2 and state = 'running'",
    )
    .bind(id)
    .bind(run)
    .bind(if outcome.ok { "done" } else { "failed" })
    .bind(bounded(&outcome.text))
    .bind(now_ms)
    .bind(outcome.result_id)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Fails the jobs of `host` that an earlier run of its console claimed and never completed
/// (it stopped or was killed while they ran): whether the action took effect is unknown, so
/// it is not run again; the requester reads why. Returns how many.
pub async fn fail_interrupted(pool: &Pool, host: &str, run: &str, now_ms: i64) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "update job set state = 'failed', finished_ms = $3,
             outcome = 'the console on ' || host || ' stopped while this job ran: check the engine before asking again'
         where host = $1 and state = 'running' and claimed_by <> $2",
    )
    .bind(host)
    .bind(run)
    .bind(now_ms)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

pub async fn get(pool: &Pool, id: i64) -> Result<Option<JobRow>, sqlx::Error> {
    let row: Option<Row> = sqlx::query_as(&format!("select {COLUMNS} from job where job_id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(Row::decode))
}

/// The newest jobs first.
pub async fn list(pool: &Pool, limit: i64) -> Result<Vec<JobRow>, sqlx::Error> {
    let rows: Vec<Row> = sqlx::query_as(&format!("select {COLUMNS} from job order by job_id desc limit $1"))
        .bind(limit)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(Row::decode).collect())
}

/// At most `MAX_OUTCOME` bytes, cut at a character boundary and marked.
fn bounded(s: &str) -> String {
    if s.len() <= MAX_OUTCOME {
        return s.to_string();
    }
    let mut end = MAX_OUTCOME;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… cut at {MAX_OUTCOME} bytes]", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_ARGS: JobArgs = JobArgs {
        bench: None,
        change: None,
        clients_see_errors: false,
        incident: None,
        incident_action: None,
    };

    fn job<'a>(host: &'a str, action: JobAction) -> NewJob<'a> {
        NewJob {
            host,
            profile: "p",
            action,
            args: &NO_ARGS,
            requested_by: "alice",
            requested_on: "gpu-a",
            reason: "drill",
        }
    }

    /// Issue 16: many jobs, several consoles of one host claiming at once (two runs racing,
    /// as after a restart): every job is claimed exactly once, in order per claimer, and only
    /// the claiming run completes it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn each_job_is_claimed_once_and_completed_by_its_claimer() {
        for db in crate::db::testing::both().await {
            let other = db.another_console().await;
            for n in 0..30 {
                insert(
                    &db.pool,
                    &job(if n % 3 == 0 { "gpu-c" } else { "gpu-b" }, JobAction::Restart),
                    n,
                )
                .await
                .unwrap();
            }
            let claimers =
                [("r1", db.pool.clone()), ("r2", other.clone()), ("r3", other.clone())].map(|(run, pool)| {
                    tokio::spawn(async move {
                        let mut got = Vec::new();
                        while let Some(j) = claim(&pool, "gpu-b", run, 100).await.unwrap() {
                            assert_eq!(j.state, JobState::Running);
                            got.push((j.id, run));
                        }
                        got
                    })
                });
            let mut all = Vec::new();
            for c in claimers {
                all.extend(c.await.unwrap());
            }
            all.sort_unstable();
            assert_eq!(all.len(), 20, "{:?}: gpu-b's jobs, each once", db.backend);
            all.dedup_by_key(|(id, _)| *id);
            assert_eq!(all.len(), 20, "{:?}: a job claimed twice", db.backend);
            let (id, run) = all[0];
            let wrong = if run == "r1" { "r2" } else { "r1" };
            assert!(
                !finish(&db.pool, id, wrong, &Outcome::done("x"), 200).await.unwrap(),
                "only the claimer completes"
            );
            assert!(finish(&db.pool, id, run, &Outcome::done("restarted"), 200)
                .await
                .unwrap());
            assert!(
                !finish(&db.pool, id, run, &Outcome::failed("again"), 300).await.unwrap(),
                "completed once"
            );
            let done = get(&other, id).await.unwrap().unwrap();
            assert_eq!(
                (done.state, done.outcome.as_deref()),
                (JobState::Done, Some("restarted"))
            );
            // gpu-c's jobs wait for gpu-c.
            assert!(list(&db.pool, 100)
                .await
                .unwrap()
                .iter()
                .filter(|j| j.host == "gpu-c")
                .all(|j| j.state == JobState::Queued));
        }
    }

    /// A console killed mid-job: at its next start the job it was running is failed with the
    /// reason, never claimed again; jobs still queued are claimed by the new run.
    #[tokio::test]
    async fn a_job_left_running_by_a_stopped_console_fails_with_the_reason() {
        for db in crate::db::testing::both().await {
            let a = insert(&db.pool, &job("gpu-b", JobAction::Stop), 1).await.unwrap();
            let b = insert(&db.pool, &job("gpu-b", JobAction::Serve), 2).await.unwrap();
            assert_eq!(
                claim(&db.pool, "gpu-b", "old-run", 3).await.unwrap().map(|j| j.id),
                Some(a)
            );
            assert_eq!(fail_interrupted(&db.pool, "gpu-b", "new-run", 4).await.unwrap(), 1);
            let failed = get(&db.pool, a).await.unwrap().unwrap();
            assert_eq!(failed.state, JobState::Failed);
            assert!(
                failed.outcome.unwrap().contains("stopped while this job ran"),
                "{:?}",
                db.backend
            );
            assert!(
                !finish(&db.pool, a, "old-run", &Outcome::done("late"), 5).await.unwrap(),
                "the old run cannot complete it"
            );
            assert_eq!(
                claim(&db.pool, "gpu-b", "new-run", 6).await.unwrap().map(|j| j.id),
                Some(b)
            );
            assert_eq!(claim(&db.pool, "gpu-b", "new-run", 7).await.unwrap(), None);
            let long = "é".repeat(MAX_OUTCOME);
            assert!(finish(&db.pool, b, "new-run", &Outcome::done(&long), 8).await.unwrap());
            let kept = get(&db.pool, b).await.unwrap().unwrap().outcome.unwrap();
            assert!(kept.len() < MAX_OUTCOME + 64 && kept.ends_with("bytes]"));
        }
    }

    /// A row written by hand or by a newer console, with arguments this one cannot read, is
    /// claimed as failed with what it said: the runner completes it as failed and never
    /// performs it as some other action.
    #[tokio::test]
    async fn a_job_with_unreadable_arguments_is_never_performed() {
        for db in crate::db::testing::both().await {
            sqlx::query(
                "insert into job (host, profile, action, args, requested_by, requested_on, reason, state, created_ms)
                 values ('gpu-b', 'p', 'bench', 'not json', 'alice', 'gpu-a', '', 'queued', 1)",
            )
            .execute(&db.pool)
            .await
            .unwrap();
            let job = claim(&db.pool, "gpu-b", "run", 2).await.unwrap().unwrap();
            assert_eq!(job.state, JobState::Failed);
            assert!(job.outcome.unwrap().contains("not json"));
        }
    }
}
