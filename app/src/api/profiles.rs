//! Launch profiles: the list, one profile's view, and the editor's data and flag check.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use crate::domain::engine::EngineKind;
use crate::domain::profile::{Issue, Profile};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

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
    /// The set this profile last started well on (pinned versions, the gate's bench).
    #[serde(default)]
    pub known_good: Option<crate::domain::pins::KnownGood>,
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

/// The upgrade preflight of the editor's text of a stored profile: its flags on the
/// installation the text names, against the installation the stored profile runs on.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "upgrade_check")]
pub async fn upgrade_check(
    profile: String,
    env_text: String,
) -> Result<crate::domain::upgrade::UpgradeCheck, ApiError> {
    service::authorized("upgrade_check")?
        .0
        .upgrade_check_text(profile, env_text)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "check_profile_flags")]
pub async fn check_profile_flags(name: String, env_text: String) -> Result<FlagCheck, ApiError> {
    service::authorized("check_profile_flags")?
        .0
        .check_flags_text(name, env_text)
        .await
}
