//! Engines: the fleet, one engine's page data and event stream, engine actions, chart series.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use crate::domain::engine::EngineStatus;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What the operator asks of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum EngineAction {
    Serve,
    Stop,
    Restart,
}

impl EngineAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Serve => "serve",
            Self::Stop => "stop",
            Self::Restart => "restart",
        }
    }
}

/// The engine page's data: status, the exact command line, the recent log, and the runs
/// (smoke-toolcall, bench) in progress or last run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct EngineDetail {
    pub status: EngineStatus,
    pub argv: Vec<String>,
    pub log_tail: Vec<String>,
    pub log_path: String,
    pub run: Option<super::RunStatus>,
    /// This host's GPUs, with our engines' processes marked.
    pub gpu: crate::domain::gpu::GpuState,
    /// The console reads history from Prometheus (`[prometheus] url`): the charts offer
    /// ranges beyond its own day of rollups.
    #[serde(default)]
    pub long_history: bool,
}

/// One push on an engine page's event stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct EngineEvent {
    pub status: EngineStatus,
    /// New log lines since the previous event.
    pub lines: Vec<String>,
    /// True when the log was truncated or rotated and the client should replace its tail.
    pub reset: bool,
    pub run: Option<super::RunStatus>,
    /// New chart points since the previous event (the stream's first event has the last ones).
    #[serde(default)]
    pub points: Vec<crate::domain::series::Point>,
    /// The GPUs, when they changed since the previous event.
    #[serde(default)]
    pub gpu: Option<crate::domain::gpu::GpuState>,
    /// The engine's open incident (the newest), linked at the top of its page; every event
    /// carries it, the stream sends one when it opens or is resolved.
    #[serde(default)]
    pub incident: Option<i64>,
}

#[cfg(feature = "ssr")]
pub use ssr::EngineService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// Engines: the fleet, one engine's page, its actions and its history. Implemented by the server.
    pub trait EngineService: Send + Sync {
        fn list(&self) -> BoxFut<'_, Result<Vec<EngineStatus>, ApiError>>;
        fn get(&self, profile: String) -> BoxFut<'_, Result<EngineDetail, ApiError>>;
        /// Starts the action and returns once it is under way; progress arrives as status.
        fn act(&self, who: String, profile: String, action: EngineAction) -> BoxFut<'_, Result<(), ApiError>>;
        /// Chart points of a profile over a range, oldest first.
        fn series(
            &self,
            profile: String,
            range: crate::domain::series::Range,
        ) -> BoxFut<'_, Result<Vec<crate::domain::series::Point>, ApiError>>;
        fn state_timeline(
            &self,
            profile: String,
            range: crate::domain::series::Range,
        ) -> BoxFut<'_, Result<crate::domain::timeline::StateTimeline, ApiError>>;
        /// The profile's recent starts and their phases.
        fn startup_history(
            &self,
            profile: String,
        ) -> BoxFut<'_, Result<Vec<crate::domain::phases::StartupRun>, ApiError>>;
    }
}

/// Every engine the console knows, with its state.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_engines")]
pub async fn list_engines() -> Result<Vec<EngineStatus>, ApiError> {
    service::authorized("list_engines")?.engines.list().await
}

/// One engine's page data.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_engine")]
pub async fn get_engine(profile: String) -> Result<EngineDetail, ApiError> {
    service::authorized("get_engine")?.engines.get(profile).await
}

/// Serve, stop or restart an engine (confirmed by the operator in the UI).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "run_engine_action")]
pub async fn run_engine_action(profile: String, action: EngineAction) -> Result<(), ApiError> {
    service::authorized("run_engine_action")?
        .engines
        .act(service::caller()?.name, profile, action)
        .await
}

/// Chart points of an engine over a time range (15 min from memory, 1 h and 24 h from the
/// stored minute rollups). A stable endpoint, so scripts can read the history too.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_series")]
pub async fn get_series(
    profile: String,
    range: crate::domain::series::Range,
) -> Result<Vec<crate::domain::series::Point>, ApiError> {
    service::authorized("get_series")?.engines.series(profile, range).await
}

/// The states the engine was seen in across the range (the engine page's state timeline).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_state_timeline")]
pub async fn get_state_timeline(
    profile: String,
    range: crate::domain::series::Range,
) -> Result<crate::domain::timeline::StateTimeline, ApiError> {
    service::authorized("get_state_timeline")?
        .engines
        .state_timeline(profile, range)
        .await
}

/// The profile's recent starts with their phase timelines, oldest first (at most 10).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_startup_history")]
pub async fn get_startup_history(profile: String) -> Result<Vec<crate::domain::phases::StartupRun>, ApiError> {
    service::authorized("get_startup_history")?
        .engines
        .startup_history(profile)
        .await
}
