//! Hosts, the feature: the consoles sharing one database (a fleet on PostgreSQL, issue 16)
//! see and operate each other's engines through it, with no protocol of their own. Each
//! console registers its host and beats a heartbeat (`registry`), publishes its engines' rows
//! (`live`), and claims and performs the jobs other consoles queue for its engines (`jobs`,
//! `runner`, `perform`): serve, stop, restart, the log, a smoke test, a bench, a change's
//! gate, an incident's evidence. On SQLite (one host) the same tables hold this
//! console alone.

pub mod jobs;
pub mod live;
pub mod perform;
pub mod registry;
pub mod route;
pub mod runner;

use crate::context::Context;
use app::api::{HostRow, JobAction, JobArgs, JobRow};
use std::sync::Arc;

/// Why a hosts use-case failed.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("no host named {0} shares this console's database")]
    NoSuchHost(String),
    #[error("no profile named {0}")]
    NoSuchProfile(String),
    #[error("no job #{0}")]
    NoSuchJob(i64),
    #[error("{0}")]
    Invalid(String),
    #[error("the shared database: {0}")]
    Db(#[from] sqlx::Error),
}

/// This console in the registry: its host's name, where it is reached, and this run of it
/// (new at each start; the jobs it claims carry it).
#[derive(Clone, Debug)]
pub struct Identity {
    pub name: String,
    pub url: String,
    pub console_id: String,
    pub run: String,
}

impl Identity {
    /// This console, listening on `addr`.
    pub fn of(ctx: &Context, addr: std::net::SocketAddr) -> Self {
        Self {
            name: ctx.data.host_name(),
            url: ctx.data.console_url(addr),
            console_id: ctx.data.console_id(),
            run: hex::encode(rand::random::<[u8; 8]>()),
        }
    }
}

/// How old a heartbeat may be before its host is unreachable: three scrape intervals, at
/// least 15 s (a heartbeat is written every scrape interval).
pub fn stale_after_ms(scrape_interval_s: u64) -> i64 {
    (scrape_interval_s.saturating_mul(3_000)).max(15_000) as i64
}

/// The longest reason a job carries (it is journaled with the action).
const MAX_REASON: usize = 2_000;

/// The hosts of the shared database and their jobs, as the pages and the CLI use them.
#[derive(Clone)]
pub struct Hosts {
    ctx: Context,
    me: Arc<Identity>,
}

impl Hosts {
    pub fn new(ctx: Context, me: Arc<Identity>) -> Self {
        Self { ctx, me }
    }

    pub fn me(&self) -> &Identity {
        &self.me
    }

    /// Every registered host, this one first, then by name.
    pub async fn list(&self) -> Result<Vec<HostRow>, HostError> {
        let now = self.ctx.clock.now_ms();
        let stale = stale_after_ms(self.ctx.data.config.scrape_interval_s);
        let mut rows: Vec<HostRow> = registry::list(&self.ctx.pool)
            .await?
            .into_iter()
            .map(|h| h.row(now, stale, &self.me.name))
            .collect();
        rows.sort_by(|a, b| b.this.cmp(&a.this).then_with(|| a.name.cmp(&b.name)));
        Ok(rows)
    }

