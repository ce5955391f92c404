//! This console's part in a fleet sharing one database: its place in the registry and its
//! heartbeat, its engines' rows published as they change, the other hosts' rows followed
//! every second, and the jobs queued for its engines claimed and performed here, woken by
//! PostgreSQL's `LISTEN` the moment one is queued (and a poll every two seconds besides, for
//! a notification lost while the connection was down).

use super::{jobs, live, registry, stale_after_ms, Identity};
use crate::context::Context;
use crate::engines::Engines;
use app::api::{EngineAction, JobAction, JobRow};
use app::domain::engine::EngineStatus;
use std::collections::HashMap;
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
    engines: Engines,
    fleet: watch::Receiver<Vec<EngineStatus>>,
    me: Arc<Identity>,
) -> anyhow::Result<()> {
    let now = ctx.clock.now_ms();
    let stale = stale_after_ms(ctx.data.config.scrape_interval_s);
    registry::register(&ctx.pool, &me, &facts(&ctx).await, now, stale).await?;
    live::clear(&ctx.pool, &me.name).await?;
    let failed = jobs::fail_interrupted(&ctx.pool, &me.name, &me.run, now).await?;
    if failed > 0 {
        tracing::warn!(
            jobs = failed,
            "jobs left running by this host's previous console failed"
        );
    }
    tracing::info!(host = %me.name, url = %me.url, "registered in the fleet's shared database");
    tokio::spawn(heartbeat(ctx.clone(), me.clone()));
    tokio::spawn(publish(ctx.clone(), me.clone(), fleet));
    tokio::spawn(job_loop(ctx, engines, me));
    Ok(())
}

/// The other hosts' engines, read every second (for the fleet page).
pub fn follow(ctx: Context, me: Arc<Identity>) -> watch::Receiver<Vec<EngineStatus>> {
    let (tx, rx) = watch::channel(Vec::new());
    tokio::spawn(async move {
        let stale = stale_after_ms(ctx.data.config.scrape_interval_s);
        loop {
            match live::others(&ctx.pool, &me.name, ctx.clock.now_ms(), stale).await {
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

async fn heartbeat(ctx: Context, me: Arc<Identity>) {
    let every = Duration::from_secs(ctx.data.config.scrape_interval_s.clamp(1, 5));
    let mut lost = false;
    loop {
        tokio::time::sleep(every).await;
        match registry::heartbeat(&ctx.pool, &me, ctx.clock.now_ms()).await {
            Ok(true) if lost => {
                lost = false;
                tracing::info!("the shared database is back: heartbeat written");
            }
            Ok(true) => {}
            Ok(false) => {
                tracing::error!(host = %me.name, "another console took this host's name in the registry: its jobs go there")
            }
            Err(e) if !lost => {
                lost = true;
                tracing::error!(error = %e, "the shared database is unreachable: engines keep running, local control works, other hosts see this one as unreachable");
            }
            Err(_) => {}
        }
    }
}

async fn publish(ctx: Context, me: Arc<Identity>, mut fleet: watch::Receiver<Vec<EngineStatus>>) {
    let mut published: HashMap<String, String> = HashMap::new();
    loop {
        let rows = fleet.borrow_and_update().clone();
        if let Err(e) = live::publish(&ctx.pool, &me.name, &rows, &mut published, ctx.clock.now_ms()).await {
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

async fn job_loop(ctx: Context, engines: Engines, me: Arc<Identity>) {
    let wake = Arc::new(Notify::new());
    if crate::db::Backend::of(&ctx.pool) == crate::db::Backend::Postgres {
        let url = ctx.pool.connect_options().database_url.to_string();
        tokio::spawn(listen(url, me.name.clone(), wake.clone()));
    }
    loop {
        loop {
            match jobs::claim(&ctx.pool, &me.name, &me.run, ctx.clock.now_ms()).await {
                Ok(Some(job)) => {
                    let (ctx, engines, me) = (ctx.clone(), engines.clone(), me.clone());
                    tokio::spawn(async move { perform(&ctx, &engines, &me, job).await });
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

async fn perform(ctx: &Context, engines: &Engines, me: &Identity, job: JobRow) {
    let why = if job.reason.is_empty() {
        format!("job #{} from {}", job.id, job.requested_on)
    } else {
        format!("{} (job #{} from {})", job.reason, job.id, job.requested_on)
    };
    tracing::info!(job = job.id, profile = %job.profile, action = job.action.as_str(), who = %job.requested_by, "performing a job");
    let result = match job.action {
        JobAction::Logs => engines.log_text(&job.profile, 200).await,
        JobAction::Serve => {
            engines
                .perform(&job.requested_by, &job.profile, EngineAction::Serve, &why)
                .await
        }
        JobAction::Stop => {
            engines
                .perform(&job.requested_by, &job.profile, EngineAction::Stop, &why)
                .await
        }
        JobAction::Restart => {
            engines
                .perform(&job.requested_by, &job.profile, EngineAction::Restart, &why)
                .await
        }
    };
    let (ok, text) = match result {
        Ok(t) => (true, t),
        Err(e) => (false, e.to_string()),
    };
    // The outcome must land: retried while the database is away.
    let mut wait = Duration::from_millis(200);
    for attempt in 0..8 {
        match jobs::finish(&ctx.pool, job.id, &me.run, ok, &text, ctx.clock.now_ms()).await {
            Ok(true) => return,
            Ok(false) => {
                tracing::warn!(job = job.id, "the job was no longer ours to complete");
                return;
            }
            Err(e) => {
                tracing::warn!(job = job.id, attempt, error = %e, "completing a job; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(10));
            }
        }
    }
    tracing::error!(job = job.id, ok, outcome = %text, "the job's outcome could not be written");
}
