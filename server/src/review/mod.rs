//! Review and approval of profile changes, and the gate that makes an approved change active.
//!
//! The rules (who may do what, in which state) are `app::domain::review`; this module keeps the
//! record, applies the rules to it, runs the gate against the real engine, and writes every
//! step into the change journal.
//!
//! The gate serves the candidate in the profile's own place (same state dir and port: on one
//! GPU there is no room for two), checks health and a one-token completion, smoke-toolcall and
//! a bench against the thresholds. The stored profile is only replaced once all of that passed;
//! on failure the candidate is stopped and the previous profile served again if it was running.

pub mod store;

use crate::control::EngineControl;
use app::api::service::BoxFut;
use app::api::{ApiError, Caller, ChangeService, ChangeView};
use app::domain::bench::{BenchParams, Endpoint};
use app::domain::envfile::env_diff;
use app::domain::profile::Profile;
use app::domain::review::{self, ChangeAction, ChangeState, Facts, GateCheck, GateReport, GateStep};
use store::{ChangeRow, ChangeStore};

/// The review service over one data directory.
#[derive(Clone)]
pub struct Changes {
    control: EngineControl,
    store: ChangeStore,
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::Internal(e.to_string())
}

fn store_error(e: store::StoreError) -> ApiError {
    match e {
        store::StoreError::NotFound(id) => ApiError::Invalid(format!("no change #{id}")),
        other => internal(other),
    }
}

fn refused(e: review::ReviewError) -> ApiError {
    match e {
        review::ReviewError::Role { .. }
        | review::ReviewError::SelfApproval
        | review::ReviewError::NotAuthor { .. } => ApiError::Forbidden(e.to_string()),
        other => ApiError::Invalid(other.to_string()),
    }
}