    /// Queues `action` on `profile`'s engine for `host`'s console. The host must be
    /// registered and the profile exist; a host that is down keeps the job queued until it
    /// comes back (its page says so).
    pub async fn request(
        &self,
        who: &str,
        host: &str,
        profile: &str,
        action: JobAction,
        args: &JobArgs,
        reason: &str,
    ) -> Result<i64, HostError> {
        if !crate::config::valid_host_name(host) || !registry::exists(&self.ctx.pool, host).await? {
            return Err(HostError::NoSuchHost(host.chars().take(80).collect()));
        }
        if !app::domain::profile::valid_name(profile) || self.ctx.store.get(profile).await.ok().flatten().is_none() {
            return Err(HostError::NoSuchProfile(profile.chars().take(80).collect()));
        }
        let reason = reason.trim();
        if reason.chars().count() > MAX_REASON {
            return Err(HostError::Invalid(format!("reason: at most {MAX_REASON} characters")));
        }
        // Only what the action reads is kept; the owner checks the values again.
        let args = match action {
            JobAction::Bench => match &args.bench {
                Some(b) if b.requests > 0 && b.concurrency > 0 && b.output_len > 0 => JobArgs {
                    bench: Some(b.clone()),
                    ..JobArgs::default()
                },
                _ => {
                    return Err(HostError::Invalid(
                        "bench: requests, concurrency and output length must be at least 1".into(),
                    ))
                }
            },
            JobAction::Gate | JobAction::Render => match args.change {
                Some(id) => {
                    let change = crate::changes::store::ChangeStore::new(self.ctx.pool.clone())
                        .get(id)
                        .await
                        .map_err(|_| HostError::Invalid(format!("change: no change #{id}")))?;
                    if change.profile != profile {
                        return Err(HostError::Invalid(format!(
                            "change: #{id} is about {}, not {profile}",
                            change.profile
                        )));
                    }
                    JobArgs {
                        change: Some(id),
                        ..JobArgs::default()
                    }
                }
                None => {
                    return Err(HostError::Invalid(
                        "change: a gate or render job names its change".into(),
                    ))
                }
            },
            JobAction::Evidence => JobArgs {
                clients_see_errors: args.clients_see_errors,
                ..JobArgs::default()
            },
            JobAction::IncidentAction => match (args.incident, &args.incident_action) {
                (Some(id), Some(a)) => JobArgs {
                    incident: Some(id),
                    incident_action: Some(a.clone()),
                    ..JobArgs::default()
                },
                _ => {
                    return Err(HostError::Invalid(
                        "incident: an incident's action names the incident and the action".into(),
                    ))
                }
            },
            _ => JobArgs::default(),
        };
        let id = jobs::insert(
            &self.ctx.pool,
            &jobs::NewJob {
                host,
                profile,
                action,
                args: &args,
                requested_by: who,
                requested_on: &self.me.name,
                reason,
            },
            self.ctx.clock.now_ms(),
        )
        .await?;
        tracing::info!(
            job = id,
            host,
            profile,
            action = action.as_str(),
            who,
            "job queued for another host"
        );
        Ok(id)
    }

    /// The host that runs `profile`'s engine when it is not this one: an action on it from
    /// here is a job for that host. `None` when it runs here or nowhere.
    pub async fn runs_elsewhere(&self, profile: &str) -> Result<Option<String>, HostError> {
        if self.ctx.control.is_running(profile) {
            return Ok(None);
        }
        Ok(live::running_elsewhere(&self.ctx.pool, profile, &self.me.name)
            .await?
            .into_iter()
            .next())
    }

    /// Queues a job and waits (at most `limit`) for its host to complete it: for a page that
    /// needs the result at once (the incident an evidence job opened).
    pub async fn request_and_wait(
        &self,
        who: &str,
        host: &str,
        profile: &str,
        action: JobAction,
        args: &JobArgs,
        limit: std::time::Duration,
    ) -> Result<JobRow, HostError> {
        let id = self.request(who, host, profile, action, args, "").await?;
        let until = tokio::time::Instant::now() + limit;
        loop {
            let job = self.job(id).await?;
            if job.state.finished() {
                return Ok(job);
            }
            if tokio::time::Instant::now() >= until {
                return Err(HostError::Invalid(format!(
                    "job #{id} on {host} is still {}; the Hosts page follows it",
                    job.state.as_str()
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    pub async fn job(&self, id: i64) -> Result<JobRow, HostError> {
        jobs::get(&self.ctx.pool, id).await?.ok_or(HostError::NoSuchJob(id))
    }

    pub async fn jobs(&self, limit: i64) -> Result<Vec<JobRow>, HostError> {
        Ok(jobs::list(&self.ctx.pool, limit.clamp(1, 1000)).await?)
    }
}
