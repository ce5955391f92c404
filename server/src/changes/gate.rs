//! The gate of an approved change: the candidate is served in the profile's own place (same
//! state dir and port: on one GPU there is no room for two), then health and a one-token
//! completion, the candidate's metric names against those the console reads, smoke-toolcall
//! with the flag preflight, and a bench against the `[gate]` thresholds. The stored profile is
//! replaced only once all of that passed; on failure the candidate is stopped and the previous
//! profile served again if it was running.

use super::store::ChangeRow;
use super::{parse_profile, Changes};
use crate::control::GateHold;
use crate::runs::{Runs, Target};
use app::domain::pins::BenchPin;
use app::domain::profile::Profile;
use app::domain::review::{self, ChangeState, GateCheck, GateReport, GateStep};

impl Changes {
    pub(super) async fn save_gate(&self, id: i64, report: &GateReport) {
        if let Err(e) = self.store.set_gate(id, report).await {
            tracing::warn!(change = id, error = %e, "could not store the gate report");
        }
    }

    /// Runs the gate of an approved change (already moved to `Gating`) to its end: each step
    /// of [`Step::ALL`] in order, shown as running before it starts (the change page follows
    /// the gate live); the first that fails ends the gate, and all passing activates it.
    pub(super) async fn run_gate(&self, row: ChangeRow, who: String, hold: GateHold) {
        let candidate = match parse_profile(&row.profile, &row.env) {
            Ok(p) => p,
            Err(e) => {
                let mut report = GateReport::default();
                report.steps.push(step("serve", Some(false), e.to_string()));
                return self.finish_gate(&hold, row, who, report, None).await;
            }
        };
        let mut gate = Gate {
            changes: self,
            hold: &hold,
            row: &row,
            who: &who,
            candidate,
            report: GateReport::default(),
            was_running: None,
            target: None,
            runs: Runs::new(self.ctx.clone()),
            pinned_bench: None,
        };
        for s in Step::ALL {
            gate.report.steps.push(step(s.name(), None, String::new()));
            self.save_gate(row.id, &gate.report).await;
            if gate.run(s).await == Next::Stop {
                let Gate {
                    report, was_running, ..
                } = gate;
                return self.finish_gate(&hold, row, who, report, was_running).await;
            }
        }
        let Gate {
            report,
            was_running,
            candidate,
            pinned_bench,
            ..
        } = gate;
        self.activate(
            &hold,
            row,
            who,
            report,
            was_running == Some(true),
            candidate,
            pinned_bench,
        )
        .await;
    }

