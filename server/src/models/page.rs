//! The Models page's use-cases: verify a model directory named by the page (one directory name
//! under the models root, nothing else), journal the outcome, and read the progress back.

use super::jobs::Verifications;
use crate::config::DataDir;
use crate::journal::Journal;
use crate::profile_store::ProfileStore;
use app::api::ModelVerifyState;

/// Why a verification did not start.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{0:?} is not a model directory name")]
    NotADirectoryName(String),
    /// The name leaves the models root (a link out of it).
    #[error("{0}")]
    OutsideRoot(#[from] crate::config::PathError),
    #[error("a verification of this model is already running")]
    AlreadyRunning,
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// The model verifications of this console: the host configuration (the models root, which
/// installations are simulated), the profiles (which load a directory) and the journal.
#[derive(Clone)]
pub struct Models {
    data: DataDir,
    store: ProfileStore,
    journal: Journal,
    verifications: Verifications,
}

impl Models {
    pub fn new(data: DataDir, store: ProfileStore, journal: Journal) -> Self {
        Self {
            data,
            store,
            journal,
            verifications: Verifications::default(),
        }
    }

    /// The verification state of `name` (idle when none ran since the console started).
    pub fn state(&self, name: &str) -> ModelVerifyState {
        self.verifications.get(name)
    }

    /// Starts verifying the model directory `name`; the outcome is journaled when it ends.
    pub async fn start_verify(&self, who: &str, name: &str) -> Result<(), ModelError> {
        let root = self.data.models_root();
        // One directory name under the root: no separators, no `..`.
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(ModelError::NotADirectoryName(name.to_string()));
        }
        let dir = crate::config::confined(&root, &root.join(name)).map_err(ModelError::OutsideRoot)?;
        // Its weights are "simulated" only when every profile that loads it runs on a
        // simulated installation (host configuration), and one does.
        let users: Vec<bool> = self
            .store
            .list()
            .await
            .map_err(anyhow::Error::from)?
            .iter()
            .filter(|p| {
                crate::config::confined(&root, std::path::Path::new(&p.profile.model)).ok() == Some(dir.clone())
            })
            .map(|p| self.data.engine(&p.profile.engine).is_some_and(|i| i.simulator))
            .collect();
        let simulated = !users.is_empty() && users.iter().all(|s| *s);
        let journal = self.journal.clone();
        let (who, subject) = (who.to_string(), name.to_string());
        let started = self.verifications.start(
            name.to_string(),
            dir,
            root,
            simulated,
            super::hashcache::HashCache::new(self.store.pool()),
            move |result| {
                tokio::spawn(async move {
                    let detail = match &result {
                        Ok(r) => serde_json::json!({
                            "ok": r.ok(), "manifest": r.manifest, "files": r.files, "bytes": r.bytes,
                            "hashed_files": r.hashed_files, "cached_files": r.cached_files,
                            "errors": r.errors().map(|f| format!("{}: {}", f.file, f.detail)).collect::<Vec<_>>(),
                        }),
                        Err(e) => serde_json::json!({"ok": false, "error": e.to_string()}),
                    };
                    journal
                        .record(
                            &who,
                            "model-verified",
                            &subject,
                            "verified from the Models page",
                            detail,
                        )
                        .await;
                });
            },
        );
        if started {
            Ok(())
        } else {
            Err(ModelError::AlreadyRunning)
        }
    }
}
