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

pub mod accounts;
pub mod changes;
pub mod csrf;

pub use accounts::*;
pub use changes::*;

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
    /// Not signed in (or the session ended): the UI offers the sign-in page.
    #[error("sign in first: {0}")]
    Unauthorized(String),
    /// Signed in, but the role or the CSRF token does not allow this.
    #[error("not allowed: {0}")]
    Forbidden(String),
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
        fn act(&self, who: String, profile: String, action: EngineAction) -> BoxFut<'_, Result<(), ApiError>>;
        fn profiles(&self) -> BoxFut<'_, Result<Vec<ProfileSummary>, ApiError>>;
        fn profile(&self, name: String) -> BoxFut<'_, Result<ProfileView, ApiError>>;
        /// Starts smoke-toolcall (no bench request) or bench against a running profile.
        fn gate_start(
            &self,
            who: String,
            profile: String,
            bench: Option<BenchRequest>,
        ) -> BoxFut<'_, Result<(), ApiError>>;
        fn bench_runs(&self, profile: Option<String>, ids: Vec<i64>) -> BoxFut<'_, Result<Vec<BenchRun>, ApiError>>;
        fn last_smoke(&self, profile: String) -> BoxFut<'_, Result<Option<SmokeRun>, ApiError>>;
        /// Chart points of a profile over a range, oldest first.
        fn series(
            &self,
            profile: String,
            range: crate::domain::series::Range,
        ) -> BoxFut<'_, Result<Vec<crate::domain::series::Point>, ApiError>>;
        /// Opens an incident on a profile (evidence first); returns its id.
        fn incident_open(
            &self,
            who: String,
            profile: String,
            clients_see_errors: bool,
        ) -> BoxFut<'_, Result<i64, ApiError>>;
        fn incidents(&self) -> BoxFut<'_, Result<Vec<IncidentSummary>, ApiError>>;
        fn incident(&self, id: i64) -> BoxFut<'_, Result<Incident, ApiError>>;
        /// Starts one action with its reason; outcome and re-check arrive on the timeline.
        fn incident_act(
            &self,
            who: String,
            id: i64,
            action: Action,
            reason: String,
        ) -> BoxFut<'_, Result<(), ApiError>>;
        fn incident_note(&self, who: String, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn incident_resolve(&self, who: String, id: i64) -> BoxFut<'_, Result<(), ApiError>>;
        fn incident_postmortem(&self, who: String, id: i64, postmortem: Postmortem)
            -> BoxFut<'_, Result<(), ApiError>>;
        fn profile_editor(&self, name: String, change: Option<i64>) -> BoxFut<'_, Result<EditorData, ApiError>>;
        /// Checks an edited (unsaved) profile's flags against its installed engine.
        fn check_flags_text(&self, name: String, env_text: String) -> BoxFut<'_, Result<FlagCheck, ApiError>>;
        /// Account and session operations (signing in, setup, admin).
        fn accounts(&self) -> &dyn accounts::AccountService;
        /// Profile changes under review.
        fn changes(&self) -> &dyn changes::ChangeService;
        /// Journal entries, newest first, matching `query` when given.
        fn journal(&self, query: Option<String>) -> BoxFut<'_, Result<Vec<JournalEntry>, ApiError>>;
        fn journal_verify(&self) -> BoxFut<'_, Result<JournalCheck, ApiError>>;
        /// The engine's logged KV cache size against the calculator.
        fn vram_check(&self, profile: String) -> BoxFut<'_, Result<VramCheck, ApiError>>;
        /// The models under the models root, read for the VRAM calculator.
        fn models(&self) -> BoxFut<'_, Result<Vec<ModelInfo>, ApiError>>;
    }

    /// The handle server functions find in leptos context.
    #[derive(Clone)]
    pub struct Services(pub Arc<dyn ConsoleService>);

    pub fn services() -> Result<Services, ApiError> {
        use_context::<Services>().ok_or_else(|| ApiError::Internal("console services missing from context".into()))
    }

    /// The services, after checking the caller against `domain::auth::SERVER_FNS` for this
    /// endpoint. Server functions call this rather than [`services`]: pages rendered on the
    /// server call them directly, past the HTTP guard, and must be held to the same table.
    pub fn authorized(endpoint: &str) -> Result<Services, ApiError> {
        use crate::domain::auth::{access_for, Access};
        match access_for(endpoint) {
            None => Err(ApiError::Forbidden(format!("{endpoint} is not in the access table"))),
            Some(Access::Public) => services(),
            Some(Access::Role(needed)) => {
                let c = caller()?;
                if c.role.allows(needed) {
                    services()
                } else {
                    Err(ApiError::Forbidden(format!(
                        "{endpoint} needs the {} role; {} is {}",
                        needed.as_str(),
                        c.name,
                        c.role.as_str()
                    )))
                }
            }
        }
    }

    /// The request's parts, as leptos_axum provides them to server functions and pages.
    fn parts() -> Option<http::request::Parts> {
        use_context::<http::request::Parts>()
    }

    /// Who is calling: the request guard put the signed-in account on the request.
    pub fn caller() -> Result<Caller, ApiError> {
        parts()
            .and_then(|p| p.extensions.get::<Caller>().cloned())
            .ok_or_else(|| ApiError::Unauthorized("no session".into()))
    }

    /// The caller, if signed in.
    pub fn caller_opt() -> Option<Caller> {
        parts().and_then(|p| p.extensions.get::<Caller>().cloned())
    }

    /// The session token of this request (for signing out).
    pub fn session_token() -> Option<String> {
        parts().and_then(|p| p.extensions.get::<SessionToken>().map(|t| t.0.clone()))
    }

    /// The client's address, for the sign-in rate limit.
    pub fn client_addr() -> String {
        parts()
            .and_then(|p| p.extensions.get::<ClientAddr>().map(|a| a.0.clone()))
            .unwrap_or_default()
    }

    /// Adds `Set-Cookie` headers to the response.
    pub fn set_cookies(cookies: &[String]) {
        if let Some(r) = use_context::<leptos_axum::ResponseOptions>() {
            for c in cookies {
                if let Ok(v) = http::HeaderValue::from_str(c) {
                    r.append_header(http::header::SET_COOKIE, v);
                }
            }
        }
    }
}

