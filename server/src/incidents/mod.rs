//! Incidents: opening one captures the evidence and walks the triage (health → metrics →
//! gpu → logs, then every runbook row); actions go one at a time, with a reason, and health
//! and metrics are checked again after each; everything lands on the timeline.

pub mod evidence;
pub mod store;

use crate::context::Context;
use crate::control::ControlError;
use crate::monitor::history::History;
use app::domain::gpu::GpuState;
use app::domain::incident::{Entry, Postmortem};
use app::domain::triage::{diagnose, Action, Diagnosis, Evidence};
use evidence::Window;
use std::time::Duration;
pub use store::{IncidentError, IncidentStore};

/// Why an incident request was refused.
#[derive(Debug, thiserror::Error)]
pub enum IncidentServiceError {
    #[error(transparent)]
    Store(#[from] IncidentError),
    #[error(transparent)]
    Control(#[from] ControlError),
    #[error("an action needs a reason: it goes on the timeline")]
    NoReason,
    #[error("action `{0}` is not offered by this incident's diagnosis (restart only for a dead or hung engine or an OOM under load)")]
    NotOffered(String),
    #[error("incident #{0} is resolved")]
    Resolved(i64),
    #[error("profile change {key}={value}: {detail}")]
    BadChange { key: String, value: String, detail: String },
}

/// Why an incident's action, once under way, failed: the outcome on the timeline.
#[derive(Debug, thiserror::Error)]
enum ActionFailed {
    #[error(transparent)]
    Control(#[from] ControlError),
    #[error(transparent)]
    Refused(#[from] IncidentServiceError),
    #[error(transparent)]
    Change(#[from] crate::changes::ChangeError),
    /// The smoke test ran and failed these cases.
    #[error("smoke-toolcall FAIL: {0}")]
    Smoke(String),
}

/// The incident service, shared by the console's server functions, the alert webhook and the
/// CLI.
#[derive(Clone)]
pub struct Incidents {
    pub ctx: Context,
    pub store: IncidentStore,
    /// Profile changes an incident proposes go through review like any other.
    changes: crate::changes::Changes,
    history: Option<History>,
    gpu: Option<tokio::sync::watch::Receiver<GpuState>>,
    /// Without the console's history: how long the metric window scraped now lasts.
    scrape_window: Duration,
    /// Alert rows written per incident in the current window (see [`MAX_ALERT_ROWS`]).
    alert_rows: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<i64, AlertWindow>>>,
}

/// Alerts read from one webhook post; the rest are ignored (and logged).
const MAX_ALERTS_PER_POST: usize = 100;
/// New alert rows one incident takes per [`ALERT_WINDOW`]; past it, one note says how many
/// were left out. Alertmanager re-sends what still fires, and anyone with the token can post
/// thousands of alerts: 5 posts once made 506 timeline rows.
const MAX_ALERT_ROWS: usize = 20;
const ALERT_WINDOW: Duration = Duration::from_secs(600);

/// How long a serve or restart may take before the re-check runs anyway.
const RECHECK_WAIT: Duration = Duration::from_secs(120);

impl Incidents {
    pub fn new(ctx: Context, history: Option<History>, gpu: Option<tokio::sync::watch::Receiver<GpuState>>) -> Self {
        let store = IncidentStore::new(ctx.pool.clone());
        Self {
            changes: crate::changes::Changes::new(ctx.clone()),
            ctx,
            store,
            history,
            gpu,
            scrape_window: Duration::from_secs(10),
            alert_rows: Default::default(),
        }
    }

    /// The same service with another scrape window (the CLI's `--window`).
    pub fn with_window(mut self, window: Duration) -> Self {
        self.scrape_window = window;
        self
    }

    async fn evidence(&self, profile: &str, clients_see_errors: bool) -> Result<Evidence, ControlError> {
        let window = match &self.history {
            Some(h) => Window::History(h),
            None => Window::Scrape(self.scrape_window),
        };
        let gpu = self.gpu.as_ref().map(|g| g.borrow().clone());
        evidence::collect(&self.ctx, profile, window, gpu, clients_see_errors).await
    }

    /// Opens an incident: evidence first, then the triage, all on the timeline.
    pub async fn open(
        &self,
        profile: &str,
        who: &str,
        source: &str,
        clients_see_errors: bool,
    ) -> Result<(i64, Evidence, Diagnosis), IncidentServiceError> {
        let ev = self.evidence(profile, clients_see_errors).await?;
        let d = diagnose(&ev);
        let id = self.store.create(profile, source, &ev, &d).await?;
        self.store
            .append(
                id,
                who,
                &Entry::Opened {
                    source: source.to_string(),
                },
            )
            .await?;
        for s in &d.steps {
            self.store
                .append(
                    id,
                    who,
                    &Entry::Step {
                        step: s.step,
                        readings: s.readings.clone(),
                    },
                )
                .await?;
        }
        self.store
            .append(
                id,
                who,
                &Entry::Diagnosis {
                    rule: d.primary().map(|f| f.rule),
                    after_upgrade: d.after_upgrade,
                },
            )
            .await?;
        tracing::info!(incident = id, profile, rule = ?d.primary().map(|f| f.rule.id()), "incident opened");
        Ok((id, ev, d))
    }

    /// Starts one action; it runs in the background, and its outcome and the re-check land on
    /// the timeline.
    /// The incident when `action` may be taken on it now: a reason given, the incident open,
    /// the action one its diagnosis offers, a suggested edit valid. Checked where the action
    /// is asked for and again where it runs.
    pub async fn may_act(
        &self,
        id: i64,
        action: &Action,
        reason: &str,
    ) -> Result<app::domain::incident::Incident, IncidentServiceError> {
        if reason.trim().is_empty() {
            return Err(IncidentServiceError::NoReason);
        }
        let inc = self.store.get(id).await?;
        if inc.resolved {
            return Err(IncidentServiceError::Resolved(id));
        }
        if !app::domain::incident::offered_actions(&inc).contains(action) {
            return Err(IncidentServiceError::NotOffered(action.id().to_string()));
        }
        if let Action::EditProfile { key, value } = action {
            self.check_change(&inc.profile, key, value).await?;
        }
        Ok(inc)
    }

    pub async fn act(&self, id: i64, action: Action, reason: &str, who: &str) -> Result<(), IncidentServiceError> {
        let inc = self.may_act(id, &action, reason).await?;
        self.store
            .append(
                id,
                who,
                &Entry::Action {
                    action: action.clone(),
                    reason: reason.trim().to_string(),
                },
            )
            .await?;
        let this = self.clone();
        let who = who.to_string();
        let reason = reason.trim().to_string();
        tokio::spawn(async move {
            let profile = inc.profile.clone();
            let result = this.perform(&profile, &action, &who, &reason).await;
            let (ok, detail) = match result {
                Ok(d) => (true, d),
                Err(e) => (false, e.to_string()),
            };
            let context = serde_json::json!({"incident": id, "action": action, "ok": ok, "outcome": detail});
            let kind = match &action {
                Action::EditProfile { .. } => "change-submitted",
                _ => "incident-action",
            };
            this.ctx.record(&who, kind, &profile, &reason, context).await;
            let outcome = Entry::Outcome {
                action: action.id().to_string(),
                ok,
                detail,
            };
            if let Err(e) = this.store.append(id, &who, &outcome).await {
                tracing::error!(incident = id, error = %e, "the action's outcome is not on the incident's timeline");
            }
            // Operating rule 2: health and metrics after each action.
            match this.evidence(&profile, inc.evidence.clients_see_errors).await {
                Ok(ev) => {
                    let d = diagnose(&ev);
                    let state = ev.state.map(|s| s.as_str()).unwrap_or("stopped").to_string();
                    if let Err(e) = this.store.set_latest(id, &ev, &d).await {
                        tracing::error!(incident = id, error = %e, "the recheck's evidence is not stored");
                    }
                    let recheck = Entry::Recheck {
                        rule: d.primary().map(|f| f.rule),
                        state,
                    };
                    if let Err(e) = this.store.append(id, &who, &recheck).await {
                        tracing::error!(incident = id, error = %e, "the recheck is not on the incident's timeline");
                    }
                }
                Err(e) => tracing::warn!(incident = id, error = %e, "re-check after an action"),
            }
        });
        Ok(())
    }

    /// Validates a suggested profile change before anything is recorded.
    async fn check_change(&self, profile: &str, key: &str, value: &str) -> Result<(), IncidentServiceError> {
        self.changed_profile(profile, key, value).await.map(|_| ())
    }

    async fn changed_profile(
        &self,
        profile: &str,
        key: &str,
        value: &str,
    ) -> Result<app::domain::profile::Profile, IncidentServiceError> {
        let bad = |detail: String| IncidentServiceError::BadChange {
            key: key.to_string(),
            value: value.to_string(),
            detail,
        };
        if !app::domain::profile::KEYS.contains(&key) {
            return Err(bad("not a profile key".into()));
        }
        let p = self.ctx.control.resolve(profile).await?.profile;
        let mut lines: Vec<String> = p
            .to_env()
            .lines()
            .filter(|l| l.split_once('=').map(|(k, _)| k) != Some(key))
            .map(str::to_string)
            .collect();
        lines.push(format!("{key}={value}"));
        // Errors refuse the change; warnings (a memory fraction above 0.92) do not.
        let (changed, _warnings) = app::domain::profile::Profile::from_env(profile, &(lines.join("\n") + "\n"))
            .map_err(|issues| bad(issues.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; ")))?;
        Ok(changed)
    }

    async fn perform(&self, profile: &str, action: &Action, who: &str, reason: &str) -> Result<String, ActionFailed> {
        let wait_healthy = async {
            let deadline = tokio::time::Instant::now() + RECHECK_WAIT;
            while tokio::time::Instant::now() < deadline {
                if let Ok(crate::control::Resolved { profile: p, .. }) = self.ctx.control.resolve(profile).await {
                    let st = self.ctx.control.status(&p).await;
                    if !matches!(st.state, app::domain::engine::EngineState::Starting) {
                        return st.state.as_str().to_string();
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            "starting".to_string()
        };
        match action {
            Action::Restart => {
                self.ctx.control.restart(profile).await?;
                Ok(wait_healthy.await)
            }
            Action::Serve => {
                self.ctx.control.serve(profile, |_| {}).await?;
                Ok(wait_healthy.await)
            }
            Action::Stop => Ok(format!("{:?}", self.ctx.control.stop(profile).await?)),
            Action::EditProfile { key, value } => {
                let changed = self.changed_profile(profile, key, value).await?;
                // Under review like every profile change (the same checks as the editor: not the
                // same as the active profile, not stale): an approver approves it and its gate
                // makes it active (or the previous profile stays).
                let caller = app::api::Caller {
                    name: who.to_string(),
                    role: app::domain::auth::Role::Operator,
                };
                let id = self
                    .changes
                    .propose(
                        caller,
                        None,
                        profile.to_string(),
                        changed.to_env(),
                        reason.to_string(),
                        true,
                    )
                    .await?;
                Ok(format!(
                    "{key}={value} proposed as change #{id}: it applies once an approver approves it and its gate passes (/changes/{id})"
                ))
            }
            Action::Smoke => {
                let resolved = self.ctx.control.resolve(profile).await?;
                let target = crate::runs::Target::profile(resolved);
                let run = crate::runs::Runs::new(self.ctx.clone()).smoke(&target, |_| {}).await;
                if run.report.passed() {
                    Ok("smoke-toolcall PASS".into())
                } else {
                    Err(ActionFailed::Smoke(run.report.failed_cases().join(", ")))
                }
            }
        }
    }

    pub async fn note(&self, id: i64, who: &str, text: &str) -> Result<(), IncidentServiceError> {
        self.store.get(id).await?;
        let text: String = text.trim().chars().take(4000).collect();
        if text.is_empty() {
            return Ok(());
        }
        self.store.append(id, who, &Entry::Note { text }).await?;
        Ok(())
    }

    pub async fn resolve(&self, id: i64, who: &str) -> Result<(), IncidentServiceError> {
        self.store.get(id).await?;
        self.store.resolve(id).await?;
        self.store.append(id, who, &Entry::Resolved).await?;
        Ok(())
    }

    pub async fn save_postmortem(&self, id: i64, p: &Postmortem) -> Result<(), IncidentServiceError> {
        let cap = |s: &str| s.chars().take(20_000).collect::<String>();
        let p = Postmortem {
            symptom: cap(&p.symptom),
            root_cause: cap(&p.root_cause),
            what_changed: cap(&p.what_changed),
            catch_earlier: cap(&p.catch_earlier),
            fin: p.fin,
        };
        self.store.set_postmortem(id, &p).await?;
        Ok(())
    }

    /// An Alertmanager webhook: each firing alert that names one of our profiles (label
    /// `profile`, else `engine`) opens an incident, or joins the open one; resolved alerts are
    /// noted on the open incident. Returns the incidents touched.
    pub async fn alertmanager(&self, payload: &serde_json::Value) -> Result<Vec<i64>, IncidentServiceError> {
        use std::collections::HashMap;
        let mut touched = Vec::new();
        let alerts = app::domain::incident::alerts_of(payload);
        if alerts.len() > MAX_ALERTS_PER_POST {
            tracing::warn!(
                alerts = alerts.len(),
                read = MAX_ALERTS_PER_POST,
                "alertmanager post cut"
            );
        }
        // Each incident's alerts as its timeline last recorded them: a repeat adds nothing.
        let mut states: HashMap<i64, HashMap<String, String>> = HashMap::new();
        let mut left_out: HashMap<i64, usize> = HashMap::new();
        for alert in alerts.into_iter().take(MAX_ALERTS_PER_POST) {
            let profile = alert.profile.as_str();
            if self.ctx.store.get(profile).await.ok().flatten().is_none() {
                continue;
            }
            let status = if alert.firing { "firing" } else { "resolved" };
            let id = match self.store.open_for(profile).await? {
                Some(id) => id,
                None if status == "firing" => self.open(profile, "alertmanager", "alertmanager", false).await?.0,
                None => continue,
            };
            touched.push(id);
            if let std::collections::hash_map::Entry::Vacant(slot) = states.entry(id) {
                let mut known = HashMap::new();
                for t in self.store.get(id).await?.timeline {
                    if let Entry::Alert { name, status } = t.entry {
                        known.insert(name, status);
                    }
                }
                slot.insert(known);
            }
            let known = states.entry(id).or_default();
            if known.get(&alert.name).map(String::as_str) == Some(status) {
                continue;
            }
            if !self.take_alert_row(id, false) {
                *left_out.entry(id).or_default() += 1;
                continue;
            }
            known.insert(alert.name.clone(), status.to_string());
            let entry = Entry::Alert {
                name: alert.name,
                status: status.to_string(),
            };
            self.store.append(id, "alertmanager", &entry).await?;
        }
        for (id, n) in left_out {
            // One note per incident per window, however many posts are cut.
            if self.take_alert_row(id, true) {
                let text = format!(
                    "{n} more alert notifications were not added: at most {MAX_ALERT_ROWS} alert rows per incident in {} minutes",
                    ALERT_WINDOW.as_secs() / 60
                );
                self.store.append(id, "alertmanager", &Entry::Note { text }).await?;
            }
        }
        touched.dedup();
        Ok(touched)
    }

    /// Whether incident `id` may take another alert row in this window (`note`: the one note
    /// of what was left out, once per window).
    fn take_alert_row(&self, id: i64, note: bool) -> bool {
        let Ok(mut rows) = self.alert_rows.lock() else {
            return false;
        };
        let now = std::time::Instant::now();
        let w = rows.entry(id).or_insert(AlertWindow {
            start: now,
            rows: 0,
            noted: false,
        });
        if now.duration_since(w.start) > ALERT_WINDOW {
            *w = AlertWindow {
                start: now,
                rows: 0,
                noted: false,
            };
        }
        if note {
            return !std::mem::replace(&mut w.noted, true);
        }
        w.rows += 1;
        w.rows <= MAX_ALERT_ROWS
    }
}

/// One incident's alert rows in the current window.
struct AlertWindow {
    start: std::time::Instant,
    rows: usize,
    noted: bool,
}

/// A serve refused because a foreign container holds the engine's name opens an incident
/// (with the evidence and the refusal on its timeline): someone who can start containers in
/// the console's runtime put it there. Any other error: nothing to do. Returns the incident.
pub async fn on_serve_refused(ctx: &Context, profile: &str, error: &ControlError) -> Option<i64> {
    let ControlError::ForeignContainer { container, why, .. } = error else {
        return None;
    };
    let incidents = Incidents::new(ctx.clone(), None, None);
    let opened = incidents.open(profile, "roofline", "foreign-container", false).await;
    match opened {
        Ok((id, _, _)) => {
            let text = format!("serve refused: a container named {container} is not this console's engine ({why})");
            if let Err(e) = incidents.store.append(id, "roofline", &Entry::Note { text }).await {
                tracing::warn!(error = %e, id, "could not note the foreign container on the incident");
            }
            ctx.journal
                .record(
                    "roofline",
                    "foreign-container",
                    profile,
                    "serve refused to adopt a container it did not start",
                    serde_json::json!({"container": container, "why": why, "incident": id}),
                )
                .await;
            Some(id)
        }
        Err(e) => {
            tracing::error!(error = %e, profile, "could not open an incident for a foreign container");
            None
        }
    }
}
