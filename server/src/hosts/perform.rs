//! What a claimed job does on the engine's host: the same use-cases its own pages call (the
//! engine page's actions and runs, a change's gate, an incident's opening), for the account
//! that asked on another host. That account is read again here, from the shared accounts: a
//! job of an account disabled or demoted since it was queued is refused, and a gate is
//! checked against the review rules with the role the account has now.

use super::jobs::Outcome;
use crate::accounts::Accounts;
use crate::changes::Changes;
use crate::engines::Engines;
use crate::incidents::Incidents;
use crate::runs::live::LiveRuns;
use app::api::{BenchRequest, Caller, EngineAction, JobAction, JobRow, JobState, RunStatus};
use app::domain::auth::Role;
use app::domain::review::ChangeState;
use std::time::Duration;

/// How often a run started by a job is looked at until it ends.
const RUN_POLL: Duration = Duration::from_millis(500);
/// The longest a job waits for its smoke test, bench or gate (a bench's own bounds end it
/// well before).
const RUN_LIMIT: Duration = Duration::from_secs(3 * 3600);

/// This host's use-cases, as the jobs queued for it need them.
#[derive(Clone)]
pub struct Performer {
    pub engines: Engines,
    pub runs: LiveRuns,
    pub changes: Changes,
    pub incidents: Incidents,
    pub accounts: Accounts,
}

impl Performer {
    /// Performs `job` to its end and says how it went.
    pub async fn perform(&self, job: &JobRow) -> Outcome {
        if job.state == JobState::Failed {
            // A row this version cannot read (an unknown action or arguments): never guessed at.
            return Outcome::failed(job.outcome.clone().unwrap_or_default());
        }
        // The rule the request was let through by, read again for the account as it is now
        // (a rendering for a review page reads what any signed-in reader of the change sees).
        let rule = match job.action {
            JobAction::Render => "get_change",
            _ => "request_host_action",
        };
        let needed = match app::domain::auth::access_for(rule) {
            Some(app::domain::auth::Access::Role(r)) => r,
            _ => Role::Admin,
        };
        let role = match self.accounts.current_role(&job.requested_by).await {
            Ok(Some(role)) if role.allows(needed) => role,
            Ok(_) => {
                return Outcome::failed(format!(
                    "{} may not act on engines any more (disabled, removed or no longer an operator)",
                    job.requested_by
                ))
            }
            Err(e) => return Outcome::failed(format!("reading the requester's account: {e}")),
        };
        let why = why(job);
        tracing::info!(job = job.id, profile = %job.profile, action = job.action.as_str(), who = %job.requested_by, "performing a job");
        let who = job.requested_by.as_str();
        let simple = |r: Result<String, crate::engines::EngineError>| match r {
            Ok(t) => Outcome::done(t),
            Err(e) => Outcome::failed(e.to_string()),
        };
        match job.action {
            JobAction::Logs => simple(self.engines.log_text(&job.profile, 200).await),
            JobAction::Serve => simple(self.engines.perform(who, &job.profile, EngineAction::Serve, &why).await),
            JobAction::Stop => simple(self.engines.perform(who, &job.profile, EngineAction::Stop, &why).await),
            JobAction::Restart => simple(
                self.engines
                    .perform(who, &job.profile, EngineAction::Restart, &why)
                    .await,
            ),
            JobAction::Smoke => self.run(who, &job.profile, None).await,
            JobAction::Bench => match &job.args.bench {
                Some(b) => self.run(who, &job.profile, Some(b.clone())).await,
                None => Outcome::failed("a bench job needs its parameters (args.bench)"),
            },
            JobAction::Gate => match job.args.change {
                Some(id) => self.gate(who, role, id, &job.profile).await,
                None => Outcome::failed("a gate job needs its change (args.change)"),
            },
            JobAction::Evidence => match self
                .incidents
                .open(
                    &job.profile,
                    who,
                    &format!("job #{} from {}", job.id, job.requested_on),
                    job.args.clients_see_errors,
                )
                .await
            {
                Ok((id, _, d)) => Outcome {
                    ok: true,
                    text: format!(
                        "incident #{id} opened; triage: {}",
                        d.primary().map(|f| f.rule.id()).unwrap_or("nothing found")
                    ),
                    result_id: Some(id),
                },
                Err(e) => Outcome::failed(e.to_string()),
            },
            JobAction::Render => match job.args.change {
                Some(id) => match self.changes.launch_of(id).await {
                    Ok(view) => Outcome::done(serde_json::to_string(&view).unwrap_or_default()),
                    Err(e) => Outcome::failed(e.to_string()),
                },
                None => Outcome::failed("a render job names its change"),
            },
            JobAction::IncidentAction => match (job.args.incident, &job.args.incident_action) {
                (Some(id), Some(action)) => self.incident_action(job, id, action.clone()).await,
                _ => Outcome::failed("an incident's action job names the incident and the action"),
            },
        }
    }

