//! The console's API as the UI sees it: data shapes, typed errors, and server functions.
//!
//! Server functions stay thin: they forward to a [`service::ConsoleService`] that the `server`
//! crate implements and provides through leptos context, because `app` cannot depend on
//! `server`. Plain JSON routes and the SSE streams live in `server` and reuse these shapes.

use crate::domain::{
    bench::{BenchParams, BenchProgress, BenchSummary},
    engine::{EngineKind, EngineStatus},
    profile::{Issue, Profile},
    toolcall::SmokeReport,
};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What the operator asks of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// Errors a server function can return, each one a thing the UI can explain.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum ApiError {
    #[error("no profile named {0}")]
    NoSuchProfile(String),
    #[error("profile {profile} names engine installation {engine}, which host configuration does not define")]
    NoSuchEngine { profile: String, engine: String },
    #[error("port {port} is in use by {owner}")]
    PortBusy { port: u16, owner: String },
    #[error("{0}")]
    Invalid(String),
    #[error("internal error: {0}")]
    Internal(String),
    #[error("request failed: {0}")]
    Transport(String),
}

impl leptos::server_fn::error::FromServerFnError for ApiError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;
    fn from_server_fn_error(value: leptos::server_fn::error::ServerFnErrorErr) -> Self {
        Self::Transport(value.to_string())
    }
}

/// The engine page's data: status, the exact command line, the recent log, and the gate
/// steps (smoke-toolcall, bench) in progress or last run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineDetail {
    pub status: EngineStatus,
    pub argv: Vec<String>,
    pub log_tail: Vec<String>,
    pub log_path: String,
    pub gate: Option<GateStatus>,
    /// This host's GPUs, with our engines' processes marked.
    pub gpu: crate::domain::gpu::GpuState,
}

/// Which gate step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateKind {
    Smoke,
    Bench,
}

/// A gate step started from the console, while it runs and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateStatus {
    pub kind: GateKind,
    pub running: bool,
    pub progress: BenchProgress,
    pub error: Option<String>,
    /// The stored run, once finished.
    pub result_id: Option<i64>,
    pub passed: Option<bool>,
}

/// What the engine page's bench form asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchRequest {
    pub requests: usize,
    pub concurrency: usize,
    pub input_len: usize,
    pub output_len: u32,
}

/// A stored bench run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmokeRun {
    pub id: i64,
    pub created_at: String,
    pub passed: bool,
    pub report: SmokeReport,
}

/// One push on an engine page's event stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineEvent {
    pub status: EngineStatus,
    /// New log lines since the previous event.
    pub lines: Vec<String>,
    /// True when the log was truncated or rotated and the client should replace its tail.
    pub reset: bool,
    pub gate: Option<GateStatus>,
    /// New chart points since the previous event (the stream's first event has the last ones).
    #[serde(default)]
    pub points: Vec<crate::domain::series::Point>,
    /// The GPUs, when they changed since the previous event.
    #[serde(default)]
    pub gpu: Option<crate::domain::gpu::GpuState>,
}

/// A row of the profile list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileSummary {
    pub name: String,
    pub engine: String,
    pub kind: Option<EngineKind>,
    pub simulated: bool,
    pub model: String,
    pub port: u16,
    pub updated_at: String,
}

/// The read-only profile view: the profile, its file form and the command it renders to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileView {
    pub profile: Profile,
    pub kind: Option<EngineKind>,
    pub simulated: bool,
    pub env_text: String,
    pub argv: Vec<String>,
    pub issues: Vec<Issue>,
    /// SGLang speculative keys that have no flag there.
    pub untranslated: Vec<String>,
    pub updated_at: String,
}

#[cfg(feature = "ssr")]
pub mod service {
    //! The seam between the UI's server functions and the server's implementation.
    use super::*;
    use std::{future::Future, pin::Pin, sync::Arc};

    /// A boxed future, so the trait stays object-safe.
    pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

