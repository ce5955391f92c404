//! Launch profiles, the feature: the list, one profile as the console will run it, and what the
//! editor needs (the installations, the engine's own help, the flag check and the upgrade
//! preflight of text not saved yet). The web edge and the CLI call these; review proposes
//! changes to profiles but never edits one here.

use crate::context::Context;
use app::api::{EditorData, EditorHelp, FlagCheck, InstallInfo, ProfileSummary, ProfileView};
use app::domain::engine::EngineKind;
use app::domain::flagmap::{render_argv, untranslatable_speculative_keys};
use app::domain::profile::{Issue, IssueKind, Profile, Severity};

/// Why a profile use-case failed, in words that name the profile, field or flag.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("no profile named {0:?}")]
    NoSuchProfile(String),
    /// The edited text, the installation it names or the engine's flags refuse it.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// Why an import refused a profile file: every issue, each naming its field (and line where
/// the file has one).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("the profile is refused: {}", .0.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; "))]
    Refused(Vec<Issue>),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// What an import did: stored a new profile or updated one, and the file's warnings.
#[derive(Debug)]
pub struct Imported {
    pub new: bool,
    pub warnings: Vec<Issue>,
}

/// The 1-based line of the file that sets `field`, if one does.
fn line_of(text: &str, field: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.trim_start().starts_with(field))
        .map(|l| l + 1)
}

/// The most text a profile may be (the editor's, a file's): a profile is a few hundred bytes.
pub const MAX_PROFILE_BYTES: usize = 64 * 1024;

/// Refuses text past [`MAX_PROFILE_BYTES`] before anything reads it.
fn bounded(text: &str) -> Result<(), Vec<Issue>> {
    if text.len() <= MAX_PROFILE_BYTES {
        return Ok(());
    }
    Err(vec![Issue {
        field: "profile".into(),
        line: None,
        severity: Severity::Error,
        kind: IssueKind::Syntax {
            detail: format!("over {MAX_PROFILE_BYTES} bytes, the most a profile may be"),
        },
    }])
}