/// Every engine the console knows, with its state.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "list_engines")]
pub async fn list_engines() -> Result<Vec<EngineStatus>, ApiError> {
    service::authorized("list_engines")?.0.engines().await
}

/// One engine's page data.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "get_engine")]
pub async fn get_engine(profile: String) -> Result<EngineDetail, ApiError> {
    service::authorized("get_engine")?.0.engine(profile).await
}

/// Serve, stop or restart an engine (confirmed by the operator in the UI).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "run_engine_action")]
pub async fn run_engine_action(profile: String, action: EngineAction) -> Result<(), ApiError> {
    service::authorized("run_engine_action")?
        .0
        .act(service::caller()?.name, profile, action)
        .await
}

/// All launch profiles.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "list_profiles")]
pub async fn list_profiles() -> Result<Vec<ProfileSummary>, ApiError> {
    service::authorized("list_profiles")?.0.profiles().await
}

/// One launch profile with its rendered command.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "get_profile")]
pub async fn get_profile(name: String) -> Result<ProfileView, ApiError> {
    service::authorized("get_profile")?.0.profile(name).await
}

/// Starts smoke-toolcall against a running engine.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "start_smoke")]
pub async fn start_smoke(profile: String) -> Result<(), ApiError> {
    service::authorized("start_smoke")?
        .0
        .gate_start(service::caller()?.name, profile, None)
        .await
}

/// Starts a bench run against a running engine.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "start_bench")]
pub async fn start_bench(profile: String, request: BenchRequest) -> Result<(), ApiError> {
    service::authorized("start_bench")?
        .0
        .gate_start(service::caller()?.name, profile, Some(request))
        .await
}

/// Stored bench runs, newest first: of one profile, or the given ids (for comparison).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "list_bench_runs")]
pub async fn list_bench_runs(profile: Option<String>, ids: Vec<i64>) -> Result<Vec<BenchRun>, ApiError> {
    service::authorized("list_bench_runs")?.0.bench_runs(profile, ids).await
}

/// The newest smoke-toolcall run of a profile, with every case and raw answer.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "get_last_smoke")]
pub async fn get_last_smoke(profile: String) -> Result<Option<SmokeRun>, ApiError> {
    service::authorized("get_last_smoke")?.0.last_smoke(profile).await
}

/// Chart points of an engine over a time range (15 min from memory, 1 h and 24 h from the
/// stored minute rollups). A stable endpoint, so scripts can read the history too.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "get_series")]
pub async fn get_series(
    profile: String,
    range: crate::domain::series::Range,
) -> Result<Vec<crate::domain::series::Point>, ApiError> {
    service::authorized("get_series")?.0.series(profile, range).await
}

