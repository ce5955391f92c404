//! Runs from the engine page: smoke-toolcall and bench, and their stored results.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use crate::domain::bench::{BenchParams, BenchProgress, BenchSummary};
use crate::domain::toolcall::SmokeReport;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Which run is started from the engine page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    Smoke,
    Bench,
}

/// A smoke-toolcall or bench run started from the engine page, while it runs and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct RunStatus {
    pub kind: RunKind,
    pub running: bool,
    pub progress: BenchProgress,
    pub error: Option<String>,
    /// The stored run, once finished.
    pub result_id: Option<i64>,
    pub passed: Option<bool>,
}

/// What the engine page's bench form asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct BenchRequest {
    pub requests: usize,
    pub concurrency: usize,
    pub input_len: usize,
    pub output_len: u32,
}

/// A stored bench run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct BenchRun {
    pub id: i64,
    pub profile: Option<String>,
    pub model: String,
    pub engine_version: Option<String>,
    pub created_at: String,
    pub params: BenchParams,
    pub summary: BenchSummary,
}

/// A stored smoke-toolcall run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct SmokeRun {
    pub id: i64,
    pub created_at: String,
    pub passed: bool,
    pub report: SmokeReport,
}

#[cfg(feature = "ssr")]
pub use ssr::RunService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// Runs against a running engine: smoke-toolcall and bench, and their stored results. Implemented by the server.
    pub trait RunService: Send + Sync {
        /// Starts smoke-toolcall (no bench request) or bench against a running profile.
        fn start(&self, who: String, profile: String, bench: Option<BenchRequest>) -> BoxFut<'_, Result<(), ApiError>>;
        fn benches(&self, profile: Option<String>, ids: Vec<i64>) -> BoxFut<'_, Result<Vec<BenchRun>, ApiError>>;
        fn last_smoke(&self, profile: String) -> BoxFut<'_, Result<Option<SmokeRun>, ApiError>>;
    }
}

/// Starts smoke-toolcall against a running engine.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "start_smoke")]
pub async fn start_smoke(profile: String) -> Result<(), ApiError> {
    service::authorized("start_smoke")?
        .runs
        .start(service::caller()?.name, profile, None)
        .await
}

/// Starts a bench run against a running engine.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "start_bench")]
pub async fn start_bench(profile: String, request: BenchRequest) -> Result<(), ApiError> {
    service::authorized("start_bench")?
        .runs
        .start(service::caller()?.name, profile, Some(request))
        .await
}

/// Stored bench runs, newest first: of one profile, or the given ids (for comparison).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_bench_runs")]
pub async fn list_bench_runs(profile: Option<String>, ids: Vec<i64>) -> Result<Vec<BenchRun>, ApiError> {
    service::authorized("list_bench_runs")?.runs.benches(profile, ids).await
}

/// The newest smoke-toolcall run of a profile, with every case and raw answer.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_last_smoke")]
pub async fn get_last_smoke(profile: String) -> Result<Option<SmokeRun>, ApiError> {
    service::authorized("get_last_smoke")?.runs.last_smoke(profile).await
}
