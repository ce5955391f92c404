//! The console's implementation of the UI's service seam, over engine control and SQLite.

use crate::control::{logs, ControlError, EngineControl};
use app::api::service::{BoxFut, ConsoleService};
use app::api::{ApiError, EngineAction, EngineDetail, ProfileSummary, ProfileView};
use app::domain::engine::EngineKind;
use app::domain::engine::EngineStatus;
use app::domain::flagmap::{render_argv, untranslatable_speculative_keys};
use tokio::sync::watch;

pub struct ConsoleServiceImpl {
    control: EngineControl,
    fleet: watch::Receiver<Vec<EngineStatus>>,
}

impl ConsoleServiceImpl {
    pub fn new(control: EngineControl, fleet: watch::Receiver<Vec<EngineStatus>>) -> Self {
        Self { control, fleet }
    }
}

/// Maps engine-control errors to what the UI can explain.
pub fn api_error(e: ControlError) -> ApiError {
    match e {
        ControlError::NoSuchProfile(p) => ApiError::NoSuchProfile(p),
        ControlError::NoSuchEngine { profile, engine, .. } => ApiError::NoSuchEngine { profile, engine },
        ControlError::PortBusy { port, owner } => ApiError::PortBusy { port, owner },
        other @ (ControlError::ModelPath { .. } | ControlError::Busy(_)) => ApiError::Invalid(other.to_string()),
        other => ApiError::Internal(other.to_string()),
    }
}

impl ConsoleService for ConsoleServiceImpl {
    fn engines(&self) -> BoxFut<'_, Result<Vec<EngineStatus>, ApiError>> {
        Box::pin(async move { Ok(self.fleet.borrow().clone()) })
    }

    fn engine(&self, profile: String) -> BoxFut<'_, Result<EngineDetail, ApiError>> {
        Box::pin(async move {
            let (p, _, _, argv) = self.control.resolve(&profile).await.map_err(api_error)?;
            let status = self.control.status(&p).await;
            let log_path = self.control.log_path(&profile);
            let log_tail = logs::tail(&log_path, 200).unwrap_or_default();
            Ok(EngineDetail {
                status,
                argv,
                log_tail,
                log_path: log_path.display().to_string(),
            })
        })
    }

    fn act(&self, profile: String, action: EngineAction) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let (p, kind, _, _) = self.control.resolve(&profile).await.map_err(api_error)?;
            let running = matches!(self.control.running(&profile), Some(Ok(_)));
            if action == EngineAction::Serve && !running {
                let port = p.port.unwrap_or(kind.default_port());
                if let Some(owner) = self.control.port_owner(&p.host, port) {
                    return Err(ApiError::PortBusy { port, owner });
                }
            }
            let control = self.control.clone();
            tracing::info!(profile = %profile, action = action.as_str(), "engine action requested from the console");
            tokio::spawn(async move {
                let result = match action {
                    EngineAction::Serve => control.serve(&profile, |_| {}).await.map(|o| format!("{o:?}")),
                    EngineAction::Stop => control.stop(&profile).await.map(|o| format!("{o:?}")),
                    EngineAction::Restart => match control.stop(&profile).await {
                        Ok(_) => control.serve(&profile, |_| {}).await.map(|o| format!("{o:?}")),
                        Err(e) => Err(e),
                    },
                };
                match result {
                    Ok(outcome) => {
                        tracing::info!(profile = %profile, action = action.as_str(), %outcome, "engine action done")
                    }
                    Err(e) => {
                        tracing::warn!(profile = %profile, action = action.as_str(), error = %e, "engine action failed")
                    }
                }
            });
            Ok(())
        })
    }

    fn profiles(&self) -> BoxFut<'_, Result<Vec<ProfileSummary>, ApiError>> {
        Box::pin(async move {
            let rows = self
                .control
                .store
                .list()
                .await
                .map_err(|e| ApiError::Internal(e.to_string()))?;
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
            let stored = self
                .control
                .store
                .get(&name)
                .await
                .map_err(|e| ApiError::Internal(e.to_string()))?
                .ok_or_else(|| ApiError::NoSuchProfile(name.clone()))?;
            let p = stored.profile;
            let install = self.control.data.engine(&p.engine);
            let kind = install.map(|i| i.kind);
            let mut issues = p.validate();
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
            let argv = match install {
                Some(i) => {
                    let command = self
                        .control
                        .data
                        .command_for(i)
                        .map_err(|e| ApiError::Internal(e.to_string()))?;
                    render_argv(i.kind, &command, &p)
                }
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
                profile: p,
            })
        })
    }
}
