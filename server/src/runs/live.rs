//! Runs started from the engine page: one at a time per profile, run in the background, their
//! progress kept in memory for the page and its event stream, their outcome journaled; and the
//! stored results the page reads back.

use super::{closed_loop, Runs, Target};
use crate::context::Context;
use crate::control::ControlError;
use app::api::{BenchRequest, BenchRun, RunKind, RunStatus, SmokeRun};
use app::domain::bench::BenchProgress;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Each profile's latest run started from the page, by profile name.
pub type RunRegistry = Arc<Mutex<HashMap<String, RunStatus>>>;

/// Why a run could not start or its results could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Control(#[from] ControlError),
    /// The engine is not running, a run is in progress, or the bench's parameters refuse.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// The page's runs of this console.
#[derive(Clone)]
pub struct LiveRuns {
    ctx: Context,
    registry: RunRegistry,
}

impl LiveRuns {
    pub fn new(ctx: Context, registry: RunRegistry) -> Self {
        Self { ctx, registry }
    }

    /// The latest run of `profile` started from the page, if any since the console started.
    pub fn status(&self, profile: &str) -> Option<RunStatus> {
        self.registry.lock().ok().and_then(|g| g.get(profile).cloned())
    }

    fn set(registry: &RunRegistry, profile: &str, f: impl FnOnce(&mut RunStatus)) {
        if let Ok(mut g) = registry.lock() {
            if let Some(status) = g.get_mut(profile) {
                f(status);
            }
        }
    }

    /// Starts smoke-toolcall (no bench request) or bench against a running profile and returns
    /// once it is under way; refused while another run of the profile is in progress.
    pub async fn start(&self, who: &str, profile: &str, bench: Option<BenchRequest>) -> Result<(), RunError> {
        let resolved = self.ctx.control.resolve(profile).await?;
        if !self.ctx.control.is_running(profile) {
            return Err(RunError::Invalid(format!("{profile} is not running; serve it first")));
        }
        let target = Target::profile(resolved);
        let params = bench
            .as_ref()
            .map(|b| closed_loop(&target, b.requests, b.concurrency, b.input_len, b.output_len));
        if let Some(p) = &params {
            if p.output_len == 0 {
                return Err(RunError::Invalid("--output-len must be at least 1".into()));
            }
            super::bench::validate(p).map_err(|e| RunError::Invalid(e.to_string()))?;
        }
        let total = bench.as_ref().map(|b| b.requests).unwrap_or(10);
        self.claim(
            profile,
            if bench.is_some() {
                RunKind::Bench
            } else {
                RunKind::Smoke
            },
            total,
        )?;
        let (me, who, profile) = (self.clone(), who.to_string(), profile.to_string());
        let watch = (self.registry.clone(), profile.clone());
        let task = tokio::spawn(async move { me.perform(&who, &profile, &target, params).await });
        // A run that panics must not leave the profile marked "running" until a restart.
        tokio::spawn(async move {
            if let Err(e) = task.await {
                tracing::error!(profile = %watch.1, error = %e, "a run ended abnormally");
                Self::set(&watch.0, &watch.1, |s| {
                    s.running = false;
                    s.error = Some("the run ended abnormally; the console's log has the details".into());
                });
            }
        });
        Ok(())
    }

    /// Marks `profile` as running a run, unless one already is.
    fn claim(&self, profile: &str, kind: RunKind, total: usize) -> Result<(), RunError> {
        let mut runs = self
            .registry
            .lock()
            .map_err(|_| anyhow::anyhow!("run registry poisoned"))?;
        if runs.get(profile).is_some_and(|g| g.running) {
            return Err(RunError::Invalid(format!("a run is already in progress on {profile}")));
        }
        runs.insert(
            profile.to_string(),
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
        Ok(())
    }

    /// The run itself: progress into the registry, the outcome into the journal and the registry.
    async fn perform(
        &self,
        who: &str,
        profile: &str,
        target: &Target,
        params: Option<app::domain::bench::BenchParams>,
    ) {
        let runs = Runs::new(self.ctx.clone());
        let (journal_kind, outcome) = match params {
            None => {
                let (g, pr) = (self.registry.clone(), profile.to_string());
                let run = runs
                    .smoke(target, move |c| {
                        Self::set(&g, &pr, |s| {
                            s.progress.done += 1;
                            s.progress.failed += usize::from(!c.pass && !c.skipped);
                        })
                    })
                    .await;
                let passed = run.report.passed();
                ("run-smoke", run.id.map(|id| (id, passed)).map_err(|e| e.to_string()))
            }
            Some(params) => {
                let (g, pr) = (self.registry.clone(), profile.to_string());
                let run = runs
                    .bench(target, &params, move |prog| Self::set(&g, &pr, |s| s.progress = prog))
                    .await;
                let outcome = match run {
                    Ok(r) => {
                        let clean = r.clean();
                        r.id.map(|id| (id, clean)).map_err(|e| e.to_string())
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
        let detail = crate::control::actions::context(&self.ctx.control, profile, detail).await;
        if let Err(e) = self
            .ctx
            .journal
            .append(who, journal_kind, profile, "run from the engine page", detail)
            .await
        {
            tracing::error!(profile = %profile, error = %e, "journal append failed for a run");
        }
        Self::set(&self.registry, profile, |s| {
            s.running = false;
            match outcome {
                Ok((id, ok)) => {
                    s.result_id = Some(id);
                    s.passed = Some(ok);
                }
                Err(e) => s.error = Some(e),
            }
        });
    }

    /// Stored bench runs, newest first: of one profile (200 at most), or the given ids (8 at
    /// most, for comparison). A row whose stored JSON no longer reads is left out.
    pub async fn benches(&self, profile: Option<&str>, ids: &[i64]) -> Result<Vec<BenchRun>, RunError> {
        let store = super::store::RunStore::new(self.ctx.pool.clone());
        let rows = if ids.is_empty() {
            store.benches(profile, 200).await.map_err(anyhow::Error::from)?
        } else {
            let mut rows = Vec::new();
            for id in ids.iter().take(8) {
                if let Some(r) = store.bench(*id).await.map_err(anyhow::Error::from)? {
                    rows.push(r);
                }
            }
            rows
        };
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                Some(BenchRun {
                    id: row.id,
                    profile: row.profile,
                    model: row.model,
                    engine_version: row.engine_version,
                    created_at: row.created_at,
                    params: serde_json::from_value(row.params).ok()?,
                    summary: serde_json::from_value(row.summary).ok()?,
                })
            })
            .collect())
    }

    /// The newest smoke-toolcall run of a profile, its raw answers cut to the page's size.
    pub async fn last_smoke(&self, profile: &str) -> Result<Option<SmokeRun>, RunError> {
        let store = super::store::RunStore::new(self.ctx.pool.clone());
        let Some((id, passed, report, created_at)) = store.last_smoke(profile).await.map_err(anyhow::Error::from)?
        else {
            return Ok(None);
        };
        Ok(serde_json::from_value::<app::domain::toolcall::SmokeReport>(report)
            .ok()
            .map(|report| SmokeRun {
                id,
                created_at,
                passed,
                report: report.for_page(app::domain::toolcall::PAGE_RAW_BYTES),
            }))
    }
}