    /// What the console can do; implemented in `server` over engine control and SQLite.
    pub trait ConsoleService: Send + Sync + 'static {
        fn engines(&self) -> BoxFut<'_, Result<Vec<EngineStatus>, ApiError>>;
        fn engine(&self, profile: String) -> BoxFut<'_, Result<EngineDetail, ApiError>>;
        /// Starts the action and returns once it is under way; progress arrives as status.
        fn act(&self, profile: String, action: EngineAction) -> BoxFut<'_, Result<(), ApiError>>;
        fn profiles(&self) -> BoxFut<'_, Result<Vec<ProfileSummary>, ApiError>>;
        fn profile(&self, name: String) -> BoxFut<'_, Result<ProfileView, ApiError>>;
        /// Starts smoke-toolcall (no bench request) or bench against a running profile.
        fn gate_start(&self, profile: String, bench: Option<BenchRequest>) -> BoxFut<'_, Result<(), ApiError>>;
        fn bench_runs(&self, profile: Option<String>, ids: Vec<i64>) -> BoxFut<'_, Result<Vec<BenchRun>, ApiError>>;
        fn last_smoke(&self, profile: String) -> BoxFut<'_, Result<Option<SmokeRun>, ApiError>>;
        /// Chart points of a profile over a range, oldest first.
        fn series(
            &self,
            profile: String,
            range: crate::domain::series::Range,
        ) -> BoxFut<'_, Result<Vec<crate::domain::series::Point>, ApiError>>;
        /// Opens an incident on a profile (evidence first); returns its id.
        fn incident_open(&self, profile: String, clients_see_errors: bool) -> BoxFut<'_, Result<i64, ApiError>>;
        fn incidents(&self) -> BoxFut<'_, Result<Vec<IncidentSummary>, ApiError>>;
        fn incident(&self, id: i64) -> BoxFut<'_, Result<Incident, ApiError>>;
        /// Starts one action with its reason; outcome and re-check arrive on the timeline.
        fn incident_act(&self, id: i64, action: Action, reason: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn incident_note(&self, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn incident_resolve(&self, id: i64) -> BoxFut<'_, Result<(), ApiError>>;
        fn incident_postmortem(&self, id: i64, postmortem: Postmortem) -> BoxFut<'_, Result<(), ApiError>>;
        fn profile_editor(&self, name: String) -> BoxFut<'_, Result<EditorData, ApiError>>;
        /// Checks an edited (unsaved) profile's flags against its installed engine.
        fn check_flags_text(&self, name: String, env_text: String) -> BoxFut<'_, Result<FlagCheck, ApiError>>;
        /// Saves an edited profile with the reason, into the change journal.
        fn save_profile(&self, name: String, env_text: String, reason: String) -> BoxFut<'_, Result<(), ApiError>>;
        /// Journal entries, newest first, matching `query` when given.
        fn journal(&self, query: Option<String>) -> BoxFut<'_, Result<Vec<JournalEntry>, ApiError>>;
        fn journal_verify(&self) -> BoxFut<'_, Result<JournalCheck, ApiError>>;
        /// The models under the models root, read for the VRAM calculator.
        fn models(&self) -> BoxFut<'_, Result<Vec<ModelInfo>, ApiError>>;
    }

    /// The handle server functions find in leptos context.
    #[derive(Clone)]
    pub struct Services(pub Arc<dyn ConsoleService>);

    pub fn services() -> Result<Services, ApiError> {
        use_context::<Services>().ok_or_else(|| ApiError::Internal("console services missing from context".into()))
    }
}

/// Every engine the console knows, with its state.
#[server(prefix = "/api/fn")]
pub async fn list_engines() -> Result<Vec<EngineStatus>, ApiError> {
    service::services()?.0.engines().await
}

/// One engine's page data.
#[server(prefix = "/api/fn")]
pub async fn get_engine(profile: String) -> Result<EngineDetail, ApiError> {
    service::services()?.0.engine(profile).await
}

/// Serve, stop or restart an engine (confirmed by the operator in the UI).
#[server(prefix = "/api/fn")]
pub async fn run_engine_action(profile: String, action: EngineAction) -> Result<(), ApiError> {
    service::services()?.0.act(profile, action).await
}

/// All launch profiles.
#[server(prefix = "/api/fn")]
pub async fn list_profiles() -> Result<Vec<ProfileSummary>, ApiError> {
    service::services()?.0.profiles().await
}

/// One launch profile with its rendered command.
#[server(prefix = "/api/fn")]
pub async fn get_profile(name: String) -> Result<ProfileView, ApiError> {
    service::services()?.0.profile(name).await
}

/// Starts smoke-toolcall against a running engine.
#[server(prefix = "/api/fn")]
pub async fn start_smoke(profile: String) -> Result<(), ApiError> {
    service::services()?.0.gate_start(profile, None).await
}

/// Starts a bench run against a running engine.
#[server(prefix = "/api/fn")]
pub async fn start_bench(profile: String, request: BenchRequest) -> Result<(), ApiError> {
    service::services()?.0.gate_start(profile, Some(request)).await
}

/// Stored bench runs, newest first: of one profile, or the given ids (for comparison).
#[server(prefix = "/api/fn")]
pub async fn list_bench_runs(profile: Option<String>, ids: Vec<i64>) -> Result<Vec<BenchRun>, ApiError> {
    service::services()?.0.bench_runs(profile, ids).await
}

/// The newest smoke-toolcall run of a profile, with every case and raw answer.
#[server(prefix = "/api/fn")]
pub async fn get_last_smoke(profile: String) -> Result<Option<SmokeRun>, ApiError> {
    service::services()?.0.last_smoke(profile).await
}

/// Chart points of an engine over a time range (15 min from memory, 1 h and 24 h from the
/// stored minute rollups). A stable endpoint, so scripts can read the history too.
#[server(prefix = "/api/fn", endpoint = "get_series")]
pub async fn get_series(
    profile: String,
    range: crate::domain::series::Range,
) -> Result<Vec<crate::domain::series::Point>, ApiError> {
    service::services()?.0.series(profile, range).await
}

use crate::domain::incident::{Incident, IncidentSummary, Postmortem};
use crate::domain::triage::Action;
use leptos::server_fn::codec::Json;

/// Opens an incident from the engine page: captures the evidence, then runs the triage.
#[server(prefix = "/api/fn", endpoint = "open_incident")]
pub async fn open_incident(profile: String, clients_see_errors: bool) -> Result<i64, ApiError> {
    service::services()?.0.incident_open(profile, clients_see_errors).await
}

/// Incidents, newest first.
#[server(prefix = "/api/fn", endpoint = "list_incidents")]
pub async fn list_incidents() -> Result<Vec<IncidentSummary>, ApiError> {
    service::services()?.0.incidents().await
}

/// One incident with its evidence, diagnosis, timeline and postmortem.
#[server(prefix = "/api/fn", endpoint = "get_incident")]
pub async fn get_incident(id: i64) -> Result<Incident, ApiError> {
    service::services()?.0.incident(id).await
}

/// One action of the wizard, with the operator's reason.
#[server(prefix = "/api/fn", endpoint = "incident_action", input = Json)]
pub async fn incident_action(id: i64, action: Action, reason: String) -> Result<(), ApiError> {
    service::services()?.0.incident_act(id, action, reason).await
}

#[server(prefix = "/api/fn", endpoint = "incident_note")]
pub async fn incident_note(id: i64, text: String) -> Result<(), ApiError> {
    service::services()?.0.incident_note(id, text).await
}

#[server(prefix = "/api/fn", endpoint = "resolve_incident")]
pub async fn resolve_incident(id: i64) -> Result<(), ApiError> {
    service::services()?.0.incident_resolve(id).await
}

#[server(prefix = "/api/fn", endpoint = "save_postmortem", input = Json)]
pub async fn save_postmortem(id: i64, postmortem: Postmortem) -> Result<(), ApiError> {
    service::services()?.0.incident_postmortem(id, postmortem).await
}

/// A model directory under the models root, as the VRAM calculator needs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    pub shape: crate::domain::vram::ModelShape,
    pub weights_bytes: u64,
    /// `index`, `headers` or `estimated`.
    pub weights_source: String,
}

