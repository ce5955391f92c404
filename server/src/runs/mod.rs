//! Runs against a serving engine: smoke-toolcall and the serving benchmark, and the store
//! that keeps their results for comparison.
//!
//! Each run sequence is written once here and used by the CLI, the engine page, the incident
//! wizard and a change's gate: for a profile's engine, smoke-toolcall starts with the flag
//! preflight against the installed engine's own `--help`; every finished run is stored.
//! Callers journal the outcome under their own kind.

pub mod bench;
pub mod live;
pub mod smoke;
pub mod store;
pub mod tokens;

use crate::context::Context;
use crate::control::Resolved;
use app::domain::bench::{BenchParams, BenchProgress, BenchSummary};
use app::domain::toolcall::{CaseResult, SmokeReport};
use store::RunStore;

/// What a run is aimed at: an engine (or a proxy) by URL, or a profile's engine.
#[derive(Clone, Debug)]
pub struct Target {
    pub base: String,
    pub model: String,
    /// The profile when the target is a profile's engine (its flags get the preflight).
    pub profile: Option<Resolved>,
}

impl Target {
    /// A profile's engine, addressed by its served model name.
    pub fn profile(resolved: Resolved) -> Self {
        Self {
            base: resolved.base_url(),
            model: resolved.profile.model_name().to_string(),
            profile: Some(resolved),
        }
    }

    /// An engine or proxy by URL.
    pub fn url(base: &str, model: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            model: model.to_string(),
            profile: None,
        }
    }

    fn profile_name(&self) -> Option<&str> {
        self.profile.as_ref().map(|r| r.profile.name.as_str())
    }
}

/// A closed-loop run at full rate against the target: what the engine page's bench form and
/// a change's gate ask for.
pub fn closed_loop(
    target: &Target,
    requests: usize,
    concurrency: usize,
    input_len: usize,
    output_len: u32,
) -> BenchParams {
    BenchParams {
        url: target.base.clone(),
        model: target.model.clone(),
        endpoint: app::domain::bench::Endpoint::Completions,
        requests,
        concurrency: Some(concurrency),
        rate: f64::INFINITY,
        burstiness: 1.0,
        input_len,
        output_len,
        warmup: 0,
        seed: 0,
        goodput: None,
    }
}

/// A finished smoke-toolcall run and where it was stored.
pub struct SmokeRun {
    pub report: SmokeReport,
    pub id: Result<i64, store::RunStoreError>,
}

/// A finished bench run, the engine version it ran against, and where it was stored.
pub struct BenchRun {
    pub summary: BenchSummary,
    pub engine_version: Option<String>,
    pub id: Result<i64, store::RunStoreError>,
}

impl BenchRun {
    /// No failed request and a client that kept up.
    pub fn clean(&self) -> bool {
        self.summary.failed == 0 && !self.summary.client_overloaded
    }
}

/// The runs of one data directory.
#[derive(Clone)]
pub struct Runs {
    ctx: Context,
    store: RunStore,
}

impl Runs {
    pub fn new(ctx: Context) -> Self {
        let store = RunStore::new(ctx.pool.clone());
        Self { ctx, store }
    }

    pub fn store(&self) -> &RunStore {
        &self.store
    }

    /// The flag preflight for a profile: parser and auto-tool-choice flags against the
    /// installed engine's own `--help` (when it can be read).
    pub async fn preflight(&self, resolved: &Resolved) -> smoke::Preflight {
        let installed = match self.ctx.data.engine(&resolved.profile.engine) {
            Some(install) => self
                .ctx
                .control
                .installed_flags(&resolved.profile.engine, install)
                .await
                .ok()
                .map(|f| f.flags),
            None => None,
        };
        smoke::preflight(resolved.kind, &resolved.argv, installed.as_ref())
    }

    /// smoke-toolcall against the target (with the preflight for a profile), stored.
    pub async fn smoke(&self, target: &Target, on_case: impl FnMut(&CaseResult)) -> SmokeRun {
        let preflight = match &target.profile {
            Some(r) => Some(self.preflight(r).await),
            None => None,
        };
        let report = smoke::run(&target.base, &target.model, preflight, on_case).await;
        let id = self.store.add_smoke(target.profile_name(), &report).await;
        SmokeRun { report, id }
    }

    /// How the bench sizes prompts for this target: with the profile's model's own
    /// tokenizer.json (read off the async workers), else by characters, saying why.
    async fn prompts(&self, target: &Target) -> bench::Prompts {
        let Some(resolved) = &target.profile else {
            return bench::Prompts::Chars(
                "a --url target has no model directory; bench a --profile for exact token counts".into(),
            );
        };
        let dir = match crate::config::confined(
            &self.ctx.data.models_root(),
            std::path::Path::new(&resolved.profile.model),
        ) {
            Ok(d) => d,
            Err(e) => return bench::Prompts::Chars(format!("MODEL {e}")),
        };
        match tokio::task::spawn_blocking(move || tokens::PromptTokenizer::from_model_dir(&dir)).await {
            Ok(Ok(t)) => bench::Prompts::Tokens(std::sync::Arc::new(t)),
            Ok(Err(e)) => bench::Prompts::Chars(format!("no tokenizer: {e}")),
            Err(e) => bench::Prompts::Chars(e.to_string()),
        }
    }

    /// The serving benchmark against the target, stored with the engine's version.
    pub async fn bench(
        &self,
        target: &Target,
        params: &BenchParams,
        progress: impl Fn(BenchProgress) + Send + Sync + 'static,
    ) -> Result<BenchRun, bench::BenchError> {
        let engine_version = match target.profile_name() {
            Some(p) => self.ctx.control.cached_version(p),
            None => None,
        };
        let engine_version = match engine_version {
            Some(v) => Some(v),
            None => crate::engine::Engine::at(&target.base).version().await,
        };
        let prompts = self.prompts(target).await;
        let (summary, _records) = bench::run(params, &prompts, progress).await?;
        let id = self
            .store
            .add_bench(target.profile_name(), engine_version.as_deref(), params, &summary)
            .await;
        Ok(BenchRun {
            summary,
            engine_version,
            id,
        })
    }
}
