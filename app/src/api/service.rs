//! The seam between the UI's server functions and the server's implementation.

use super::*;
use crate::domain::engine::EngineStatus;
use crate::domain::incident::{Incident, IncidentSummary, Postmortem};
use crate::domain::triage::Action;
use leptos::prelude::*;
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
    fn run_start(&self, who: String, profile: String, bench: Option<BenchRequest>) -> BoxFut<'_, Result<(), ApiError>>;
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
    fn incident_act(&self, who: String, id: i64, action: Action, reason: String) -> BoxFut<'_, Result<(), ApiError>>;
    fn incident_note(&self, who: String, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>>;
    fn incident_resolve(&self, who: String, id: i64) -> BoxFut<'_, Result<(), ApiError>>;
    fn incident_postmortem(&self, who: String, id: i64, postmortem: Postmortem) -> BoxFut<'_, Result<(), ApiError>>;
    fn profile_editor(&self, name: String, change: Option<i64>) -> BoxFut<'_, Result<EditorData, ApiError>>;
    /// What an installation's own `--help` says about each profile key's flag.
    fn editor_help(&self, install: String) -> BoxFut<'_, Result<EditorHelp, ApiError>>;
    /// Checks an edited (unsaved) profile's flags against its installed engine.
    fn check_flags_text(&self, name: String, env_text: String) -> BoxFut<'_, Result<FlagCheck, ApiError>>;
    /// The upgrade preflight of an edited profile against the stored one's installation.
    fn upgrade_check_text(
        &self,
        name: String,
        env_text: String,
    ) -> BoxFut<'_, Result<crate::domain::upgrade::UpgradeCheck, ApiError>>;
    /// Account and session operations (signing in, setup, admin).
    fn accounts(&self) -> &dyn accounts::AccountService;
    /// Profile changes under review.
    fn changes(&self) -> &dyn changes::ChangeService;
    /// Journal entries, newest first, matching `query` when given.
    fn journal(&self, query: Option<String>) -> BoxFut<'_, Result<Vec<JournalEntry>, ApiError>>;
    fn journal_verify(&self) -> BoxFut<'_, Result<JournalCheck, ApiError>>;
    /// Why the journal refuses appends (its table does not reach the anchor), if it does:
    /// every page's header shows it.
    fn journal_alarm(&self) -> BoxFut<'_, Option<String>>;
    /// The profile's recent starts and their phases.
    fn startup_history(&self, profile: String) -> BoxFut<'_, Result<Vec<crate::domain::phases::StartupRun>, ApiError>>;
    fn state_timeline(
        &self,
        profile: String,
        range: crate::domain::series::Range,
    ) -> BoxFut<'_, Result<crate::domain::timeline::StateTimeline, ApiError>>;
    /// The engine's logged KV cache size against the calculator.
    fn vram_check(&self, profile: String) -> BoxFut<'_, Result<VramCheck, ApiError>>;
    fn predict_vram(&self, profile: String, env_text: Option<String>) -> BoxFut<'_, Result<VramPrediction, ApiError>>;
    fn start_model_verify(&self, who: String, name: String) -> BoxFut<'_, Result<(), ApiError>>;
    fn model_verify(&self, name: String) -> BoxFut<'_, Result<ModelVerifyState, ApiError>>;
    /// The models under the models root, read for the VRAM calculator.
    fn models(&self) -> BoxFut<'_, Result<Vec<ModelInfo>, ApiError>>;
    /// This host's GPUs as the VRAM calculator takes them.
    fn host_gpus(&self) -> BoxFut<'_, Result<Vec<super::HostGpu>, ApiError>>;
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

/// The path of the page being rendered (none outside a request).
pub fn request_path() -> Option<String> {
    parts().map(|p| p.uri.path().to_string())
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
