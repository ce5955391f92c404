//! Launch profiles: the list, one profile's view, and the editor's data and flag check.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use crate::domain::engine::EngineKind;
use crate::domain::profile::{Issue, Profile};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A row of the profile list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
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

#[cfg(feature = "ssr")]
pub use ssr::ProfileService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// Launch profiles: the list, one profile, and the editor's data and checks. Implemented by the server.
    pub trait ProfileService: Send + Sync {
        fn list(&self) -> BoxFut<'_, Result<Vec<ProfileSummary>, ApiError>>;
        fn get(&self, name: String) -> BoxFut<'_, Result<ProfileView, ApiError>>;
        fn editor(&self, name: String, change: Option<i64>) -> BoxFut<'_, Result<EditorData, ApiError>>;
        /// What an installation's own `--help` says about each profile key's flag.
        fn editor_help(&self, install: String) -> BoxFut<'_, Result<EditorHelp, ApiError>>;
        /// Checks an edited (unsaved) profile's flags against its installed engine.
        fn check_flags(&self, name: String, env_text: String) -> BoxFut<'_, Result<FlagCheck, ApiError>>;
        /// The upgrade preflight of an edited profile against the stored one's installation.
        fn upgrade_check(
            &self,
            name: String,
            env_text: String,
        ) -> BoxFut<'_, Result<crate::domain::upgrade::UpgradeCheck, ApiError>>;
    }
}

/// All launch profiles.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_profiles")]
pub async fn list_profiles() -> Result<Vec<ProfileSummary>, ApiError> {
    service::authorized("list_profiles")?.profiles.list().await
}

/// One launch profile with its rendered command.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_profile")]
pub async fn get_profile(name: String) -> Result<ProfileView, ApiError> {
    service::authorized("get_profile")?.profiles.get(name).await
}

/// An engine installation as the editor needs it: its kind and the command argv starts with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct InstallInfo {
    pub name: String,
    pub kind: EngineKind,
    pub simulator: bool,
    pub command: Vec<String>,
}

/// The editor's starting point: the active profile file and the installations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct FlagCheck {
    pub version: String,
    pub unknown: Vec<crate::domain::help_flags::UnknownFlag>,
    pub bad_values: Vec<crate::domain::help_flags::BadValue>,
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_profile_editor")]
pub async fn get_profile_editor(name: String, change: Option<i64>) -> Result<EditorData, ApiError> {
    service::authorized("get_profile_editor")?
        .profiles
        .editor(name, change)
        .await
}

/// The upgrade preflight of the editor's text of a stored profile: its flags on the
/// installation the text names, against the installation the stored profile runs on.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "upgrade_check")]
pub async fn upgrade_check(
    profile: String,
    env_text: String,
) -> Result<crate::domain::upgrade::UpgradeCheck, ApiError> {
    service::authorized("upgrade_check")?
        .profiles
        .upgrade_check(profile, env_text)
        .await
}

/// What the installed engine documents for the flag one profile key sets: its help text and
/// default as the engine prints them, and the values it lists, if it lists them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct FieldHelp {
    pub key: String,
    pub flag: String,
    pub help: String,
    pub default: Option<String>,
    pub choices: Vec<String>,
    pub deprecated: bool,
}

/// The editor's help for one installation, read from its `--help` (cached per version).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct EditorHelp {
    pub install: String,
    pub version: String,
    pub fields: Vec<FieldHelp>,
}

impl EditorHelp {
    /// Each profile key's flag found in the parsed help, in the flag map's order. A key whose
    /// flag this version does not list gets no entry (the flag check names it as unknown).
    pub fn from_flags(
        install: &str,
        version: &str,
        kind: EngineKind,
        flags: &crate::domain::help_flags::FlagSet,
    ) -> Self {
        let fields = crate::domain::flagmap::FLAG_MAP
            .iter()
            .filter_map(|row| {
                let key = row.key?;
                let flag = row.flag(kind)?;
                let found = flags.find(flag)?;
                Some(FieldHelp {
                    key: key.to_string(),
                    flag: flag.to_string(),
                    help: found.help.chars().take(600).collect(),
                    default: found.default.clone().filter(|d| d != "None"),
                    choices: found.choices().unwrap_or_default().into_iter().take(200).collect(),
                    deprecated: found.deprecated,
                })
            })
            .collect();
        Self {
            install: install.to_string(),
            version: version.to_string(),
            fields,
        }
    }

    pub fn field(&self, key: &str) -> Option<&FieldHelp> {
        self.fields.iter().find(|f| f.key == key)
    }
}

/// The editor's per-field help from an installation's own `--help` (operators and up: it may
/// run the engine's help once per version).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "editor_flag_help")]
pub async fn editor_flag_help(install: String) -> Result<EditorHelp, ApiError> {
    service::authorized("editor_flag_help")?
        .profiles
        .editor_help(install)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "check_profile_flags")]
pub async fn check_profile_flags(name: String, env_text: String) -> Result<FlagCheck, ApiError> {
    service::authorized("check_profile_flags")?
        .profiles
        .check_flags(name, env_text)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the real vLLM 0.33 and SGLang 0.5.23 help texts (testdata/help).
    #[test]
    fn the_editor_help_reads_each_keys_flag_from_the_engines_own_help() {
        let vllm = crate::domain::help_flags::parse_help(include_str!(
            "../../../testdata/help/vllm-0.33.0-serve-help-all.txt"
        ));
        let h = EditorHelp::from_flags("vllm-0-33", "0.33.0", EngineKind::Vllm, &vllm);
        let mem = h.field("MEM_FRACTION").unwrap();
        assert_eq!(mem.flag, "--gpu-memory-utilization");
        assert!(mem.help.starts_with("The fraction of GPU memory"), "{}", mem.help);
        assert_eq!(mem.default.as_deref(), Some("0.92"));
        let parsers = &h.field("TOOL_CALL_PARSER").unwrap().choices;
        assert!(
            parsers.contains(&"hermes".to_string()) && parsers.contains(&"llama3_json".to_string()),
            "{parsers:?}"
        );
        assert!(h.field("KV_CACHE_DTYPE").unwrap().choices.contains(&"fp8".to_string()));
        assert_eq!(h.field("TENSOR_PARALLEL").unwrap().flag, "--tensor-parallel-size");
        // vLLM takes the model positionally: no flag, no entry.
        assert!(h.field("MODEL").is_none());

        let sglang = crate::domain::help_flags::parse_help(include_str!(
            "../../../testdata/help/sglang-0.5.23-launch-server-help.txt"
        ));
        let h = EditorHelp::from_flags("sglang-0-5", "0.5.23", EngineKind::Sglang, &sglang);
        assert_eq!(h.field("MEM_FRACTION").unwrap().flag, "--mem-fraction-static");
        assert_eq!(h.field("MODEL").unwrap().flag, "--model-path");
        assert!(!h.field("TOOL_CALL_PARSER").unwrap().choices.is_empty());
    }
}