/// Models under the configured models root (unreadable ones are skipped and logged).
#[server(prefix = "/api/fn", endpoint = "list_models")]
pub async fn list_models() -> Result<Vec<ModelInfo>, ApiError> {
    service::services()?.0.models().await
}

/// One entry of the change journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub seq: i64,
    pub at: String,
    pub who: String,
    /// `serve`, `stop`, `restart`, `profile-import`, `profile-change`, `incident-action`,
    /// `gate-smoke`, `gate-bench`.
    pub kind: String,
    /// The profile (or other object) it is about.
    pub subject: String,
    pub reason: String,
    pub detail: serde_json::Value,
    pub prev_hash: String,
    pub hash: String,
}

/// The result of walking the journal's hash chain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalCheck {
    pub entries: usize,
    /// The first entry that does not hold, and why.
    pub broken: Option<(i64, String)>,
}

#[server(prefix = "/api/fn", endpoint = "list_journal")]
pub async fn list_journal(query: Option<String>) -> Result<Vec<JournalEntry>, ApiError> {
    service::services()?.0.journal(query).await
}

#[server(prefix = "/api/fn", endpoint = "verify_journal")]
pub async fn verify_journal() -> Result<JournalCheck, ApiError> {
    service::services()?.0.journal_verify().await
}

/// An engine installation as the editor needs it: its kind and the command argv starts with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstallInfo {
    pub name: String,
    pub kind: EngineKind,
    pub simulator: bool,
    pub command: Vec<String>,
}

/// The editor's starting point: the active profile file and the installations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EditorData {
    pub name: String,
    pub env_text: String,
    pub installs: Vec<InstallInfo>,
}

/// An edited profile's flags against the installed engine's own help.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlagCheck {
    pub version: String,
    pub unknown: Vec<crate::domain::help_flags::UnknownFlag>,
    pub bad_values: Vec<crate::domain::help_flags::BadValue>,
}

#[server(prefix = "/api/fn", endpoint = "get_profile_editor")]
pub async fn get_profile_editor(name: String) -> Result<EditorData, ApiError> {
    service::services()?.0.profile_editor(name).await
}

#[server(prefix = "/api/fn", endpoint = "check_profile_flags")]
pub async fn check_profile_flags(name: String, env_text: String) -> Result<FlagCheck, ApiError> {
    service::services()?.0.check_flags_text(name, env_text).await
}

#[server(prefix = "/api/fn", endpoint = "save_profile")]
pub async fn save_profile(name: String, env_text: String, reason: String) -> Result<(), ApiError> {
    service::services()?.0.save_profile(name, env_text, reason).await
}