    /// An incident's action on this host's engine, as the incident's page takes it here: its
    /// outcome and the re-check land on the incident's timeline (shared by every host).
    async fn incident_action(&self, job: &JobRow, id: i64, action: app::domain::triage::Action) -> Outcome {
        match self.incidents.may_act(id, &action, &job.reason).await {
            Ok(inc) if inc.profile != job.profile => {
                return Outcome::failed(format!("incident #{id} is about {}, not {}", inc.profile, job.profile))
            }
            Ok(_) => {}
            Err(e) => return Outcome::failed(e.to_string()),
        }
        let reason = why(job);
        match self.incidents.act(id, action.clone(), &reason, &job.requested_by).await {
            Ok(()) => Outcome {
                ok: true,
                text: format!("{} started; its outcome is on incident #{id}", action.id()),
                result_id: Some(id),
            },
            Err(e) => Outcome::failed(e.to_string()),
        }
    }

    /// smoke-toolcall (no bench) or a bench, started as the engine page starts it and waited
    /// for: the outcome is the verdict or the figures and the stored run's number.
    async fn run(&self, who: &str, profile: &str, bench: Option<BenchRequest>) -> Outcome {
        let is_bench = bench.is_some();
        if let Err(e) = self.runs.start(who, profile, bench).await {
            return Outcome::failed(e.to_string());
        }
        let Some(status) = self.until_done(profile).await else {
            return Outcome::failed(format!("the run did not end within {} s", RUN_LIMIT.as_secs()));
        };
        let ok = status.error.is_none() && status.passed != Some(false);
        let mut text = match (&status.error, is_bench) {
            (Some(e), _) => e.clone(),
            (None, false) if ok => "smoke-toolcall passed".to_string(),
            (None, false) => "smoke-toolcall failed".to_string(),
            (None, true) => self.bench_figures(profile, status.result_id).await,
        };
        if let Some(id) = status.result_id {
            text.push_str(&format!(" (run #{id})"));
        }
        Outcome {
            ok,
            text,
            result_id: status.result_id,
        }
    }

    async fn until_done(&self, profile: &str) -> Option<RunStatus> {
        let started = tokio::time::Instant::now();
        while started.elapsed() < RUN_LIMIT {
            match self.runs.status(profile) {
                Some(s) if !s.running => return Some(s),
                None => return None,
                Some(_) => tokio::time::sleep(RUN_POLL).await,
            }
        }
        None
    }

    async fn bench_figures(&self, profile: &str, id: Option<i64>) -> String {
        let Some(id) = id else {
            return "bench finished without a stored run".into();
        };
        match self.runs.benches(Some(profile), &[id]).await {
            Ok(runs) => match runs.first() {
                Some(r) => format!(
                    "bench: {} completed, {} failed, {:.1} output tokens/s, TTFT p95 {:.0} ms, TPOT p95 {:.1} ms",
                    r.summary.completed,
                    r.summary.failed,
                    r.summary.output_throughput,
                    r.summary.ttft_ms.p95,
                    r.summary.tpot_ms.p95
                ),
                None => "bench finished".into(),
            },
            Err(e) => format!("bench finished; reading its figures: {e}"),
        }
    }

    /// The change's gate, started with the requester's current role and waited for: done when
    /// the candidate went active, failed (with the failed step on the change's page) when not.
    async fn gate(&self, who: &str, role: Role, id: i64, profile: &str) -> Outcome {
        let caller = Caller {
            name: who.to_string(),
            role,
        };
        match self.changes.get(caller.clone(), id).await {
            Ok(v) if v.summary.profile != profile => {
                return Outcome::failed(format!("change #{id} is about {}, not {profile}", v.summary.profile))
            }
            Ok(_) => {}
            Err(e) => return Outcome::failed(e.to_string()),
        }
        let gate = match self.changes.start_gate(caller.clone(), id).await {
            Ok(g) => g,
            Err(e) => return Outcome::failed(e.to_string()),
        };
        if tokio::time::timeout(RUN_LIMIT, gate).await.is_err() {
            return Outcome::failed(format!("the gate did not end within {} s", RUN_LIMIT.as_secs()));
        }
        match self.changes.get(caller, id).await {
            Ok(v) => Outcome {
                ok: v.summary.state == ChangeState::Active,
                text: format!("gate of change #{id}: {}", v.summary.state.as_str()),
                result_id: Some(id),
            },
            Err(e) => Outcome::failed(e.to_string()),
        }
    }
}

/// The journal's reason for a job's action: the requester's, and where it came from.
fn why(job: &JobRow) -> String {
    if job.reason.is_empty() {
        format!("job #{} from {}", job.id, job.requested_on)
    } else {
        format!("{} (job #{} from {})", job.reason, job.id, job.requested_on)
    }
}