/// An edited profile's text as a profile, refused with every issue when it does not parse; a
/// name that is not a profile name is no profile at all.
pub fn parse(name: &str, env_text: &str) -> Result<Profile, ProfileError> {
    if !app::domain::profile::valid_name(name) {
        return Err(ProfileError::NoSuchProfile(name.to_string()));
    }
    bounded(env_text)
        .and_then(|()| Profile::from_env(name, env_text))
        .map(|(p, _)| p)
        .map_err(|issues| ProfileError::Invalid(issues.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; ")))
}

/// The profiles of this console, over its engine control and store.
#[derive(Clone)]
pub struct Profiles {
    ctx: Context,
}

impl Profiles {
    pub fn new(ctx: Context) -> Self {
        Self { ctx }
    }

    /// Imports a profile file's text as `name`: refused when it does not parse, names an
    /// installation this host does not have, or breaks the host's policy (what code an engine
    /// may load is host configuration); stored otherwise, and journaled with its diff when the
    /// content changed (`source` says where it came from).
    pub async fn import(&self, who: &str, name: &str, text: &str, source: &str) -> Result<Imported, ImportError> {
        let (profile, warnings) = bounded(text)
            .and_then(|()| Profile::from_env(name, text))
            .map_err(ImportError::Refused)?;
        if self.ctx.data.engine(&profile.engine).is_none() {
            return Err(ImportError::Refused(vec![Issue {
                field: "ENGINE".into(),
                line: line_of(text, "ENGINE"),
                severity: Severity::Error,
                kind: IssueKind::UnknownEngine {
                    value: profile.engine.clone(),
                },
            }]));
        }
        let refused = self.ctx.control.policy_issues(&profile).await;
        if !refused.is_empty() {
            return Err(ImportError::Refused(
                refused
                    .into_iter()
                    .map(|i| Issue {
                        line: line_of(text, &i.field),
                        ..i
                    })
                    .collect(),
            ));
        }
        let before = self
            .ctx
            .store
            .get(name)
            .await
            .map_err(anyhow::Error::from)?
            .map(|s| s.profile.to_env());
        let new = self.ctx.store.upsert(&profile).await.map_err(anyhow::Error::from)?;
        let diff = crate::journal::env_diff(before.as_deref().unwrap_or(""), &profile.to_env());
        if !diff.is_empty() {
            self.ctx
                .journal
                .record(
                    who,
                    if new { "profile-import" } else { "profile-change" },
                    name,
                    &format!("imported from {source}"),
                    serde_json::json!({"diff": diff}),
                )
                .await;
        }
        Ok(Imported { new, warnings })
    }

    /// A stored profile.
    async fn stored(&self, name: &str) -> Result<crate::profile_store::StoredProfile, ProfileError> {
        self.ctx
            .store
            .get(name)
            .await
            .map_err(anyhow::Error::from)?
            .ok_or_else(|| ProfileError::NoSuchProfile(name.to_string()))
    }

    /// A profile in its file form (`KEY=VALUE` lines), as `roofline profile export` writes it.
    pub async fn text(&self, name: &str) -> Result<String, ProfileError> {
        Ok(self.stored(name).await?.profile.to_env())
    }

    /// Every profile, by name, with the installation's kind and whether it is simulated.
    pub async fn list(&self) -> Result<Vec<ProfileSummary>, ProfileError> {
        let rows = self.ctx.store.list().await.map_err(anyhow::Error::from)?;
        Ok(rows
            .into_iter()
            .map(|s| {
                let install = self.ctx.data.engine(&s.profile.engine);
                let kind = install.map(|i| i.kind);
                ProfileSummary {
                    port: s
                        .profile
                        .port
                        .unwrap_or(kind.unwrap_or(EngineKind::Vllm).default_port()),
                    name: s.profile.name,
                    engine: s.profile.engine,
                    kind,
                    simulated: install.is_some_and(|i| i.simulator),
                    model: s.profile.model,
                    updated_at: s.updated_at,
                }
            })
            .collect())
    }

    /// One profile with its issues (its own, the host's policy, an unknown installation) and
    /// the argv the console executes: for a container installation, the container CLI's `run`.
    pub async fn view(&self, name: &str) -> Result<ProfileView, ProfileError> {
        let stored = self.stored(name).await?;
        let p = stored.profile;
        let install = self.ctx.data.engine(&p.engine);
        let kind = install.map(|i| i.kind);
        let mut issues = p.validate();
        issues.extend(self.ctx.control.policy_issues(&p).await);
        if install.is_none() {
            issues.push(Issue {
                field: "ENGINE".into(),
                line: None,
                severity: Severity::Error,
                kind: IssueKind::UnknownEngine {
                    value: p.engine.clone(),
                },
            });
        }
        let argv = match install {
            Some(i) => match self.ctx.control.launch_argv(&p.engine, i, &p) {
                Ok((_, launch)) => launch,
                Err(_) => render_argv(i.kind, &self.ctx.data.command_for(i)?, &p),
            },
            None => Vec::new(),
        };
        let untranslated = match (kind, &p.speculative_config) {
            (Some(EngineKind::Sglang), Some(spec)) => untranslatable_speculative_keys(spec),
            _ => Vec::new(),
        };
        Ok(ProfileView {
            env_text: p.to_env(),
            kind,
            simulated: install.is_some_and(|i| i.simulator),
            argv,
            issues,
            untranslated,
            updated_at: stored.updated_at,
            known_good: self.ctx.control.known_good(&p.name).await?,
            profile: p,
        })
    }

    /// The editor's data: the active text, the text being edited (a change's candidate when
    /// `candidate` carries one) and the installations this host offers.
    pub async fn editor(&self, name: &str, candidate: Option<(i64, String)>) -> Result<EditorData, ProfileError> {
        let stored = self.stored(name).await?;
        let active_env = stored.profile.to_env();
        let (change, env_text) = match candidate {
            Some((id, text)) => (Some(id), text),
            None => (None, active_env.clone()),
        };
        let installs = self
            .ctx
            .data
            .config
            .engines
            .iter()
            .filter_map(|(n, i)| {
                Some(InstallInfo {
                    name: n.clone(),
                    kind: i.kind,
                    simulator: i.simulator,
                    command: self.ctx.data.command_for(i).ok()?,
                })
            })
            .collect();
        Ok(EditorData {
            name: name.to_string(),
            env_text,
            active_env,
            change,
            installs,
        })
    }

    /// What an installation's own `--help` says about each profile key's flag.
    pub async fn editor_help(&self, install: &str) -> Result<EditorHelp, ProfileError> {
        let Some(i) = self.ctx.data.engine(install) else {
            return Err(ProfileError::Invalid(format!(
                "ENGINE: no installation named {install:?} in this host's configuration"
            )));
        };
        let installed = self
            .ctx
            .control
            .installed_flags(install, i)
            .await
            .map_err(|e| ProfileError::Invalid(e.to_string()))?;
        Ok(EditorHelp::from_flags(
            install,
            &installed.version,
            i.kind,
            &installed.flags,
        ))
    }

    /// An edited (unsaved) profile's flags against its installed engine.
    pub async fn check_flags(&self, name: &str, env_text: &str) -> Result<FlagCheck, ProfileError> {
        let p = parse(name, env_text)?;
        let (report, _) = self
            .ctx
            .control
            .check_profile_flags(&p)
            .await
            .map_err(|e| ProfileError::Invalid(e.to_string()))?;
        Ok(FlagCheck {
            version: report.version,
            unknown: report.unknown,
            bad_values: report.bad_values,
        })
    }

    /// The upgrade preflight of an edited profile against the stored one's installation.
    pub async fn upgrade_check(
        &self,
        name: &str,
        env_text: &str,
    ) -> Result<app::domain::upgrade::UpgradeCheck, ProfileError> {
        let candidate = parse(name, env_text)?;
        let current = self.stored(name).await?;
        self.ctx
            .control
            .upgrade_check_between(&current.profile, &candidate)
            .await
            .map_err(|e| ProfileError::Invalid(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile is a few hundred bytes; text past the bound is refused before it is parsed,
    /// naming its size, from the editor and from a file alike.
    #[test]
    fn an_oversized_profile_text_is_refused_naming_its_size() {
        let text = format!(
            "ENGINE=sim-vllm\nMODEL=/m\nEXTRA_ARGS={}\n",
            "a".repeat(MAX_PROFILE_BYTES)
        );
        let err = parse("p", &text).unwrap_err().to_string();
        assert!(err.contains("over 65536 bytes"), "{err}");
        assert!(parse("p", "ENGINE=sim-vllm\nMODEL=/m\n").is_ok());
    }
}
