//! Engines, the feature: what the fleet and an engine's page show (the collector's live row,
//! the argv, the log's tail, the page's run, the GPUs, the history) and the actions an operator
//! takes there (serve, stop, restart), refused before anything moves when the console knows
//! they would fail, and journaled with their outcome.

use crate::context::Context;
use crate::control::{logs, ControlError, Resolved};
use crate::monitor::history::History;
use crate::runs::live::LiveRuns;
use app::api::{EngineAction, EngineDetail};
use app::domain::engine::EngineStatus;
use app::domain::gpu::GpuState;
use app::domain::series::{Point, Range};
use tokio::sync::watch;

/// Why an engine use-case failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Control(#[from] ControlError),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// The engines of this console: engine control and the monitor's feeds.
#[derive(Clone)]
pub struct Engines {
    ctx: Context,
    fleet: watch::Receiver<Vec<EngineStatus>>,
    gpu: watch::Receiver<GpuState>,
    history: History,
    runs: LiveRuns,
}

/// Where an action came from, in the journal.
const FROM_PAGE: &str = "from the engine page";

/// Serves a profile to its end, as the engine page and `roofline serve` do: `progress` sees
/// each phase; a start refused because a foreign container holds the engine's name opens its
/// incident (returned with the error).
pub async fn serve(
    ctx: &Context,
    profile: &str,
    progress: impl FnMut(&crate::control::Progress) + Send,
) -> Result<crate::control::ServeOutcome, (ControlError, Option<i64>)> {
    match ctx.control.serve(profile, progress).await {
        Ok(o) => Ok(o),
        Err(e) => {
            let incident = crate::incidents::on_serve_refused(ctx, profile, &e).await;
            Err((e, incident))
        }
    }
}

/// Serve, stop or restart to the end, journaled with `why`; the outcome as the journal words it.
async fn run(ctx: &Context, who: &str, profile: &str, action: EngineAction, why: &str) -> Result<String, ControlError> {
    let result = match action {
        EngineAction::Serve => serve(ctx, profile, |_| {})
            .await
            .map(|o| format!("{o:?}"))
            .map_err(|(e, _)| e),
        EngineAction::Stop => ctx.control.stop(profile).await.map(|o| format!("{o:?}")),
        EngineAction::Restart => ctx.control.restart(profile).await.map(|o| format!("{o:?}")),
    };
    ctx.record_action(who, action.as_str(), profile, why, &result).await;
    result
}

impl Engines {
    pub fn new(ctx: Context, feeds: &crate::monitor::Feeds, runs: LiveRuns) -> Self {
        Self {
            ctx,
            fleet: feeds.fleet.clone(),
            gpu: feeds.gpu.clone(),
            history: feeds.history.clone(),
            runs,
        }
    }

    /// Every engine the collector follows, with its live signals.
    pub fn list(&self) -> Vec<EngineStatus> {
        self.fleet.borrow().clone()
    }

    /// One engine's page: the collector's row (a profile it has not seen yet gets a direct
    /// status), the argv, the last 200 log lines, the page's run and the GPUs.
    pub async fn detail(&self, profile: &str) -> Result<EngineDetail, EngineError> {
        let Resolved { profile: p, argv, .. } = self.ctx.control.resolve(profile).await?;
        let known = self
            .fleet
            .borrow()
            .iter()
            .find(|e| e.node.is_empty() && e.profile == profile)
            .cloned();
        let status = match known {
            Some(s) => s,
            None => self.ctx.control.status(&p).await,
        };
        let log_path = self.ctx.control.log_path(profile);
        let tail_path = log_path.clone();
        let log_tail = tokio::task::spawn_blocking(move || logs::tail(&tail_path, 200).unwrap_or_default())
            .await
            .unwrap_or_default();
        Ok(EngineDetail {
            status,
            argv,
            log_tail,
            log_path: log_path.display().to_string(),
            run: self.runs.status(profile),
            gpu: self.gpu.borrow().clone(),
            long_history: self.history.has_prometheus(),
        })
    }

