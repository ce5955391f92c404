//! `roofline upgrade-check`: a profile against another installation before the change is
//! proposed (the runtime runbook's "After an upgrade"). The flag half diffs the two
//! installations' own `--help` for what the profile's command line uses; the metric half is
//! what the last gate that served the target installation scraped, kept per installation
//! and version (`cache/metrics/`).

use super::flags::{FlagsError, InstalledFlags};
use super::EngineControl;
use app::domain::flagmap::render_argv;
use app::domain::profile::Profile;
use app::domain::upgrade::compare_flags;
pub use app::domain::upgrade::{MetricsCheck, UpgradeCheck};

fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl EngineControl {
    fn metrics_check_path(&self, install: &str, version: &str) -> std::path::PathBuf {
        self.data
            .cache_dir()
            .join("metrics")
            .join(format!("{}-{}.json", safe(install), safe(version)))
    }

    /// Keeps a gate's metric check for the installation and version it scraped.
    pub fn record_metrics_check(&self, check: &MetricsCheck) {
        let path = self.metrics_check_path(&check.install, &check.version);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(e) = std::fs::write(&path, serde_json::to_vec(check).unwrap_or_default()) {
            tracing::warn!(path = %path.display(), error = %e, "could not keep the metric check");
        }
    }

    fn metrics_check(&self, install: &str, version: &str) -> Option<MetricsCheck> {
        let text = std::fs::read(self.metrics_check_path(install, version)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// The version an installation reports now (cached per installation like its flags).
    pub async fn install_version(&self, install_name: &str) -> Result<String, FlagsError> {
        Ok(self.flags_of(install_name).await?.version)
    }

    async fn flags_of(&self, install_name: &str) -> Result<InstalledFlags, FlagsError> {
        let install = self
            .data
            .engine(install_name)
            .ok_or_else(|| FlagsError::NoSuchInstall(install_name.to_string()))?;
        self.installed_flags(install_name, install).await
    }

    /// A stored profile moved to installation `to`, as it is.
    pub async fn upgrade_check(&self, profile: &str, to: &str) -> Result<UpgradeCheck, FlagsError> {
        let stored = self.stored_profile(profile).await?;
        let mut candidate = stored.clone();
        candidate.engine = to.to_string();
        self.upgrade_check_between(&stored, &candidate).await
    }

    /// `current` (the profile as it runs) against `candidate` (the same profile on another
    /// installation, maybe edited too): the candidate's command line is what is checked.
    pub async fn upgrade_check_between(
        &self,
        current: &Profile,
        candidate: &Profile,
    ) -> Result<UpgradeCheck, FlagsError> {
        let install = |name: &str| {
            self.data
                .engine(name)
                .ok_or_else(|| FlagsError::NoSuchInstall(name.to_string()))
        };
        let (from_install, to_install) = (install(&current.engine)?, install(&candidate.engine)?);
        let kind = to_install.kind;
        if from_install.kind != kind {
            return Err(FlagsError::OtherEngine {
                from: current.engine.clone(),
                from_kind: from_install.kind.as_str().to_string(),
                to: candidate.engine.clone(),
                to_kind: kind.as_str().to_string(),
            });
        }
        let from = self.installed_flags(&current.engine, from_install).await?;
        let to = self.installed_flags(&candidate.engine, to_install).await?;
        let argv = render_argv(kind, &[], candidate);
        let flags = compare_flags(kind, &from.flags, &to.flags, &argv);
        Ok(UpgradeCheck {
            profile: candidate.name.clone(),
            from_install: current.engine.clone(),
            from_version: from.version,
            to_install: candidate.engine.clone(),
            metrics: self.metrics_check(&candidate.engine, &to.version),
            to_version: to.version,
            flags,
        })
    }
}
