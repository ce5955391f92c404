//! The console's implementation of the UI's service seam, over engine control and SQLite.

use crate::api_error::internal;
use crate::control::{logs, ControlError, EngineControl};
use app::api::service::{BoxFut, ConsoleService};
use app::api::{
    ApiError, BenchRequest, BenchRun, EngineAction, EngineDetail, ProfileSummary, ProfileView, RunKind, RunStatus,
    SmokeRun,
};
use app::domain::bench::BenchProgress;
use app::domain::engine::EngineKind;
use app::domain::engine::EngineStatus;
use app::domain::flagmap::{render_argv, untranslatable_speculative_keys};
use tokio::sync::watch;

pub struct ConsoleServiceImpl {
    control: EngineControl,
    fleet: watch::Receiver<Vec<EngineStatus>>,
    gpu: watch::Receiver<app::domain::gpu::GpuState>,
    history: crate::monitor::history::History,
    runs: super::RunRegistry,
    incidents: crate::incidents::Incidents,
    auth: super::auth::AuthState,
    changes: crate::review::Changes,
    verifications: crate::models::jobs::Verifications,
}

impl ConsoleServiceImpl {
    pub fn new(
        control: EngineControl,
        feeds: crate::monitor::Feeds,
        runs: super::RunRegistry,
        incidents: crate::incidents::Incidents,
        auth: super::auth::AuthState,
        changes: crate::review::Changes,
    ) -> Self {
        Self {
            auth,
            changes,
            control,
            fleet: feeds.fleet,
            gpu: feeds.gpu,
            history: feeds.history,
            runs,
            incidents,
            verifications: Default::default(),
        }
    }

    /// A stored profile, or the error the UI explains.
    async fn stored(&self, name: &str) -> Result<crate::control::profiles::StoredProfile, ApiError> {
        self.control
            .store
            .get(name)
            .await
            .map_err(internal)?
            .ok_or_else(|| ApiError::NoSuchProfile(name.to_string()))
    }

    fn run_store(&self) -> crate::runs::store::RunStore {
        crate::runs::store::RunStore::new(self.control.store.pool())
    }

    fn set_run(runs: &super::RunRegistry, profile: &str, f: impl FnOnce(&mut RunStatus)) {
        if let Ok(mut g) = runs.lock() {
            if let Some(status) = g.get_mut(profile) {
                f(status);
            }
        }
    }
}

fn bench_run(row: crate::runs::store::BenchRow) -> Option<BenchRun> {
    Some(BenchRun {
        id: row.id,
        profile: row.profile,
        model: row.model,
        engine_version: row.engine_version,
        created_at: row.created_at,
        params: serde_json::from_value(row.params).ok()?,
        summary: serde_json::from_value(row.summary).ok()?,
    })
}

use crate::review::parse_profile as edited_profile;

/// Maps incident errors to what the UI can explain.
fn incident_error(e: crate::incidents::IncidentServiceError) -> ApiError {
    use crate::incidents::{IncidentError, IncidentServiceError as E};
    match e {
        E::Control(c) => api_error(c),
        E::Store(IncidentError::NotFound(id)) => ApiError::Invalid(format!("no incident #{id}")),
        E::Store(other) => internal(other),
        other => ApiError::Invalid(other.to_string()),
    }
}

/// Maps engine-control errors to what the UI can explain.
pub fn api_error(e: ControlError) -> ApiError {
    match e {
        ControlError::NoSuchProfile(p) => ApiError::NoSuchProfile(p),
        ControlError::NoSuchEngine { profile, engine, .. } => ApiError::NoSuchEngine { profile, engine },
        ControlError::PortBusy { port, owner } => ApiError::PortBusy { port, owner },
        other @ (ControlError::ModelPath { .. }
        | ControlError::Busy(_)
        | ControlError::Gated(_)
        | ControlError::GateBlocked(_)
        | ControlError::Survivors { .. }
        | ControlError::Refused { .. }) => ApiError::Invalid(other.to_string()),
        other => internal(other),
    }
}

impl ConsoleService for ConsoleServiceImpl {
    fn accounts(&self) -> &dyn app::api::AccountService {
        &self.auth
    }

    fn changes(&self) -> &dyn app::api::ChangeService {
        &self.changes
    }

