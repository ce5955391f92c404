//! This console's part in a fleet sharing one database: its place in the registry and its
//! heartbeat, its engines' rows published as they change, the other hosts' rows followed
//! every second, and the jobs queued for its engines claimed and performed here, woken by
//! PostgreSQL's `LISTEN` the moment one is queued (and a poll every two seconds besides, for
//! a notification lost while the connection was down).
//!
//! The loops take the pool and this host's identity, not the whole console: the fleet bench
//! (`benches/fleet_db.rs`) runs fifty hosts' worth of them in one process against one
//! PostgreSQL, with synthetic engines and jobs that do nothing.

use super::jobs::Outcome;
use super::perform::Performer;
use super::{jobs, live, registry, stale_after_ms, Identity};
use crate::context::Context;
use crate::db::Pool;
use app::api::JobRow;
use app::domain::engine::{EngineState, EngineStatus};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};

/// How often the queue is read without a notification.
const POLL: Duration = Duration::from_secs(2);
/// How often the other hosts' rows are read.
const FOLLOW: Duration = Duration::from_secs(1);
/// The least time between two publications of this host's rows.
const PUBLISH_EVERY: Duration = Duration::from_secs(1);
/// The channel the job table's trigger notifies (the payload is the host).
pub const CHANNEL: &str = "roofline_job";

/// Takes this console's place in the registry (refused when another console holds the host
/// name), fails the jobs an earlier run left running, and starts the heartbeat, the
/// publisher and the job loop.
pub async fn start(
    ctx: Context,
    performer: Performer,
    fleet: watch::Receiver<Vec<EngineStatus>>,
    me: Arc<Identity>,
) -> anyhow::Result<()> {
    let stale = stale_after_ms(ctx.data.config.scrape_interval_s);
    join(&ctx.pool, &me, &facts(&ctx).await, stale).await?;
    tracing::info!(host = %me.name, url = %me.url, "registered in the fleet's shared database");
    let every = Duration::from_secs(ctx.data.config.scrape_interval_s.clamp(1, 5));
    tokio::spawn(heartbeat(ctx.pool.clone(), me.clone(), every));
    tokio::spawn(flush_on_return(ctx.journal.clone()));
    tokio::spawn(publish(ctx.pool.clone(), me.clone(), fleet));
    tokio::spawn(job_loop(ctx.pool.clone(), me, move |job| {
        let performer = performer.clone();
        async move { performer.perform(&job).await }
    }));
    Ok(())
}

/// Registers (refused when another console holds the name), forgets this host's rows of an
/// earlier run, and fails the jobs that run left running.
pub async fn join(pool: &Pool, me: &Identity, facts: &registry::Facts, stale_ms: i64) -> anyhow::Result<()> {
    let now = crate::clock::now_ms();
    registry::register(pool, me, facts, now, stale_ms).await?;
    live::clear(pool, &me.name).await?;
    let failed = jobs::fail_interrupted(pool, &me.name, &me.run, now).await?;
    if failed > 0 {
        tracing::warn!(
            jobs = failed,
            "jobs left running by this host's previous console failed"
        );
    }
    Ok(())
}

/// The other hosts' engines, read every second (for the fleet page).
pub fn follow(pool: Pool, me: Arc<Identity>, stale_ms: i64) -> watch::Receiver<Vec<EngineStatus>> {
    let (tx, rx) = watch::channel(Vec::<EngineStatus>::new());
    tokio::spawn(async move {
        loop {
            // While the database is away nothing is known of the other hosts: their rows stay,
            // marked unreachable, until the heartbeat finds it back.
            if crate::db::away() {
                tx.send_if_modified(|rows| {
                    let mut changed = false;
                    for r in rows.iter_mut().filter(|r| r.state != EngineState::Unreachable) {
                        r.state = EngineState::Unreachable;
                        r.live = None;
                        r.verdict = None;
                        r.note = Some("this console cannot reach the shared database".into());
                        changed = true;
                    }
                    changed
                });
                tokio::time::sleep(FOLLOW).await;
                continue;
            }
            match live::others(&pool, &me.name, crate::clock::now_ms(), stale_ms).await {
                Ok(rows) => {
                    tx.send_if_modified(|cur| std::mem::replace(cur, rows.clone()) != rows);
                }
                Err(e) => tracing::warn!(error = %e, "reading the other hosts' engines"),
            }
            tokio::time::sleep(FOLLOW).await;
            if tx.is_closed() {
                return;
            }
        }
    });
    rx
}

