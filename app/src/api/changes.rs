//! Profile changes in the API: propose (draft or submitted), review, gate, roll back.
//! The state machine is `domain::review`; the server applies it and keeps the record.

use super::{csrf::CsrfClient, ApiError};
use crate::domain::review::{ChangeAction, ChangeState, GateReport, GateThresholds};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A row of the change list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct ChangeSummary {
    pub id: i64,
    pub profile: String,
    pub author: String,
    pub state: ChangeState,
    pub reason: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A comment or a state change on a change, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct ChangeEvent {
    pub who: String,
    /// `drafted`, `submitted`, `approved`, `changes-requested`, `withdrawn`, `gate-started`,
    /// `gate-passed`, `gate-failed`, `rolled-back`.
    pub kind: String,
    pub text: String,
    pub at: String,
}

/// A change's command lines and extra flags as one host's configuration renders them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct LaunchView {
    pub argv_before: Vec<String>,
    pub argv_after: Vec<String>,
    pub extra_flags: Vec<crate::domain::launch::FlagClass>,
}

/// One change with everything its page shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct ChangeView {
    pub summary: ChangeSummary,
    /// The active profile the change was written against.
    pub base_env: String,
    /// The candidate profile.
    pub env: String,
    /// `-old` / `+new` lines, base to candidate.
    pub diff: Vec<String>,
    /// The keys the change touches with their values before and after (`None` when either
    /// text does not parse: then only the line diff says what changed).
    pub keys: Option<Vec<crate::domain::envfile::KeyChange>>,
    /// What the console executes for the active profile and for the candidate (empty when a
    /// text does not parse or names no installation of this host).
    pub argv_before: Vec<String>,
    pub argv_after: Vec<String>,
    /// What the launch policy read each of the candidate's `EXTRA_ARGS` flags as, against
    /// the installed engine's help (`switch`, `number`, `choice`, `checked`, `allowed`).
    pub extra_flags: Vec<crate::domain::launch::FlagClass>,
    /// The host whose configuration rendered the command lines and flags: the one that runs
    /// the profile's engine (`None`: this console, which runs it or where none runs).
    pub rendered_by: Option<String>,
    /// Why the engine's host did not render them (the page then shows this console's).
    pub render_note: Option<String>,
    /// The active profile has moved on since the change was written.
    pub stale: bool,
    pub events: Vec<ChangeEvent>,
    pub gate: Option<GateReport>,
    pub thresholds: GateThresholds,
    /// The steps the caller may take now.
    pub allowed: Vec<ChangeAction>,
    /// SHA-256 of the candidate profile text (canonical form): what an approval approves.
    /// Approve and request-changes carry it back and are refused when it no longer matches.
    pub content_hash: String,
}

#[cfg(feature = "ssr")]
pub use ssr::*;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::{service::BoxFut, Caller};

    /// Profile changes; implemented by the server over SQLite and engine control.
    pub trait ChangeService: Send + Sync {
        fn list(&self, profile: Option<String>) -> BoxFut<'_, Result<Vec<ChangeSummary>, ApiError>>;
        fn get(&self, caller: Caller, id: i64) -> BoxFut<'_, Result<ChangeView, ApiError>>;
        fn propose(
            &self,
            caller: Caller,
            id: Option<i64>,
            profile: String,
            env_text: String,
            reason: String,
            submit: bool,
        ) -> BoxFut<'_, Result<i64, ApiError>>;
        fn review(
            &self,
            caller: Caller,
            id: i64,
            approve: bool,
            comment: String,
            content_hash: String,
        ) -> BoxFut<'_, Result<(), ApiError>>;
        fn withdraw(&self, caller: Caller, id: i64, comment: String) -> BoxFut<'_, Result<(), ApiError>>;
        /// A comment in the change's history, without a step.
        fn comment(&self, caller: Caller, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>>;
        /// Starts the gate; it runs on in the background and reports into the change.
        fn start_gate(&self, caller: Caller, id: i64) -> BoxFut<'_, Result<(), ApiError>>;
        fn rollback(&self, caller: Caller, id: i64, reason: String) -> BoxFut<'_, Result<(), ApiError>>;
    }
}

#[cfg(feature = "ssr")]
fn changes(endpoint: &str) -> Result<(crate::api::service::Services, super::Caller), ApiError> {
    Ok((
        crate::api::service::authorized(endpoint)?,
        crate::api::service::caller()?,
    ))
}

/// Changes, newest first (of one profile when given).
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "list_changes")]
pub async fn list_changes(profile: Option<String>) -> Result<Vec<ChangeSummary>, ApiError> {
    crate::api::service::authorized("list_changes")?
        .changes
        .list(profile)
        .await
}

#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "get_change")]
pub async fn get_change(id: i64) -> Result<ChangeView, ApiError> {
    let (s, c) = changes("get_change")?;
    s.changes.get(c, id).await
}

/// Saves a proposed profile (a new change when `id` is none); `submit` sends it for review,
/// which needs a reason. Returns the change's id.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "propose_change")]
pub async fn propose_change(
    id: Option<i64>,
    profile: String,
    env_text: String,
    reason: String,
    submit: bool,
) -> Result<i64, ApiError> {
    let (s, c) = changes("propose_change")?;
    s.changes.propose(c, id, profile, env_text, reason, submit).await
}

/// Approves (or sends back, with a comment) a submitted change; never the author's own. The
/// content hash is the one the reviewer saw: a change edited since is not approved.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "review_change")]
pub async fn review_change(id: i64, approve: bool, comment: String, content_hash: String) -> Result<(), ApiError> {
    let (s, c) = changes("review_change")?;
    s.changes.review(c, id, approve, comment, content_hash).await
}

/// Adds a comment to a change's history (the discussion around a review).
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "comment_change")]
pub async fn comment_change(id: i64, text: String) -> Result<(), ApiError> {
    let (s, c) = changes("comment_change")?;
    s.changes.comment(c, id, text).await
}

#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "withdraw_change")]
pub async fn withdraw_change(id: i64, comment: String) -> Result<(), ApiError> {
    let (s, c) = changes("withdraw_change")?;
    s.changes.withdraw(c, id, comment).await
}

/// Serves the approved candidate and checks health, smoke-toolcall and bench thresholds.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "start_change_gate")]
pub async fn start_change_gate(id: i64) -> Result<(), ApiError> {
    let (s, c) = changes("start_change_gate")?;
    s.changes.start_gate(c, id).await
}

/// Puts the profile back as it was before this change, and restarts a running engine.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "rollback_change")]
pub async fn rollback_change(id: i64, reason: String) -> Result<(), ApiError> {
    let (s, c) = changes("rollback_change")?;
    s.changes.rollback(c, id, reason).await
}
