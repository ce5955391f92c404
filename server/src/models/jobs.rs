//! Verifications started from the Models page: one at a time per model directory, run in the
//! background, their progress and last result kept for the page to poll.

use super::hashcache::HashCache;
use super::verify::{verify, HashMode};
use app::api::ModelVerifyState;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct Verifications {
    state: Arc<Mutex<HashMap<String, ModelVerifyState>>>,
}

impl Verifications {
    /// The state of `name`'s verification (idle when none ran since the console started).
    pub fn get(&self, name: &str) -> ModelVerifyState {
        self.state
            .lock()
            .ok()
            .and_then(|g| g.get(name).cloned())
            .unwrap_or_default()
    }

    /// Starts verifying `dir` as `name`; `false` when one is already running. `done` is
    /// called with the finished report (the journal entry). `simulated`: only simulated
    /// installations load it (their missing weights are not an error).
    pub fn start(
        &self,
        name: String,
        dir: PathBuf,
        root: PathBuf,
        simulated: bool,
        cache: HashCache,
        done: impl FnOnce(Result<app::domain::modelcheck::VerifyReport, super::VerifyError>) + Send + 'static,
    ) -> bool {
        {
            let Ok(mut g) = self.state.lock() else { return false };
            let s = g.entry(name.clone()).or_default();
            if s.running {
                return false;
            }
            *s = ModelVerifyState {
                running: true,
                ..Default::default()
            };
        }
        let state = self.state.clone();
        let key = name.clone();
        tokio::spawn(async move {
            let progress_state = state.clone();
            let progress_key = key.clone();
            let progress = Arc::new(move |p| {
                if let Ok(mut g) = progress_state.lock() {
                    if let Some(s) = g.get_mut(&progress_key) {
                        s.progress = p;
                    }
                }
            });
            let result = verify(Some(&cache), &dir, &root, HashMode::Full, progress)
                .await
                .map(|mut r| {
                    if simulated {
                        r.weights_simulated();
                    }
                    r
                });
            if let Ok(mut g) = state.lock() {
                if let Some(s) = g.get_mut(&key) {
                    s.running = false;
                    match &result {
                        Ok(r) => s.report = Some(r.clone()),
                        Err(e) => s.error = Some(e.to_string()),
                    }
                }
            }
            done(result);
        });
        true
    }
}