    /// Starts serve, stop or restart and returns once it is under way; the outcome is journaled
    /// when it ends. Refused first: while a gate holds the engine, when its port is another
    /// process's, and when the preflight knows a start would fail (that refusal is journaled;
    /// the CLI's `--no-preflight` is the override).
    pub async fn act(&self, who: &str, profile: &str, action: EngineAction) -> Result<(), EngineError> {
        self.check(who, profile, action, FROM_PAGE).await?;
        let (ctx, who, profile) = (self.ctx.clone(), who.to_string(), profile.to_string());
        tracing::info!(profile = %profile, action = action.as_str(), "engine action requested from the console");
        tokio::spawn(async move {
            let _ = run(&ctx, &who, &profile, action, FROM_PAGE).await;
        });
        Ok(())
    }

    /// Performs serve, stop or restart to its end, for a job another host's console queued:
    /// the same refusals as [`Self::act`], the outcome journaled with `why` and returned.
    pub async fn perform(
        &self,
        who: &str,
        profile: &str,
        action: EngineAction,
        why: &str,
    ) -> Result<String, EngineError> {
        self.check(who, profile, action, why).await?;
        tracing::info!(profile = %profile, action = action.as_str(), why, "engine action requested by another host");
        Ok(run(&self.ctx, who, profile, action, why).await?)
    }

    /// The last `lines` lines of the engine's log, as its page shows them.
    pub async fn log_text(&self, profile: &str, lines: usize) -> Result<String, EngineError> {
        self.ctx.control.resolve(profile).await?;
        let path = self.ctx.control.log_path(profile);
        Ok(
            tokio::task::spawn_blocking(move || logs::tail(&path, lines).unwrap_or_default())
                .await
                .unwrap_or_default()
                .join("\n"),
        )
    }

    /// What refuses an action before anything moves.
    async fn check(&self, who: &str, profile: &str, action: EngineAction, why: &str) -> Result<(), EngineError> {
        let Resolved { profile: p, kind, .. } = self.ctx.control.resolve(profile).await?;
        if self.ctx.control.gate_held(profile) {
            return Err(ControlError::Gated(profile.to_string()).into());
        }
        let running = self.ctx.control.is_running(profile);
        if action == EngineAction::Serve && !running {
            let port = p.port.unwrap_or(kind.default_port());
            if let Some(owner) = self.ctx.control.port_owner(&p.host, port) {
                return Err(ControlError::PortBusy { port, owner }.into());
            }
        }
        let starts = matches!(action, EngineAction::Restart) || (action == EngineAction::Serve && !running);
        if starts {
            self.preflight(who, profile, action, why).await?;
        }
        Ok(())
    }

    /// The preflight before a start; its refusal is journaled and returned.
    async fn preflight(&self, who: &str, profile: &str, action: EngineAction, why: &str) -> Result<(), ControlError> {
        let found = crate::preflight::check(&self.ctx, profile).await;
        if found.refusals.is_empty() {
            return Ok(());
        }
        let issues = found
            .refusals
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("; ");
        let refused = || ControlError::Refused {
            profile: profile.to_string(),
            issues: format!("the preflight knows this start would fail: {issues}"),
        };
        self.ctx
            .record_action(who, action.as_str(), profile, why, &Err(refused()))
            .await;
        Err(refused())
    }

    /// Chart points of a profile over a range, oldest first.
    pub async fn series(&self, profile: &str, range: Range) -> Result<Vec<Point>, EngineError> {
        if !app::domain::profile::valid_name(profile) {
            return Err(ControlError::NoSuchProfile(profile.to_string()).into());
        }
        Ok(self
            .history
            .points(profile, range, crate::monitor::history::now_ms())
            .await
            .map_err(anyhow::Error::from)?)
    }

    /// The profile's recent starts (10 at most) with their phases.
    pub async fn startup_history(&self, profile: &str) -> Result<Vec<app::domain::phases::StartupRun>, EngineError> {
        Ok(crate::control::startups::StartupStore::new(self.ctx.pool.clone())
            .recent(profile, 10)
            .await
            .map_err(anyhow::Error::from)?)
    }

    /// The states the engine was seen in across the range.
    pub async fn state_timeline(
        &self,
        profile: &str,
        range: Range,
    ) -> Result<app::domain::timeline::StateTimeline, EngineError> {
        let now = self.ctx.clock.now_ms();
        Ok(crate::monitor::states::StateLog::new(self.ctx.pool.clone())
            .timeline(profile, now - range.secs() * 1000, now)
            .await
            .map_err(anyhow::Error::from)?)
    }
}
