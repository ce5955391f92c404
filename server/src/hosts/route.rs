//! Actions a page starts on a profile's engine, sent where the engine runs. On a fleet that
//! shares one database the change and incident pages are the same on every console, but a
//! gate serves the candidate and an incident's evidence reads the engine's metrics, log, GPUs
//! and processes: both belong to the host that runs it. When another host does, the action
//! is a job for that host (checked here first, so a refusal comes back at once); when this
//! host does, or none does, it runs here as on a single console.

use super::{HostError, Hosts};
use crate::changes::{ChangeError, Changes};
use crate::incidents::{IncidentServiceError, Incidents};
use app::api::{Caller, JobAction, JobArgs, JobState};
use app::domain::triage::Action;
use std::time::Duration;

/// How long the incident page waits for another host to open the incident it asked for
/// (the evidence is read there: a scrape window, the log, the process tree).
const EVIDENCE_WAIT: Duration = Duration::from_secs(90);

/// Why a routed action failed: the feature's own refusal, or the queue's.
#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error(transparent)]
    Change(#[from] ChangeError),
    #[error(transparent)]
    Incident(#[from] IncidentServiceError),
    #[error(transparent)]
    Host(#[from] HostError),
}

/// Where a routed action went.
#[derive(Clone, Debug, PartialEq)]
pub enum Routed {
    /// Started on this console.
    Here,
    /// Queued for `host` as job `job`.
    Job { host: String, job: i64 },
}

/// How long a review page waits for the engine's host to render a change.
const RENDER_WAIT: Duration = Duration::from_secs(10);
/// Renderings kept per console (a change's rendering is asked for once per version and host).
const RENDERINGS: usize = 256;

/// After a host failed to render a change, how long its page shows this console's rendering
/// at once instead of queueing another job and waiting again (a host that is down would
/// otherwise hold every view of the page for [`RENDER_WAIT`] and collect render jobs).
const RENDER_RETRY: Duration = Duration::from_secs(60);

/// A change version on a host: the change, digests of its active and candidate texts, the host.
type RenderKey = (i64, String, String, String);

/// What other hosts rendered for this console's review pages, and when one last failed to.
#[derive(Default)]
pub struct Renderings {
    done: std::collections::HashMap<RenderKey, app::api::LaunchView>,
    failed: std::collections::HashMap<RenderKey, (std::time::Instant, String)>,
}

/// The page actions that follow the engine to its host.
#[derive(Clone)]
pub struct Router {
    pub hosts: Hosts,
    pub changes: Changes,
    pub incidents: Incidents,
    /// What other hosts rendered for this console's review pages.
    pub renderings: std::sync::Arc<std::sync::Mutex<Renderings>>,
}

impl Router {
    /// Change `id` as its page shows it, its command lines and extra flags rendered by the
    /// host that runs its engine, with that host's configuration (installations, models root,
    /// allowed flags and addresses, the installed engine's help): on consoles sharing one
    /// database the reviewer reads what that host will run, not what this one would. When the
    /// host does not answer in time the page says so and shows this console's rendering.
    pub async fn change_view(&self, caller: Caller, id: i64) -> Result<app::api::ChangeView, RouteError> {
        let mut view = self.changes.get(caller.clone(), id).await?;
        let elsewhere = self.hosts.runs_elsewhere(&view.summary.profile).await?;
        let remote = match &elsewhere {
            Some(host) => Some(self.rendered_on(&caller, host, &view, id).await),
            None => None,
        };
        let launch = match (elsewhere, remote) {
            (Some(host), Some(Ok(r))) => {
                view.rendered_by = Some(host);
                r
            }
            (host, remote) => {
                if let (Some(host), Some(Err(why))) = (host, remote) {
                    view.render_note = Some(format!("{host}: {why}"));
                }
                self.changes
                    .render(&view.summary.profile, &view.base_env, &view.env)
                    .await
            }
        };
        view.argv_before = launch.argv_before;
        view.argv_after = launch.argv_after;
        view.extra_flags = launch.extra_flags;
        Ok(view)
    }

    /// `view`'s rendering by `host`: kept from before, or asked for with a render job (not
    /// again within [`RENDER_RETRY`] of a failure).
    async fn rendered_on(
        &self,
        caller: &Caller,
        host: &str,
        view: &app::api::ChangeView,
        id: i64,
    ) -> Result<app::api::LaunchView, String> {
        let key: RenderKey = (
            id,
            crate::accounts::digest(&view.base_env),
            view.content_hash.clone(),
            host.to_string(),
        );
        if let Ok(r) = self.renderings.lock() {
            if let Some(done) = r.done.get(&key) {
                return Ok(done.clone());
            }
            if let Some((at, why)) = r.failed.get(&key).filter(|(at, _)| at.elapsed() < RENDER_RETRY) {
                let left = RENDER_RETRY.saturating_sub(at.elapsed()).as_secs();
                return Err(format!("{why} (asked again in {left} s)"));
            }
        }
        let rendered = self.render_on(caller, host, &view.summary.profile, id).await;
        if let Ok(mut r) = self.renderings.lock() {
            if r.done.len() + r.failed.len() >= RENDERINGS {
                r.done.clear();
                r.failed.clear();
            }
            match &rendered {
                Ok(done) => {
                    r.failed.remove(&key);
                    r.done.insert(key, done.clone());
                }
                Err(why) => {
                    r.failed.insert(key, (std::time::Instant::now(), why.clone()));
                }
            }
        }
        rendered
    }

    async fn render_on(
        &self,
        caller: &Caller,
        host: &str,
        profile: &str,
        id: i64,
    ) -> Result<app::api::LaunchView, String> {
        let args = JobArgs {
            change: Some(id),
            ..JobArgs::default()
        };
        let job = self
            .hosts
            .request_and_wait(&caller.name, host, profile, JobAction::Render, &args, RENDER_WAIT)
            .await
            .map_err(|e| e.to_string())?;
        match job.state {
            JobState::Done => serde_json::from_str(job.outcome.as_deref().unwrap_or_default())
                .map_err(|e| format!("job #{}: an answer this console cannot read ({e})", job.id)),
            _ => Err(format!("job #{}: {}", job.id, job.outcome.unwrap_or_default())),
        }
    }

    /// Starts change `id`'s gate where its profile's engine runs.
    pub async fn start_gate(&self, caller: Caller, id: i64) -> Result<Routed, RouteError> {
        let profile = self.changes.gate_profile(&caller, id).await?;
        match self.hosts.runs_elsewhere(&profile).await? {
            Some(host) => {
                let args = JobArgs {
                    change: Some(id),
                    ..JobArgs::default()
                };
                let reason = format!("the gate of change #{id}");
                let job = self
                    .hosts
                    .request(&caller.name, &host, &profile, JobAction::Gate, &args, &reason)
                    .await?;
                Ok(Routed::Job { host, job })
            }
            None => {
                self.changes.start_gate(caller, id).await?;
                Ok(Routed::Here)
            }
        }
    }

    /// Opens an incident on `profile` with the evidence read where its engine runs; returns
    /// the incident's number (another host's job is waited for, up to a bound).
    pub async fn open_incident(&self, who: &str, profile: &str, clients_see_errors: bool) -> Result<i64, RouteError> {
        match self.hosts.runs_elsewhere(profile).await? {
            Some(host) => {
                let args = JobArgs {
                    clients_see_errors,
                    ..JobArgs::default()
                };
                let job = self
                    .hosts
                    .request_and_wait(who, &host, profile, JobAction::Evidence, &args, EVIDENCE_WAIT)
                    .await?;
                match (job.state, job.result_id) {
                    (JobState::Done, Some(id)) => Ok(id),
                    _ => Err(HostError::Invalid(format!(
                        "{host} could not open the incident (job #{}): {}",
                        job.id,
                        job.outcome.unwrap_or_default()
                    ))
                    .into()),
                }
            }
            None => Ok(self
                .incidents
                .open(profile, who, "console", clients_see_errors)
                .await?
                .0),
        }
    }

    /// Takes one of incident `id`'s actions where its engine runs. A suggested profile edit
    /// is a change under review, made here; serve, stop, restart and the smoke test go to
    /// the engine's host.
    pub async fn incident_action(
        &self,
        who: &str,
        id: i64,
        action: Action,
        reason: &str,
    ) -> Result<Routed, RouteError> {
        let inc = self.incidents.may_act(id, &action, reason).await?;
        let elsewhere = match action {
            Action::EditProfile { .. } => None,
            _ => self.hosts.runs_elsewhere(&inc.profile).await?,
        };
        match elsewhere {
            Some(host) => {
                let args = JobArgs {
                    incident: Some(id),
                    incident_action: Some(action),
                    ..JobArgs::default()
                };
                let job = self
                    .hosts
                    .request(who, &host, &inc.profile, JobAction::IncidentAction, &args, reason)
                    .await?;
                Ok(Routed::Job { host, job })
            }
            None => {
                self.incidents.act(id, action, reason, who).await?;
                Ok(Routed::Here)
            }
        }
    }
}