async fn facts(ctx: &Context) -> registry::Facts {
    let gpus = match crate::gpu::read().await {
        app::domain::gpu::GpuState::Available { gpus, .. } => gpus.into_iter().map(|g| g.name).collect(),
        _ => Vec::new(),
    };
    registry::Facts {
        gpus,
        installations: ctx.data.config.engines.keys().cloned().collect(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The heartbeat, every `every`; a lost database is logged once, and its return. It keeps
/// the process's [`crate::db::health`]: the degraded mode and the header's banner follow it.
pub async fn heartbeat(pool: Pool, me: Arc<Identity>, every: Duration) {
    let health = crate::db::health();
    loop {
        tokio::time::sleep(every).await;
        let beat = tokio::time::timeout(
            crate::db::ACQUIRE_TIMEOUT,
            registry::heartbeat(&pool, &me, crate::clock::now_ms()),
        )
        .await
        .unwrap_or_else(|_| Err(sqlx::Error::PoolTimedOut));
        match beat {
            Ok(true) => {
                if health.set_up() {
                    tracing::info!("the shared database is back: heartbeat written");
                }
            }
            Ok(false) => {
                tracing::error!(host = %me.name, "another console took this host's name in the registry: its jobs go there")
            }
            Err(e) => {
                if health.set_down(crate::clock::now_ms()) {
                    tracing::error!(error = %e, "the shared database is unreachable: engines keep running, local control works, other hosts see this one as unreachable; journal entries wait in the spool");
                }
            }
        }
    }
}

/// When the database is back, the journal entries made while it was away are written, in
/// order, before anything newer (the next append would do it too; this does not wait for one).
async fn flush_on_return(journal: crate::journal::Journal) {
    let mut health = crate::db::health().subscribe();
    let mut was_down = health.borrow().is_some();
    while health.changed().await.is_ok() {
        let down = health.borrow_and_update().is_some();
        if was_down && !down {
            match journal.flush().await {
                Ok(n) if n > 0 => tracing::info!(
                    entries = n,
                    "journal entries made while the database was away are written"
                ),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "writing the spooled journal entries; the next append tries again")
                }
            }
        }
        was_down = down;
    }
}

/// Publishes this host's rows as they change, at most once a second.
pub async fn publish(pool: Pool, me: Arc<Identity>, mut fleet: watch::Receiver<Vec<EngineStatus>>) {
    let mut published: HashMap<String, String> = HashMap::new();
    loop {
        let rows = fleet.borrow_and_update().clone();
        if crate::db::away() {
            // Written in full once the database is back.
            published.clear();
            tokio::time::sleep(PUBLISH_EVERY).await;
            continue;
        }
        if let Err(e) = live::publish(&pool, &me.name, &rows, &mut published, crate::clock::now_ms()).await {
            tracing::warn!(error = %e, "publishing this host's engines");
            // Written again in full once the database answers.
            published.clear();
        }
        tokio::time::sleep(PUBLISH_EVERY).await;
        if fleet.changed().await.is_err() {
            return;
        }
    }
}

/// Claims this host's jobs as they are queued and performs each on its own task with
/// `perform`, then completes it with its outcome.
pub async fn job_loop<F, Fut>(pool: Pool, me: Arc<Identity>, perform: F)
where
    F: Fn(JobRow) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    let wake = Arc::new(Notify::new());
    if crate::db::Backend::of(&pool) == crate::db::Backend::Postgres {
        let url = pool.connect_options().database_url.to_string();
        tokio::spawn(listen(url, me.name.clone(), wake.clone()));
    }
    let perform = Arc::new(perform);
    loop {
        while !crate::db::away() {
            match jobs::claim(&pool, &me.name, &me.run, crate::clock::now_ms()).await {
                Ok(Some(job)) => {
                    let (pool, me, perform) = (pool.clone(), me.clone(), perform.clone());
                    tokio::spawn(async move {
                        let id = job.id;
                        let outcome = perform(job).await;
                        finish(&pool, &me, id, &outcome).await;
                    });
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "claiming jobs");
                    break;
                }
            }
        }
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Wakes the job loop on each notification for this host; reconnects after a lost
/// connection (and wakes the loop then, for what was queued meanwhile).
async fn listen(url: String, host: String, wake: Arc<Notify>) {
    loop {
        let listened = async {
            let mut l = sqlx::postgres::PgListener::connect(&url).await?;
            l.listen(CHANNEL).await?;
            wake.notify_one();
            loop {
                let n = l.recv().await?;
                if n.payload() == host {
                    wake.notify_one();
                }
            }
            #[expect(unreachable_code, reason = "the loop ends only by an error")]
            Ok::<(), sqlx::Error>(())
        };
        if let Err(e) = listened.await {
            tracing::warn!(error = %e, "listening for jobs; polling until the connection is back");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Completes a job; the outcome must land, so it is retried while the database is away.
async fn finish(pool: &Pool, me: &Identity, id: i64, outcome: &Outcome) {
    let mut wait = Duration::from_millis(200);
    for attempt in 0..8 {
        match jobs::finish(pool, id, &me.run, outcome, crate::clock::now_ms()).await {
            Ok(true) => return,
            Ok(false) => {
                tracing::warn!(job = id, "the job was no longer ours to complete");
                return;
            }
            Err(e) => {
                tracing::warn!(job = id, attempt, error = %e, "completing a job; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(10));
            }
        }
    }
    tracing::error!(job = id, ok = outcome.ok, outcome = %outcome.text, "the job's outcome could not be written");
}