/// A profile file checked the way an import is: errors name the field and line.
pub fn parse_profile(name: &str, env_text: &str) -> Result<Profile, ApiError> {
    if !app::domain::profile::valid_name(name) {
        return Err(ApiError::NoSuchProfile(name.to_string()));
    }
    Profile::from_env(name, env_text)
        .map(|(p, _)| p)
        .map_err(|issues| ApiError::Invalid(issues.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; ")))
}

impl Changes {
    pub fn new(control: EngineControl) -> Self {
        let store = ChangeStore::new(control.store.pool());
        Self { control, store }
    }

    /// Marks gates cut off by a console restart as failed (they cannot report any more).
    pub async fn recover(&self) {
        let Ok(ids) = self.store.interrupted_gates().await else {
            return;
        };
        for id in ids {
            if let Ok(true) = self
                .store
                .transition(id, ChangeState::Gating, ChangeState::GateFailed)
                .await
            {
                let _ = self
                    .store
                    .add_event(id, "console", "gate-failed", "the console restarted while the gate ran")
                    .await;
            }
        }
    }

    async fn active_env(&self, profile: &str) -> Result<String, ApiError> {
        Ok(self
            .control
            .store
            .get(profile)
            .await
            .map_err(internal)?
            .ok_or_else(|| ApiError::NoSuchProfile(profile.to_string()))?
            .profile
            .to_env())
    }

    async fn facts<'a>(&self, row: &'a ChangeRow, caller: &'a Caller) -> Result<Facts<'a>, ApiError> {
        let active = self.active_env(&row.profile).await?;
        let newest = self.store.newest_active(&row.profile).await.map_err(store_error)?;
        Ok(Facts {
            state: row.state,
            author: &row.author,
            actor: &caller.name,
            role: caller.role,
            stale: active != row.base_env,
            newest_active: newest == Some(row.id),
        })
    }

    async fn journal(&self, who: &str, kind: &str, row: &ChangeRow, reason: &str, extra: serde_json::Value) {
        let mut detail = serde_json::json!({
            "change": row.id,
            "author": row.author,
            "diff": env_diff(&row.base_env, &row.env),
        });
        if let (Some(d), serde_json::Value::Object(extra)) = (detail.as_object_mut(), extra) {
            d.extend(extra);
        }
        let detail = crate::journal::context(&self.control, &row.profile, detail).await;
        self.control
            .journal()
            .record(who, kind, &row.profile, reason, detail)
            .await;
    }

    /// Applies one step's state change, refusing if somebody else moved the change first.
    async fn transition(&self, row: &ChangeRow, to: ChangeState) -> Result<(), ApiError> {
        if self
            .store
            .transition(row.id, row.state, to)
            .await
            .map_err(store_error)?
        {
            Ok(())
        } else {
            Err(ApiError::Invalid(format!(
                "change #{} moved on while you looked at it; reload the page",
                row.id
            )))
        }
    }

    async fn save_gate(&self, id: i64, report: &GateReport) {
        if let Err(e) = self.store.set_gate(id, report).await {
            tracing::warn!(change = id, error = %e, "could not store the gate report");
        }
    }

    /// Runs the gate of an approved change (already moved to `Gating`) to its end.
    async fn run_gate(&self, row: ChangeRow, who: String) {
        let name = row.profile.clone();
        let mut report = GateReport::default();
        let candidate = match parse_profile(&name, &row.env) {
            Ok(p) => p,
            Err(e) => {
                report.steps.push(step("serve", Some(false), e.to_string()));
                return self.finish_gate(row, who, report, false).await;
            }
        };
        let was_running = matches!(self.control.running(&name), Some(Ok(_)));
        report.steps.push(step("serve", None, String::new()));
        self.save_gate(row.id, &report).await;
        if was_running {
            if let Err(e) = self.control.stop(&name).await {
                set_last(&mut report, Some(false), format!("stopping the active engine: {e}"));
                return self.finish_gate(row, who, report, was_running).await;
            }
        }
        let served = self.control.serve_as(&name, Some(candidate.clone()), |_| {}).await;
        let (kind, argv) = match (served, self.control.resolve_as(&name, Some(candidate.clone())).await) {
            (Ok(outcome), Ok((_, kind, _, argv))) => {
                let (key, pid) = match outcome {
                    crate::control::ServeOutcome::Started { pid } => ("serve-started", pid),
                    crate::control::ServeOutcome::AlreadyRunning { pid } => ("serve-running", pid),
                };
                set_outcome(
                    &mut report,
                    true,
                    key,
                    &[("pid", pid.to_string())],
                    format!("{outcome:?}"),
                );
                (kind, argv)
            }
            (Err(e), _) | (Ok(_), Err(e)) => {
                set_last(&mut report, Some(false), e.to_string());
                return self.finish_gate(row, who, report, was_running).await;
            }
        };
        let base = crate::control::base_url(&candidate.host, candidate.port.unwrap_or(kind.default_port()));
        let model = candidate.model_name().to_string();

        report.steps.push(step("health", None, String::new()));
        self.save_gate(row.id, &report).await;
        let h = crate::cli::health_check(&base, Some(model.clone())).await;
        let detail = format!(
            "/health {} in {:.0} ms; completion {} in {:.0} ms",
            h.health_code,
            h.health_ms,
            h.completion
                .as_ref()
                .map(|_| "ok".to_string())
                .unwrap_or_else(|e| e.clone()),
            h.completion_ms
        );
        if h.ok() {
            let args = [
                ("health_ms", format!("{:.0}", h.health_ms)),
                ("completion_ms", format!("{:.0}", h.completion_ms)),
            ];
            set_outcome(&mut report, true, "health-ok", &args, detail);
        } else {
            set_last(&mut report, Some(false), detail);
        }
        if !h.ok() {
            return self.finish_gate(row, who, report, was_running).await;
        }

        report.steps.push(step("smoke", None, String::new()));
        self.save_gate(row.id, &report).await;
        let installed = match self.control.data.engine(&candidate.engine) {
            Some(i) => self
                .control
                .installed_flags(&candidate.engine, i)
                .await
                .ok()
                .map(|f| f.flags),
            None => None,
        };
        let preflight = crate::smoke::preflight(kind, &argv, installed.as_ref());
        let smoke = crate::smoke::run(&base, &model, Some(preflight), |_| {}).await;
        let runs = crate::db::RunStore::new(self.control.store.pool());
        let smoke_passed = smoke.passed();
        report.smoke_run = runs.add_smoke(Some(&name), &smoke).await.ok();
        let failed_cases = smoke.failed_cases();
        if smoke_passed {
            let n = smoke.cases.iter().filter(|c| c.pass).count().to_string();
            let detail = format!("{n} cases passed");
            set_outcome(&mut report, true, "smoke-ok", &[("count", n)], detail);
        } else {
            let cases = failed_cases.join(", ");
            let detail = format!("failed: {cases}");
            set_outcome(&mut report, false, "smoke-failed", &[("cases", cases)], detail);
        }
        self.journal(
            &who,
            "gate-smoke",
            &row,
            "change gate",
            serde_json::json!({"passed": smoke_passed, "run": report.smoke_run}),
        )
        .await;
        if !smoke_passed {
            return self.finish_gate(row, who, report, was_running).await;
        }

        report.steps.push(step("bench", None, String::new()));
        self.save_gate(row.id, &report).await;
        let t = self.control.data.config.gate.clone();
        let params = BenchParams {
            url: base.clone(),
            model: model.clone(),
            endpoint: Endpoint::Completions,
            requests: t.requests.max(1),
            concurrency: Some(t.concurrency.max(1)),
            rate: f64::INFINITY,
            burstiness: 1.0,
            input_len: t.input_len,
            output_len: t.output_len.max(1),
            warmup: 0,
            seed: 0,
            goodput: None,
        };
        let bench_passed = match crate::bench::run(&params, |_| {}).await {
            Ok((summary, _)) => {
                let version = crate::cli::engine_version(&base).await;
                report.bench_run = runs
                    .add_bench(Some(&name), version.as_deref(), &params, &summary)
                    .await
                    .ok();
                report.checks = review::judge_bench(&summary, &t);
                let passed = report.checks.iter().all(|c| c.pass);
                let failing: Vec<&GateCheck> = report.checks.iter().filter(|c| !c.pass).collect();
                if passed {
                    let args = [
                        ("requests", summary.completed.to_string()),
                        ("ttft", format!("{:.0}", summary.ttft_ms.p95)),
                        ("tpot", format!("{:.1}", summary.tpot_ms.p95)),
                    ];
                    let detail = format!(
                        "{} requests, TTFT p95 {} ms, TPOT p95 {} ms",
                        args[0].1, args[1].1, args[2].1
                    );
                    set_outcome(&mut report, true, "bench-ok", &args, detail);
                } else {
                    let names = failing.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
                    let detail = failing
                        .iter()
                        .map(|c| format!("{} {} (limit {})", c.name, c.value, c.limit))
                        .collect::<Vec<_>>()
                        .join("; ");
                    set_outcome(&mut report, false, "bench-failed", &[("checks", names)], detail);
                }
                passed
            }
            Err(e) => {
                set_last(&mut report, Some(false), e.to_string());
                false
            }
        };
        self.journal(
            &who,
            "gate-bench",
            &row,
            "change gate",
            serde_json::json!({"passed": bench_passed, "run": report.bench_run, "checks": report.checks}),
        )
        .await;
        if !bench_passed {
            return self.finish_gate(row, who, report, was_running).await;
        }
        // Every check held: the candidate becomes the profile.
        if let Err(e) = self.control.store.upsert(&candidate).await {
            report.steps.push(step("activate", Some(false), e.to_string()));
            return self.finish_gate(row, who, report, was_running).await;
        }
        report.passed = Some(true);
        self.save_gate(row.id, &report).await;
        let _ = self
            .store
            .transition(row.id, ChangeState::Gating, ChangeState::Active)
            .await;
        let _ = self.store.add_event(row.id, &who, "gate-passed", "").await;
        self.journal(
            &who,
            "change-activated",
            &row,
            &row.reason,
            serde_json::json!({"gate": "passed", "smoke_run": report.smoke_run, "bench_run": report.bench_run}),
        )
        .await;
        if !was_running {
            // The gate leaves the engine as it found it.
            let _ = self.control.stop(&name).await;
        }
    }

    /// A failed gate: stop the candidate, serve the previous profile if it was running.
    async fn finish_gate(&self, row: ChangeRow, who: String, mut report: GateReport, was_running: bool) {
        let name = row.profile.clone();
        report.passed = Some(false);
        let _ = self.control.stop(&name).await;
        if was_running {
            let restored = self.control.serve(&name, |_| {}).await;
            report.steps.push(step("restore", None, String::new()));
            match restored {
                Ok(o) => {
                    let pid = match o {
                        crate::control::ServeOutcome::Started { pid }
                        | crate::control::ServeOutcome::AlreadyRunning { pid } => pid,
                    };
                    let detail = format!("previous profile served again: {o:?}");
                    set_outcome(&mut report, true, "restore-ok", &[("pid", pid.to_string())], detail);
                }
                Err(e) => set_last(
                    &mut report,
                    Some(false),
                    format!("serving the previous profile failed: {e}"),
                ),
            }
        }
        self.save_gate(row.id, &report).await;
        let _ = self
            .store
            .transition(row.id, ChangeState::Gating, ChangeState::GateFailed)
            .await;
        let why = report
            .steps
            .iter()
            .find(|s| s.pass == Some(false))
            .map(|s| format!("{}: {}", s.name, s.detail))
            .unwrap_or_default();
        let _ = self.store.add_event(row.id, &who, "gate-failed", &why).await;
        self.journal(
            &who,
            "gate-failed",
            &row,
            &why,
            serde_json::json!({"steps": report.steps, "checks": report.checks}),
        )
        .await;
    }
}

fn step(name: &str, pass: Option<bool>, detail: String) -> GateStep {
    GateStep {
        name: name.into(),
        pass,
        detail,
        key: None,
        args: Vec::new(),
    }
}

/// Ends the running step with an outcome the UI words itself (`change-gate-{key}`).
fn set_outcome(report: &mut GateReport, pass: bool, key: &str, args: &[(&str, String)], detail: String) {
    set_last(report, Some(pass), detail);
    if let Some(s) = report.steps.last_mut() {
        s.key = Some(format!("change-gate-{key}"));
        s.args = args.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    }
}

fn set_last(report: &mut GateReport, pass: Option<bool>, detail: String) {
    if let Some(s) = report.steps.last_mut() {
        s.pass = pass;
        s.detail = detail;
    }
}

impl ChangeService for Changes {
    fn list(&self, profile: Option<String>) -> BoxFut<'_, Result<Vec<app::api::ChangeSummary>, ApiError>> {
        Box::pin(async move {
            Ok(self
                .store
                .list(profile.as_deref())
                .await
                .map_err(store_error)?
                .iter()
                .map(ChangeRow::summary)
                .collect())
        })
    }

    fn get(&self, caller: Caller, id: i64) -> BoxFut<'_, Result<ChangeView, ApiError>> {
        Box::pin(async move {
            let row = self.store.get(id).await.map_err(store_error)?;
            let facts = self.facts(&row, &caller).await?;
            Ok(ChangeView {
                summary: row.summary(),
                diff: env_diff(&row.base_env, &row.env),
                stale: facts.stale && row.state.open(),
                allowed: review::allowed(&facts),
                events: self.store.events(id).await.map_err(store_error)?,
                gate: row.gate.clone(),
                thresholds: self.control.data.config.gate.clone(),
                base_env: row.base_env,
                env: row.env,
            })
        })
    }

    fn propose(
        &self,
        caller: Caller,
        id: Option<i64>,
        profile: String,
        env_text: String,
        reason: String,
        submit: bool,
    ) -> BoxFut<'_, Result<i64, ApiError>> {
        Box::pin(async move {
            let reason = reason.trim().to_string();
            if submit && reason.is_empty() {
                return Err(ApiError::Invalid(
                    "reason: a change goes to review with a reason (it goes into the journal)".into(),
                ));
            }
            let p = parse_profile(&profile, &env_text)?;
            if self.control.data.engine(&p.engine).is_none() {
                return Err(ApiError::NoSuchEngine {
                    profile,
                    engine: p.engine,
                });
            }
            let env = p.to_env();
            let base = self.active_env(&profile).await?;
            if env == base {
                return Err(ApiError::Invalid(
                    "the candidate is the same as the active profile: nothing to review".into(),
                ));
            }
            let state = if submit {
                ChangeState::Submitted
            } else {
                ChangeState::Draft
            };
            let id = match id {
                None => {
                    if !caller.role.allows(app::domain::auth::Role::Operator) {
                        return Err(ApiError::Forbidden("proposing a change needs the operator role".into()));
                    }
                    self.store
                        .insert(&profile, &caller.name, state, &reason, &base, &env)
                        .await
                        .map_err(store_error)?
                }
                Some(id) => {
                    let row = self.store.get(id).await.map_err(store_error)?;
                    if row.profile != profile {
                        return Err(ApiError::Invalid(format!(
                            "change #{id} is about {}, not {profile}",
                            row.profile
                        )));
                    }
                    let facts = self.facts(&row, &caller).await?;
                    review::check(ChangeAction::Edit, &facts).map_err(refused)?;
                    // Reworked against today's active profile: no longer stale.
                    self.store
                        .update_content(id, state, &reason, &base, &env)
                        .await
                        .map_err(store_error)?;
                    id
                }
            };
            let kind = if submit { "submitted" } else { "drafted" };
            let _ = self.store.add_event(id, &caller.name, kind, &reason).await;
            if submit {
                let row = self.store.get(id).await.map_err(store_error)?;
                self.journal(&caller.name, "change-submitted", &row, &reason, serde_json::json!({}))
                    .await;
            }
            Ok(id)
        })
    }

    fn review(&self, caller: Caller, id: i64, approve: bool, comment: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let row = self.store.get(id).await.map_err(store_error)?;
            let action = if approve {
                ChangeAction::Approve
            } else {
                ChangeAction::RequestChanges
            };
            let comment = comment.trim().to_string();
            if !approve && comment.is_empty() {
                return Err(ApiError::Invalid(
                    "comment: say what should change before sending it back".into(),
                ));
            }
            let facts = self.facts(&row, &caller).await?;
            let to = review::check(action, &facts).map_err(refused)?;
            self.transition(&row, to).await?;
            let kind = if approve { "approved" } else { "changes-requested" };
            let _ = self.store.add_event(id, &caller.name, kind, &comment).await;
            self.journal(
                &caller.name,
                if approve {
                    "change-approved"
                } else {
                    "change-changes-requested"
                },
                &row,
                if comment.is_empty() { &row.reason } else { &comment },
                serde_json::json!({}),
            )
            .await;
            Ok(())
        })
    }

    fn withdraw(&self, caller: Caller, id: i64, comment: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let row = self.store.get(id).await.map_err(store_error)?;
            let facts = self.facts(&row, &caller).await?;
            let to = review::check(ChangeAction::Withdraw, &facts).map_err(refused)?;
            self.transition(&row, to).await?;
            let _ = self
                .store
                .add_event(id, &caller.name, "withdrawn", comment.trim())
                .await;
            self.journal(
                &caller.name,
                "change-withdrawn",
                &row,
                comment.trim(),
                serde_json::json!({}),
            )
            .await;
            Ok(())
        })
    }

    fn comment(&self, caller: Caller, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let text = text.trim();
            if text.is_empty() {
                return Err(ApiError::Invalid("comment: empty".into()));
            }
            if text.chars().count() > review::MAX_COMMENT {
                return Err(ApiError::Invalid(format!(
                    "comment: at most {} characters",
                    review::MAX_COMMENT
                )));
            }
            if !caller.role.allows(app::domain::auth::Role::Operator) {
                return Err(ApiError::Forbidden("commenting needs the operator role".into()));
            }
            self.store.get(id).await.map_err(store_error)?;
            self.store
                .add_event(id, &caller.name, "commented", text)
                .await
                .map_err(store_error)
        })
    }

    fn start_gate(&self, caller: Caller, id: i64) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let row = self.store.get(id).await.map_err(store_error)?;
            let facts = self.facts(&row, &caller).await?;
            let to = review::check(ChangeAction::StartGate, &facts).map_err(refused)?;
            if let Some(other) = self.store.gating(&row.profile).await.map_err(store_error)? {
                return Err(ApiError::Invalid(format!(
                    "change #{other} is in its gate on {} now; wait for it",
                    row.profile
                )));
            }
            self.transition(&row, to).await?;
            let _ = self.store.add_event(id, &caller.name, "gate-started", "").await;
            self.save_gate(id, &GateReport::default()).await;
            let this = self.clone();
            let who = caller.name.clone();
            tokio::spawn(async move { this.run_gate(row, who).await });
            Ok(())
        })
    }

    fn rollback(&self, caller: Caller, id: i64, reason: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let reason = reason.trim().to_string();
            if reason.is_empty() {
                return Err(ApiError::Invalid(
                    "reason: a rollback goes into the journal with its reason".into(),
                ));
            }
            let row = self.store.get(id).await.map_err(store_error)?;
            let facts = self.facts(&row, &caller).await?;
            let to = review::check(ChangeAction::Rollback, &facts).map_err(refused)?;
            let previous = parse_profile(&row.profile, &row.base_env)?;
            self.transition(&row, to).await?;
            self.control.store.upsert(&previous).await.map_err(internal)?;
            let _ = self.store.add_event(id, &caller.name, "rolled-back", &reason).await;
            let running = matches!(self.control.running(&row.profile), Some(Ok(_)));
            self.journal(
                &caller.name,
                "change-rolled-back",
                &row,
                &reason,
                serde_json::json!({"restart": running, "diff": env_diff(&row.env, &row.base_env)}),
            )
            .await;
            if running {
                // The engine runs the rolled-back profile: restart it on the previous one.
                let control = self.control.clone();
                let name = row.profile.clone();
                let who = caller.name.clone();
                tokio::spawn(async move {
                    let result = control.restart(&name).await.map(|o| format!("{o:?}"));
                    let reason = format!("rollback of change #{id}");
                    crate::journal::record_action(&control, &who, "restart", &name, &reason, result).await;
                });
            }
            Ok(())
        })
    }
}
