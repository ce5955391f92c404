//! The console's hang verdicts, shared with the CLI through the state directory.
//!
//! A hang is seen over time (flat counters, an unanswered probe, a silent API server), which a
//! one-shot `roofline status` cannot see for itself. The console's monitor writes its verdict
//! next to the engine's record every tick while it holds; `status` reads it back when it is
//! fresh, so both show the same state from the same evidence.

use super::EngineControl;
use app::domain::engine::{EngineState, EngineStatus};
use app::domain::reading::Reading;
use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime};

/// How old a verdict may be and still count: the monitor rewrites it every second, so an older
/// one means no console is watching (or the hang ended without a write).
pub const FRESH: Duration = Duration::from_secs(15);

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct Verdict {
    note: String,
    /// The verdict as a locale key (absent in a file an older console wrote).
    #[serde(default)]
    why: Option<Reading>,
}

impl EngineControl {
    fn verdict_path(&self, profile: &str) -> std::path::PathBuf {
        self.dir(profile).join("hung.json")
    }

    /// Writes the monitor's verdicts for the local engines: a file for each hung one, none for
    /// the others.
    pub fn write_verdicts(&self, rows: &[EngineStatus]) {
        for r in rows.iter().filter(|r| r.node.is_empty()) {
            let path = self.verdict_path(&r.profile);
            if r.state == EngineState::Hung {
                let v = Verdict {
                    note: r.note.clone().unwrap_or_default(),
                    why: r.verdict.clone(),
                };
                if let Ok(bytes) = serde_json::to_vec(&v) {
                    let tmp = path.with_extension("tmp");
                    if std::fs::write(&tmp, bytes)
                        .and_then(|_| std::fs::rename(&tmp, &path))
                        .is_err()
                    {
                        tracing::debug!(profile = %r.profile, "hang verdict not written");
                    }
                }
            } else if path.exists() {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// Applies a running console's fresh verdicts to rows read from the state files and
    /// `/health` alone.
    pub fn apply_verdicts(&self, rows: &mut [EngineStatus]) {
        for r in rows
            .iter_mut()
            .filter(|r| matches!(r.state, EngineState::Healthy | EngineState::Unhealthy))
        {
            let path = self.verdict_path(&r.profile);
            let fresh = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age <= FRESH);
            if !fresh {
                continue;
            }
            if let Some(v) = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Verdict>(&b).ok())
            {
                r.state = EngineState::Hung;
                r.note = Some(format!("{} (the console's verdict)", v.note));
                r.verdict = v.why;
            }
        }
    }
}