    fn engines(&self) -> BoxFut<'_, Result<Vec<EngineStatus>, ApiError>> {
        Box::pin(async move { Ok(self.fleet.borrow().clone()) })
    }

    fn engine(&self, profile: String) -> BoxFut<'_, Result<EngineDetail, ApiError>> {
        Box::pin(async move {
            let crate::control::Resolved { profile: p, argv, .. } =
                self.control.resolve(&profile).await.map_err(api_error)?;
            // The collector's row has the live signals; a profile it has not seen yet gets a
            // direct status.
            let known = self
                .fleet
                .borrow()
                .iter()
                .find(|e| e.node.is_empty() && e.profile == profile)
                .cloned();
            let status = match known {
                Some(s) => s,
                None => self.control.status(&p).await,
            };
            let log_path = self.control.log_path(&profile);
            let tail_path = log_path.clone();
            let log_tail = tokio::task::spawn_blocking(move || logs::tail(&tail_path, 200).unwrap_or_default())
                .await
                .unwrap_or_default();
            let run = self.runs.lock().ok().and_then(|g| g.get(&profile).cloned());
            Ok(EngineDetail {
                status,
                argv,
                log_tail,
                log_path: log_path.display().to_string(),
                run,
                gpu: self.gpu.borrow().clone(),
            })
        })
    }

    fn act(&self, who: String, profile: String, action: EngineAction) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let crate::control::Resolved { profile: p, kind, .. } =
                self.control.resolve(&profile).await.map_err(api_error)?;
            if self.control.gate_held(&profile) {
                return Err(api_error(ControlError::Gated(profile)));
            }
            let running = self.control.is_running(&profile);
            if action == EngineAction::Serve && !running {
                let port = p.port.unwrap_or(kind.default_port());
                if let Some(owner) = self.control.port_owner(&p.host, port) {
                    return Err(ApiError::PortBusy { port, owner });
                }
            }
            // A start the console knows would fail is refused before anything is stopped or
            // launched (the CLI's `--no-preflight` is the override).
            let starts = matches!(action, EngineAction::Restart) || (action == EngineAction::Serve && !running);
            if starts {
                let found = crate::preflight::check(&self.control, &profile).await;
                if !found.refusals.is_empty() {
                    let issues = found
                        .refusals
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join("; ");
                    let refused = ControlError::Refused {
                        profile: profile.clone(),
                        issues: format!("the preflight knows this start would fail: {issues}"),
                    };
                    let message = refused.to_string();
                    crate::control::actions::record_action(
                        &self.control,
                        &who,
                        action.as_str(),
                        &profile,
                        "from the engine page",
                        Err(refused),
                    )
                    .await;
                    return Err(ApiError::Invalid(message));
                }
            }
            let control = self.control.clone();
            tracing::info!(profile = %profile, action = action.as_str(), "engine action requested from the console");
            tokio::spawn(async move {
                let result = match action {
                    EngineAction::Serve => {
                        let r = control.serve(&profile, |_| {}).await;
                        if let Err(e) = &r {
                            crate::incidents::on_serve_refused(&control, &profile, e).await;
                        }
                        r.map(|o| format!("{o:?}"))
                    }
                    EngineAction::Stop => control.stop(&profile).await.map(|o| format!("{o:?}")),
                    EngineAction::Restart => control.restart(&profile).await.map(|o| format!("{o:?}")),
                };
                crate::control::actions::record_action(
                    &control,
                    &who,
                    action.as_str(),
                    &profile,
                    "from the engine page",
                    result,
                )
                .await;
            });
            Ok(())
        })
    }

    fn profiles(&self) -> BoxFut<'_, Result<Vec<ProfileSummary>, ApiError>> {
        Box::pin(async move {
            let rows = self.control.store.list().await.map_err(internal)?;
            Ok(rows
                .into_iter()
                .map(|s| {
                    let install = self.control.data.engine(&s.profile.engine);
                    let kind = install.map(|i| i.kind);
                    ProfileSummary {
                        port: s
                            .profile
                            .port
                            .unwrap_or(kind.unwrap_or(EngineKind::Vllm).default_port()),
                        name: s.profile.name,
                        engine: s.profile.engine,
                        kind,
                        simulated: install.is_some_and(|i| i.simulator),
                        model: s.profile.model,
                        updated_at: s.updated_at,
                    }
                })
                .collect())
        })
    }

    fn profile(&self, name: String) -> BoxFut<'_, Result<ProfileView, ApiError>> {
        Box::pin(async move {
            let stored = self.stored(&name).await?;
            let p = stored.profile;
            let install = self.control.data.engine(&p.engine);
            let kind = install.map(|i| i.kind);
            let mut issues = p.validate();
            issues.extend(self.control.policy_issues(&p).await);
            if install.is_none() {
                issues.push(app::domain::profile::Issue {
                    field: "ENGINE".into(),
                    line: None,
                    severity: app::domain::profile::Severity::Error,
                    kind: app::domain::profile::IssueKind::UnknownEngine {
                        value: p.engine.clone(),
                    },
                });
            }
            // What the console executes: for a container installation, the CLI's `run`.
            let argv = match install {
                Some(i) => match self.control.launch_argv(&p.engine, i, &p) {
                    Ok((_, launch)) => launch,
                    Err(_) => render_argv(i.kind, &self.control.data.command_for(i).map_err(internal)?, &p),
                },
                None => Vec::new(),
            };
            let untranslated = match (kind, &p.speculative_config) {
                (Some(EngineKind::Sglang), Some(spec)) => untranslatable_speculative_keys(spec),
                _ => Vec::new(),
            };
            Ok(ProfileView {
                env_text: p.to_env(),
                kind,
                simulated: install.is_some_and(|i| i.simulator),
                argv,
                issues,
                untranslated,
                updated_at: stored.updated_at,
                known_good: self.control.known_good(&p.name).await.map_err(internal)?,
                profile: p,
            })
        })
    }

    fn run_start(&self, who: String, profile: String, bench: Option<BenchRequest>) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let resolved = self.control.resolve(&profile).await.map_err(api_error)?;
            if !self.control.is_running(&profile) {
                return Err(ApiError::Invalid(format!("{profile} is not running; serve it first")));
            }
            let target = crate::runs::Target::profile(resolved);
            let params = bench
                .as_ref()
                .map(|b| crate::runs::closed_loop(&target, b.requests, b.concurrency, b.input_len, b.output_len));
            if let Some(p) = &params {
                if p.output_len == 0 {
                    return Err(ApiError::Invalid("--output-len must be at least 1".into()));
                }
                crate::runs::bench::validate(p).map_err(|e| ApiError::Invalid(e.to_string()))?;
            }
            let kind = if bench.is_some() {
                RunKind::Bench
            } else {
                RunKind::Smoke
            };
            {
                let mut runs = self.runs.lock().map_err(|_| internal("run registry poisoned"))?;
                if runs.get(&profile).is_some_and(|g| g.running) {
                    return Err(ApiError::Invalid(format!("a run is already in progress on {profile}")));
                }
                let total = bench.as_ref().map(|b| b.requests).unwrap_or(10);
                runs.insert(
                    profile.clone(),
                    RunStatus {
                        kind,
                        running: true,
                        progress: BenchProgress {
                            total,
                            ..Default::default()
                        },
                        error: None,
                        result_id: None,
                        passed: None,
                    },
                );
            }
            let (control, registry) = (self.control.clone(), self.runs.clone());
            let runs = crate::runs::Runs::new(control.clone());
            let watch = (self.runs.clone(), profile.clone());
            let task = tokio::spawn(async move {
                let (journal_kind, outcome) = match params {
                    None => {
                        let (g, pr) = (registry.clone(), profile.clone());
                        let run = runs
                            .smoke(&target, move |c| {
                                Self::set_run(&g, &pr, |s| {
                                    s.progress.done += 1;
                                    s.progress.failed += usize::from(!c.pass && !c.skipped);
                                })
                            })
                            .await;
                        ("run-smoke", run.id.map(|id| (id, run.report.passed())))
                    }
                    Some(params) => {
                        let (g, pr) = (registry.clone(), profile.clone());
                        let run = runs
                            .bench(&target, &params, move |prog| {
                                Self::set_run(&g, &pr, |s| s.progress = prog)
                            })
                            .await;
                        let outcome = match run {
                            Ok(r) => {
                                let clean = r.clean();
                                r.id.map(|id| (id, clean))
                            }
                            Err(e) => Err(e.to_string()),
                        };
                        ("run-bench", outcome)
                    }
                };
                let detail = match &outcome {
                    Ok((id, ok)) => serde_json::json!({"passed": ok, "run": id}),
                    Err(e) => serde_json::json!({"error": e}),
                };
                let detail = crate::control::actions::context(&control, &profile, detail).await;
                if let Err(e) = control
                    .journal()
                    .append(&who, journal_kind, &profile, "run from the engine page", detail)
                    .await
                {
                    tracing::error!(profile = %profile, error = %e, "journal append failed for a run");
                }
                Self::set_run(&registry, &profile, |s| {
                    s.running = false;
                    match outcome {
                        Ok((id, ok)) => {
                            s.result_id = Some(id);
                            s.passed = Some(ok);
                        }
                        Err(e) => s.error = Some(e),
                    }
                });
            });
            // A run that panics must not leave the profile marked "running" until a restart.
            tokio::spawn(async move {
                if let Err(e) = task.await {
                    tracing::error!(profile = %watch.1, error = %e, "a run ended abnormally");
                    Self::set_run(&watch.0, &watch.1, |s| {
                        s.running = false;
                        s.error = Some("the run ended abnormally; the console's log has the details".into());
                    });
                }
            });
            Ok(())
        })
    }

    fn bench_runs(&self, profile: Option<String>, ids: Vec<i64>) -> BoxFut<'_, Result<Vec<BenchRun>, ApiError>> {
        Box::pin(async move {
            let runs = self.run_store();
            let rows = if ids.is_empty() {
                runs.benches(profile.as_deref(), 200).await.map_err(internal)?
            } else {
                let mut rows = Vec::new();
                for id in ids.iter().take(8) {
                    if let Some(r) = runs.bench(*id).await.map_err(internal)? {
                        rows.push(r);
                    }
                }
                rows
            };
            Ok(rows.into_iter().filter_map(bench_run).collect())
        })
    }

    fn last_smoke(&self, profile: String) -> BoxFut<'_, Result<Option<SmokeRun>, ApiError>> {
        Box::pin(async move {
            match self.run_store().last_smoke(&profile).await.map_err(internal)? {
                Some((id, passed, report, created_at)) => {
                    Ok(serde_json::from_value::<app::domain::toolcall::SmokeReport>(report)
                        .ok()
                        .map(|report| SmokeRun {
                            id,
                            created_at,
                            passed,
                            report: report.for_page(app::domain::toolcall::PAGE_RAW_BYTES),
                        }))
                }
                None => Ok(None),
            }
        })
    }

    fn series(
        &self,
        profile: String,
        range: app::domain::series::Range,
    ) -> BoxFut<'_, Result<Vec<app::domain::series::Point>, ApiError>> {
        Box::pin(async move {
            if !app::domain::profile::valid_name(&profile) {
                return Err(ApiError::NoSuchProfile(profile));
            }
            self.history
                .points(&profile, range, crate::monitor::history::now_ms())
                .await
                .map_err(internal)
        })
    }

    fn incident_open(
        &self,
        who: String,
        profile: String,
        clients_see_errors: bool,
    ) -> BoxFut<'_, Result<i64, ApiError>> {
        Box::pin(async move {
            self.incidents
                .open(&profile, &who, "console", clients_see_errors)
                .await
                .map(|(id, _, _)| id)
                .map_err(incident_error)
        })
    }

    fn incidents(&self) -> BoxFut<'_, Result<Vec<app::domain::incident::IncidentSummary>, ApiError>> {
        Box::pin(async move { self.incidents.store.list(200).await.map_err(internal) })
    }

    fn incident(&self, id: i64) -> BoxFut<'_, Result<app::domain::incident::Incident, ApiError>> {
        Box::pin(async move { self.incidents.store.get(id).await.map_err(|e| incident_error(e.into())) })
    }

    fn incident_act(
        &self,
        who: String,
        id: i64,
        action: app::domain::triage::Action,
        reason: String,
    ) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let action_id = action.id();
            self.incidents
                .act(id, action, &reason, &who)
                .await
                .map_err(incident_error)?;
            // After the checks, and quoted: a newline in a reason cannot forge a log line.
            tracing::info!(incident = id, action = action_id, reason = ?reason, "incident action taken from the console");
            Ok(())
        })
    }

    fn incident_note(&self, who: String, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.incidents.note(id, &who, &text).await.map_err(incident_error) })
    }

    fn incident_resolve(&self, who: String, id: i64) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.incidents.resolve(id, &who).await.map_err(incident_error) })
    }

    fn incident_postmortem(
        &self,
        _who: String,
        id: i64,
        postmortem: app::domain::incident::Postmortem,
    ) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            self.incidents
                .save_postmortem(id, &postmortem)
                .await
                .map_err(incident_error)
        })
    }

    fn startup_history(&self, profile: String) -> BoxFut<'_, Result<Vec<app::domain::phases::StartupRun>, ApiError>> {
        Box::pin(async move {
            crate::control::startups::StartupStore::new(self.control.store.pool())
                .recent(&profile, 10)
                .await
                .map_err(crate::api_error::internal)
        })
    }

    fn state_timeline(
        &self,
        profile: String,
        range: app::domain::series::Range,
    ) -> BoxFut<'_, Result<app::domain::timeline::StateTimeline, ApiError>> {
        Box::pin(async move {
            let now = crate::clock::now_ms();
            crate::monitor::states::StateLog::new(self.control.store.pool())
                .timeline(&profile, now - range.secs() * 1000, now)
                .await
                .map_err(crate::api_error::internal)
        })
    }

    fn vram_check(&self, profile: String) -> BoxFut<'_, Result<app::api::VramCheck, ApiError>> {
        Box::pin(async move {
            crate::vram::engine_check(&self.control, &profile)
                .await
                .map_err(ApiError::Invalid)
        })
    }

    fn predict_vram(
        &self,
        profile: String,
        env_text: Option<String>,
    ) -> BoxFut<'_, Result<app::api::VramPrediction, ApiError>> {
        Box::pin(async move {
            let candidate = env_text.map(|t| edited_profile(&profile, &t)).transpose()?;
            crate::vram::predict(&self.control, &profile, candidate)
                .await
                .map_err(ApiError::Invalid)
        })
    }

    fn start_model_verify(&self, who: String, name: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let root = self.control.data.models_root();
            // One directory name under the root: no separators, no `..`.
            if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                return Err(ApiError::Invalid(format!("{name:?} is not a model directory name")));
            }
            let dir = crate::config::confined(&root, &root.join(&name)).map_err(ApiError::Invalid)?;
            // Its weights are "simulated" only when every profile that loads it runs on a
            // simulated installation (host configuration), and one does.
            let users: Vec<bool> = self
                .control
                .store
                .list()
                .await
                .map_err(internal)?
                .iter()
                .filter(|p| {
                    crate::config::confined(&root, std::path::Path::new(&p.profile.model)).ok() == Some(dir.clone())
                })
                .map(|p| self.control.data.engine(&p.profile.engine).is_some_and(|i| i.simulator))
                .collect();
            let simulated = !users.is_empty() && users.iter().all(|s| *s);
            let journal = self.control.journal();
            let subject = name.clone();
            let started = self.verifications.start(
                name,
                dir,
                root,
                simulated,
                crate::models::hashcache::HashCache::new(self.control.store.pool()),
                move |result| {
                    tokio::spawn(async move {
                        let detail = match &result {
                            Ok(r) => serde_json::json!({
                                "ok": r.ok(), "manifest": r.manifest, "files": r.files, "bytes": r.bytes,
                                "hashed_files": r.hashed_files, "cached_files": r.cached_files,
                                "errors": r.errors().map(|f| format!("{}: {}", f.file, f.detail)).collect::<Vec<_>>(),
                            }),
                            Err(e) => serde_json::json!({"ok": false, "error": e}),
                        };
                        journal
                            .record(
                                &who,
                                "model-verified",
                                &subject,
                                "verified from the Models page",
                                detail,
                            )
                            .await;
                    });
                },
            );
            if started {
                Ok(())
            } else {
                Err(ApiError::Invalid(
                    "a verification of this model is already running".into(),
                ))
            }
        })
    }

    fn model_verify(&self, name: String) -> BoxFut<'_, Result<app::api::ModelVerifyState, ApiError>> {
        Box::pin(async move { Ok(self.verifications.get(&name)) })
    }

    fn models(&self) -> BoxFut<'_, Result<Vec<app::api::ModelInfo>, ApiError>> {
        Box::pin(async move {
            let root = self.control.data.models_root();
            tokio::task::spawn_blocking(move || crate::vram::models(&root))
                .await
                .map_err(internal)
        })
    }

    fn host_gpus(&self) -> BoxFut<'_, Result<Vec<app::api::HostGpu>, ApiError>> {
        Box::pin(async move {
            use app::domain::gpu::GpuState;
            match crate::gpu::read().await {
                GpuState::Available { gpus, .. } => Ok(gpus
                    .iter()
                    .map(|g| app::api::HostGpu {
                        index: g.index,
                        name: g.name.clone(),
                        usable_gib: app::domain::vram_picture::usable_gib(g),
                        total_gib: g.memory_total_bytes as f64 / (1u64 << 30) as f64,
                    })
                    .collect()),
                GpuState::NoDriver { reason } => Err(ApiError::Invalid(reason)),
            }
        })
    }

    fn journal(&self, query: Option<String>) -> BoxFut<'_, Result<Vec<app::api::JournalEntry>, ApiError>> {
        Box::pin(async move {
            let q = query.filter(|q| !q.trim().is_empty());
            self.control
                .journal()
                .list(None, q.as_deref(), 500)
                .await
                .map_err(internal)
        })
    }

    fn journal_alarm(&self) -> BoxFut<'_, Option<String>> {
        Box::pin(async move { self.control.journal().alarm().await })
    }

    fn journal_verify(&self) -> BoxFut<'_, Result<app::api::JournalCheck, ApiError>> {
        Box::pin(async move { self.control.journal().verify().await.map_err(internal) })
    }

    fn profile_editor(&self, name: String, change: Option<i64>) -> BoxFut<'_, Result<app::api::EditorData, ApiError>> {
        Box::pin(async move {
            let stored = self.stored(&name).await?;
            let active_env = stored.profile.to_env();
            let env_text = match change {
                None => active_env.clone(),
                Some(id) => self.changes.candidate_env(id, &name).await?,
            };
            let installs = self
                .control
                .data
                .config
                .engines
                .iter()
                .filter_map(|(n, i)| {
                    Some(app::api::InstallInfo {
                        name: n.clone(),
                        kind: i.kind,
                        simulator: i.simulator,
                        command: self.control.data.command_for(i).ok()?,
                    })
                })
                .collect();
            Ok(app::api::EditorData {
                name,
                env_text,
                active_env,
                change,
                installs,
            })
        })
    }

    fn upgrade_check_text(
        &self,
        name: String,
        env_text: String,
    ) -> BoxFut<'_, Result<app::domain::upgrade::UpgradeCheck, ApiError>> {
        Box::pin(async move {
            let candidate = edited_profile(&name, &env_text)?;
            let current = self.stored(&name).await?;
            self.control
                .upgrade_check_between(&current.profile, &candidate)
                .await
                .map_err(|e| ApiError::Invalid(e.to_string()))
        })
    }

    fn editor_help(&self, install: String) -> BoxFut<'_, Result<app::api::EditorHelp, ApiError>> {
        Box::pin(async move {
            let Some(i) = self.control.data.engine(&install) else {
                return Err(ApiError::Invalid(format!(
                    "ENGINE: no installation named {install:?} in this host's configuration"
                )));
            };
            let installed = self
                .control
                .installed_flags(&install, i)
                .await
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            Ok(app::api::EditorHelp::from_flags(
                &install,
                &installed.version,
                i.kind,
                &installed.flags,
            ))
        })
    }

    fn check_flags_text(&self, name: String, env_text: String) -> BoxFut<'_, Result<app::api::FlagCheck, ApiError>> {
        Box::pin(async move {
            let p = edited_profile(&name, &env_text)?;
            let (report, _) = self
                .control
                .check_profile_flags(&p)
                .await
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            Ok(app::api::FlagCheck {
                version: report.version,
                unknown: report.unknown,
                bad_values: report.bad_values,
            })
        })
    }
}