use crate::domain::incident::{Incident, IncidentSummary, Postmortem};
use crate::domain::triage::Action;
use leptos::server_fn::codec::Json;

/// Opens an incident from the engine page: captures the evidence, then runs the triage.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "open_incident")]
pub async fn open_incident(profile: String, clients_see_errors: bool) -> Result<i64, ApiError> {
    service::authorized("open_incident")?
        .0
        .incident_open(service::caller()?.name, profile, clients_see_errors)
        .await
}

/// Incidents, newest first.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "list_incidents")]
pub async fn list_incidents() -> Result<Vec<IncidentSummary>, ApiError> {
    service::authorized("list_incidents")?.0.incidents().await
}

/// One incident with its evidence, diagnosis, timeline and postmortem.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "get_incident")]
pub async fn get_incident(id: i64) -> Result<Incident, ApiError> {
    service::authorized("get_incident")?.0.incident(id).await
}

/// One action of the wizard, with the operator's reason.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "incident_action", input = Json)]
pub async fn incident_action(id: i64, action: Action, reason: String) -> Result<(), ApiError> {
    service::authorized("incident_action")?
        .0
        .incident_act(service::caller()?.name, id, action, reason)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "incident_note")]
pub async fn incident_note(id: i64, text: String) -> Result<(), ApiError> {
    service::authorized("incident_note")?
        .0
        .incident_note(service::caller()?.name, id, text)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "resolve_incident")]
pub async fn resolve_incident(id: i64) -> Result<(), ApiError> {
    service::authorized("resolve_incident")?
        .0
        .incident_resolve(service::caller()?.name, id)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "save_postmortem", input = Json)]
pub async fn save_postmortem(id: i64, postmortem: Postmortem) -> Result<(), ApiError> {
    service::authorized("save_postmortem")?
        .0
        .incident_postmortem(service::caller()?.name, id, postmortem)
        .await
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

/// A running engine's own startup report of its KV cache against the calculator's prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VramCheck {
    /// GPU memory used for the prediction, and where it came from (`nvml`, `simulator`).
    pub gpu_gib: f64,
    pub gpu_source: String,
    pub predicted_tokens: u64,
    pub predicted_concurrency: f64,
    pub observed: crate::domain::vram::Observed,
    /// Prediction against the engine's "GPU KV cache size", in percent.
    pub error_pct: Option<f64>,
}

/// The KV cache check of a profile's engine; `Err` says why there is none (no driver, the
/// engine has not logged its size yet).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "get_vram_check")]
pub async fn get_vram_check(profile: String) -> Result<VramCheck, ApiError> {
    service::authorized("get_vram_check")?.0.vram_check(profile).await
}

/// Models under the configured models root (unreadable ones are skipped and logged).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "list_models")]
pub async fn list_models() -> Result<Vec<ModelInfo>, ApiError> {
    service::authorized("list_models")?.0.models().await
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

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "list_journal")]
pub async fn list_journal(query: Option<String>) -> Result<Vec<JournalEntry>, ApiError> {
    service::authorized("list_journal")?.0.journal(query).await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "verify_journal")]
pub async fn verify_journal() -> Result<JournalCheck, ApiError> {
    service::authorized("verify_journal")?.0.journal_verify().await
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
    /// Where editing starts: the active profile, or the change being reworked.
    pub env_text: String,
    /// The active profile, for the diff.
    pub active_env: String,
    /// The change being reworked, if any.
    pub change: Option<i64>,
    pub installs: Vec<InstallInfo>,
}

/// An edited profile's flags against the installed engine's own help.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlagCheck {
    pub version: String,
    pub unknown: Vec<crate::domain::help_flags::UnknownFlag>,
    pub bad_values: Vec<crate::domain::help_flags::BadValue>,
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "get_profile_editor")]
pub async fn get_profile_editor(name: String, change: Option<i64>) -> Result<EditorData, ApiError> {
    service::authorized("get_profile_editor")?
        .0
        .profile_editor(name, change)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "check_profile_flags")]
pub async fn check_profile_flags(name: String, env_text: String) -> Result<FlagCheck, ApiError> {
    service::authorized("check_profile_flags")?
        .0
        .check_flags_text(name, env_text)
        .await
}