    /// Every check held. Right before activation the change must still be what was approved
    /// and gated, and not stale; profile and state are then written in one transaction.
    #[expect(
        clippy::too_many_arguments,
        reason = "what the gate hands over: its change, report and candidate"
    )]
    async fn activate(
        &self,
        hold: &GateHold,
        row: ChangeRow,
        who: String,
        mut report: GateReport,
        was_running: bool,
        candidate: Profile,
        pinned_bench: Option<BenchPin>,
    ) {
        let name = row.profile.clone();
        let refusal = match self.store.activate(row.id, &row.env, &row.base_env, &candidate).await {
            Ok(super::store::Activation::Done) => None,
            Ok(super::store::Activation::Moved) => Some("the change moved on during its gate".to_string()),
            Ok(super::store::Activation::Stale) => {
                Some("the active profile changed during the gate: the change is stale".to_string())
            }
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = refusal {
            report.steps.push(step("activate", Some(false), why));
            return self.finish_gate(hold, row, who, report, Some(was_running)).await;
        }
        report.passed = Some(true);
        self.save_gate(row.id, &report).await;
        // The set the candidate passed on, with its bench: what "restore the pinned versions"
        // restores to.
        if let Err(e) = self
            .ctx
            .control
            .record_known_good(&name, Some(&candidate), pinned_bench)
            .await
        {
            tracing::warn!(profile = %name, error = %e, "the known-good set of the gate is not recorded");
        }
        self.event(row.id, &who, "gate-passed", "").await;
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
            if let Err(e) = self.ctx.control.stop_held(hold).await {
                tracing::error!(profile = %name, error = %e, "the gate's engine, not running before it, is not stopped");
            }
        }
    }

    /// The gate's metric step; false when a core signal (running, waiting, KV usage,
    /// generated tokens) has no source in the candidate's scrape.
    async fn check_metrics(
        &self,
        row: &ChangeRow,
        candidate: &app::domain::profile::Profile,
        target: &Target,
        report: &mut GateReport,
    ) -> bool {
        let Some(kind) = self.ctx.data.engine(&candidate.engine).map(|i| i.kind) else {
            set_outcome(
                report,
                true,
                "metrics-unknown",
                &[("reason", "no installation".into())],
                String::new(),
            );
            return true;
        };
        let samples = match crate::engine::Engine::at(&target.base).scrape_samples().await {
            Ok((samples, _)) => samples,
            Err(e) => {
                // The monitor reports a scrape that keeps failing; one failure does not judge
                // the release.
                set_outcome(
                    report,
                    true,
                    "metrics-unknown",
                    &[("reason", e.to_string())],
                    e.to_string(),
                );
                return true;
            }
        };
        let missing = app::domain::upgrade::missing_signals(kind, &samples);
        match self.ctx.control.install_version(&candidate.engine).await {
            Ok(version) => self
                .ctx
                .control
                .record_metrics_check(&crate::control::upgrade::MetricsCheck {
                    install: candidate.engine.clone(),
                    version,
                    at_ms: self.ctx.clock.now_ms(),
                    change: row.id,
                    missing: missing.clone(),
                }),
            Err(e) => tracing::warn!(error = %e, "the metric check is not kept: no version"),
        }
        let list = |core: bool| {
            missing
                .iter()
                .filter(|m| m.core == core)
                .map(|m| format!("{} ({})", m.signal, m.names.join(" or ")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (core, other) = (list(true), list(false));
        let detail = format!("missing core: [{core}]; missing other: [{other}]");
        if missing.is_empty() {
            set_outcome(report, true, "metrics-ok", &[], "every signal served".into());
            true
        } else if core.is_empty() {
            set_outcome(report, true, "metrics-warned", &[("signals", other)], detail);
            true
        } else {
            set_outcome(report, false, "metrics-failed", &[("signals", core)], detail);
            false
        }
    }

    /// A failed gate: stop the candidate, serve the previous profile if it was running.
    /// `was_running` is `None` when the gate failed before it touched the engine (the
    /// candidate did not parse, or cannot fit): the active engine is left as it is.
    pub(super) async fn finish_gate(
        &self,
        hold: &GateHold,
        row: ChangeRow,
        who: String,
        mut report: GateReport,
        was_running: Option<bool>,
    ) {
        report.passed = Some(false);
        if was_running.is_some() {
            if let Err(e) = self.ctx.control.stop_held(hold).await {
                tracing::error!(profile = %row.profile, error = %e, "the failed candidate is not stopped");
            }
        }
        if was_running == Some(true) {
            let restored = self.ctx.control.serve_held(hold, None, |_| {}).await;
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
        match self
            .store
            .transition(row.id, ChangeState::Gating, ChangeState::GateFailed)
            .await
        {
            Ok(true) => {}
            Ok(false) => tracing::warn!(change = row.id, "the change left gating while its gate failed"),
            Err(e) => tracing::error!(change = row.id, error = %e, "the failed gate's state is not written"),
        }
        let why = report
            .steps
            .iter()
            .find(|s| s.pass == Some(false))
            .map(|s| format!("{}: {}", s.name, s.detail))
            .unwrap_or_default();
        self.event(row.id, &who, "gate-failed", &why).await;
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

/// The gate's steps, in order; each is one method of [`Gate`].
#[derive(Clone, Copy)]
enum Step {
    /// The model directory against the air-gap rules, hashed in full (the start that follows
    /// then answers from the hash cache). Its errors stop the gate where the host requires
    /// verified models; elsewhere they are shown and the gate goes on.
    Model,
    /// The calculator: a candidate that cannot fit is refused before the active engine is
    /// stopped for it. Without a prediction (no driver, no model files) the start decides.
    Vram,
    /// The active engine stopped, the candidate served in its place.
    Serve,
    /// `/health` and a one-token completion.
    Health,
    /// The candidate's own /metrics against the signals the console reads: after an upgrade a
    /// renamed family would leave the fleet page and the triage blind.
    Metrics,
    /// smoke-toolcall with the flag preflight.
    Smoke,
    /// A closed-loop bench against the `[gate]` thresholds.
    Bench,
}

impl Step {
    const ALL: [Step; 7] = [
        Step::Model,
        Step::Vram,
        Step::Serve,
        Step::Health,
        Step::Metrics,
        Step::Smoke,
        Step::Bench,
    ];

    /// The step's name in the report (its row's locale keys are `change-gate-NAME-…`).
    fn name(self) -> &'static str {
        match self {
            Step::Model => "model",
            Step::Vram => "vram",
            Step::Serve => "serve",
            Step::Health => "health",
            Step::Metrics => "metrics",
            Step::Smoke => "smoke",
            Step::Bench => "bench",
        }
    }
}

/// Whether the gate goes on after a step; the step's outcome is in the report either way.
#[derive(PartialEq, Eq)]
enum Next {
    Go,
    Stop,
}

/// One gate in progress: the change, its candidate, and what the steps found so far.
struct Gate<'a> {
    changes: &'a Changes,
    hold: &'a GateHold,
    row: &'a ChangeRow,
    who: &'a str,
    candidate: Profile,
    report: GateReport,
    /// Whether the active engine ran before the gate: known from the serve step on (a gate
    /// that stops earlier has touched nothing to restore).
    was_running: Option<bool>,
    /// The served candidate, from the serve step on.
    target: Option<Target>,
    runs: Runs,
    /// The bench the known-good set records when the gate passes.
    pinned_bench: Option<BenchPin>,
}

impl Gate<'_> {
    async fn run(&mut self, s: Step) -> Next {
        match s {
            Step::Model => self.model().await,
            Step::Vram => self.vram().await,
            Step::Serve => self.serve().await,
            Step::Health => self.health().await,
            Step::Metrics => self.metrics().await,
            Step::Smoke => self.smoke().await,
            Step::Bench => self.bench().await,
        }
    }

    async fn model(&mut self) -> Next {
        let checked = match crate::config::confined(
            &self.changes.ctx.data.models_root(),
            std::path::Path::new(&self.candidate.model),
        ) {
            Ok(dir) => {
                let simulated = self
                    .changes
                    .ctx
                    .data
                    .engine(&self.candidate.engine)
                    .is_some_and(|i| i.simulator);
                self.changes
                    .ctx
                    .control
                    .check_model_with(&dir, crate::models::HashMode::Full, simulated)
                    .await
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        let mode = self.changes.ctx.data.config.verify;
        match checked {
            Ok(r) => {
                let refusal = crate::models::refusal(mode, &r);
                let warnings = r
                    .findings
                    .iter()
                    .filter(|f| f.level == app::domain::modelcheck::Level::Warning)
                    .count();
                let args = [
                    ("files", r.files.to_string()),
                    ("warnings", warnings.to_string()),
                    ("manifest", if r.manifest { "yes" } else { "no" }.to_string()),
                    ("error", r.first_error().or_else(|| refusal.clone()).unwrap_or_default()),
                ];
                let detail = format!(
                    "{} files, manifest {}, {} findings",
                    r.files,
                    r.manifest,
                    r.findings.len()
                );
                match refusal {
                    Some(_) => {
                        set_outcome(&mut self.report, false, "model-failed", &args, detail);
                        return Next::Stop;
                    }
                    None if r.ok() => set_outcome(&mut self.report, true, "model-ok", &args, detail),
                    None => set_outcome(&mut self.report, true, "model-warned", &args, detail),
                }
            }
            Err(e) => {
                let args = [("error", e.clone())];
                if mode == crate::config::VerifyMode::Require {
                    set_outcome(&mut self.report, false, "model-failed", &args, e);
                    return Next::Stop;
                }
                set_outcome(&mut self.report, true, "model-warned", &args, e);
            }
        }
        Next::Go
    }

    async fn vram(&mut self) -> Next {
        match crate::vram::predict(&self.changes.ctx, &self.row.profile, Some(self.candidate.clone())).await {
            Ok(p) => {
                let r = &p.report;
                let detail = format!(
                    "{}: {} KV tokens, {:.2}x at {} tokens ({})",
                    r.verdict.id(),
                    r.kv_tokens,
                    r.max_concurrency,
                    p.ctx,
                    r.path
                );
                let args = [
                    ("verdict", r.verdict.id().to_string()),
                    ("tokens", r.kv_tokens.to_string()),
                    ("concurrency", format!("{:.2}", r.max_concurrency)),
                    ("ctx", p.ctx.to_string()),
                    (
                        "calibrated",
                        if p.calibrated_from_ms.is_some() { "yes" } else { "no" }.to_string(),
                    ),
                ];
                // Marginal means the range reaches "fits": only a sure miss stops the gate.
                let refused = !r.verdict.fits() && !r.marginal;
                let key = if !r.verdict.fits() && r.marginal {
                    "vram-marginal".to_string()
                } else {
                    format!("vram-{}", r.verdict.id())
                };
                set_outcome(&mut self.report, !refused, &key, &args, detail);
                if refused {
                    return Next::Stop;
                }
            }
            Err(e) => {
                let detail = format!("no prediction: {e}");
                set_outcome(
                    &mut self.report,
                    true,
                    "vram-unknown",
                    &[("reason", e.to_string())],
                    detail,
                );
            }
        }
        Next::Go
    }

    async fn serve(&mut self) -> Next {
        let was_running = self.changes.ctx.control.is_running(&self.row.profile);
        self.was_running = Some(was_running);
        if was_running {
            if let Err(e) = self.changes.ctx.control.stop_held(self.hold).await {
                set_last(
                    &mut self.report,
                    Some(false),
                    format!("stopping the active engine: {e}"),
                );
                return Next::Stop;
            }
        }
        let served = self
            .changes
            .ctx
            .control
            .serve_held(self.hold, Some(self.candidate.clone()), |_| {})
            .await;
        let resolved = match (
            served,
            self.changes
                .ctx
                .control
                .resolve_as(&self.row.profile, Some(self.candidate.clone()))
                .await,
        ) {
            (Ok(outcome), Ok(resolved)) => {
                let (key, pid) = match outcome {
                    crate::control::ServeOutcome::Started { pid } => ("serve-started", pid),
                    crate::control::ServeOutcome::AlreadyRunning { pid } => ("serve-running", pid),
                };
                set_outcome(
                    &mut self.report,
                    true,
                    key,
                    &[("pid", pid.to_string())],
                    format!("{outcome:?}"),
                );
                resolved
            }
            (Err(e), _) | (Ok(_), Err(e)) => {
                set_last(&mut self.report, Some(false), e.to_string());
                return Next::Stop;
            }
        };
        self.target = Some(Target::profile(resolved));
        Next::Go
    }

    /// The served candidate; a step that asks before the serve step passed fails, saying so.
    fn served(&mut self) -> Option<Target> {
        if self.target.is_none() {
            set_last(&mut self.report, Some(false), "the candidate is not served".into());
        }
        self.target.clone()
    }

    async fn health(&mut self) -> Next {
        let Some(target) = self.served() else {
            return Next::Stop;
        };
        let h = crate::engine::Engine::at(&target.base)
            .health_check(Some(target.model.clone()))
            .await;
        let detail = format!(
            "/health {} in {:.0} ms; completion {} in {:.0} ms",
            h.health_code,
            h.health_ms,
            h.completion
                .as_ref()
                .map_or_else(|e| e.to_string(), |_| "ok".to_string()),
            h.completion_ms
        );
        if h.ok() {
            let args = [
                ("health_ms", format!("{:.0}", h.health_ms)),
                ("completion_ms", format!("{:.0}", h.completion_ms)),
            ];
            set_outcome(&mut self.report, true, "health-ok", &args, detail);
        } else {
            set_last(&mut self.report, Some(false), detail);
            return Next::Stop;
        }

        Next::Go
    }

    async fn metrics(&mut self) -> Next {
        let Some(target) = self.served() else {
            return Next::Stop;
        };
        if self
            .changes
            .check_metrics(self.row, &self.candidate, &target, &mut self.report)
            .await
        {
            Next::Go
        } else {
            Next::Stop
        }
    }

    async fn smoke(&mut self) -> Next {
        let Some(target) = self.served() else {
            return Next::Stop;
        };
        let smoke = self.runs.smoke(&target, |_| {}).await;
        let smoke_passed = smoke.report.passed();
        self.report.smoke_run = smoke.id.ok();
        if smoke_passed {
            let n = smoke.report.cases.iter().filter(|c| c.pass).count().to_string();
            let detail = format!("{n} cases passed");
            set_outcome(&mut self.report, true, "smoke-ok", &[("count", n)], detail);
        } else {
            let cases = smoke.report.failed_cases().join(", ");
            let detail = format!("failed: {cases}");
            set_outcome(&mut self.report, false, "smoke-failed", &[("cases", cases)], detail);
        }
        self.changes
            .journal(
                self.who,
                "gate-smoke",
                self.row,
                "change gate",
                serde_json::json!({"passed": smoke_passed, "run": self.report.smoke_run}),
            )
            .await;
        if !smoke_passed {
            return Next::Stop;
        }

        Next::Go
    }

    async fn bench(&mut self) -> Next {
        let Some(target) = self.served() else {
            return Next::Stop;
        };
        let t = self.changes.ctx.data.config.gate.clone();
        let params = crate::runs::closed_loop(
            &target,
            t.requests.max(1),
            t.concurrency.max(1),
            t.input_len,
            t.output_len.max(1),
        );
        let bench_passed = match self.runs.bench(&target, &params, |_| {}).await {
            Ok(run) => {
                let summary = run.summary;
                self.report.bench_run = run.id.ok();
                self.pinned_bench = self.report.bench_run.map(|id| app::domain::pins::BenchPin {
                    run: id,
                    ttft_p95_ms: summary.ttft_ms.p95,
                    tpot_p95_ms: summary.tpot_ms.p95,
                    output_tokens_per_s: summary.output_throughput,
                });
                self.report.checks = review::judge_bench(&summary, &t);
                let passed = self.report.checks.iter().all(|c| c.pass);
                let failing: Vec<&GateCheck> = self.report.checks.iter().filter(|c| !c.pass).collect();
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
                    set_outcome(&mut self.report, true, "bench-ok", &args, detail);
                } else {
                    let names = failing.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
                    let detail = failing
                        .iter()
                        .map(|c| format!("{} {} (limit {})", c.name, c.value, c.limit))
                        .collect::<Vec<_>>()
                        .join("; ");
                    set_outcome(&mut self.report, false, "bench-failed", &[("checks", names)], detail);
                }
                passed
            }
            Err(e) => {
                set_last(&mut self.report, Some(false), e.to_string());
                false
            }
        };
        self.changes
            .journal(
                self.who,
                "gate-bench",
                self.row,
                "change gate",
                serde_json::json!({"passed": bench_passed, "run": self.report.bench_run, "checks": self.report.checks}),
            )
            .await;
        if !bench_passed {
            return Next::Stop;
        }
        Next::Go
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
