//! The application context: what every feature works with — the data directory and host
//! configuration, the stored profiles and the database under them, the change journal, the
//! clock and engine control. An edge (the console's router, a CLI command) builds it once and
//! hands it to each feature, so a feature reads `ctx.data`, `ctx.store` or `ctx.journal`
//! instead of reaching through engine control for them, and writes the journal directly.

use crate::clock::Clock;
use crate::config::DataDir;
use crate::control::{ControlError, EngineControl};
use crate::db::Pool;
use crate::journal::Journal;
use crate::profile_store::ProfileStore;

/// One console's (or one CLI command's) shared parts; cheap to clone.
#[derive(Clone)]
pub struct Context {
    /// The data directory and the host configuration read from it.
    pub data: DataDir,
    /// The launch profiles.
    pub store: ProfileStore,
    /// The console's database (the profiles', changes', runs' and incidents' tables).
    pub pool: Pool,
    /// The change journal, with its anchor file and key.
    pub journal: Journal,
    /// Now, as the database and the browser keep time.
    pub clock: Clock,
    /// Engine processes and containers.
    pub control: EngineControl,
}

impl Context {
    /// The context over the data directory and profile store `control` was opened on.
    pub fn new(control: EngineControl) -> Self {
        Self {
            data: control.data().clone(),
            store: control.store().clone(),
            pool: control.store().pool(),
            journal: control.journal(),
            clock: Clock::System,
            control,
        }
    }

    /// Records something done to an engine's profile in the journal, with the audit context
    /// an auditor needs later (installation, engine version, driver, container image; see
    /// `control::actions::context`) added to `detail`.
    pub async fn record(&self, who: &str, kind: &str, profile: &str, reason: &str, detail: serde_json::Value) {
        let detail = crate::control::actions::context(&self.control, profile, detail).await;
        self.journal.record(who, kind, profile, reason, detail).await;
    }

    /// Records a finished engine action (serve, stop, restart) with its outcome or error and
    /// the audit context, as the engine page, a change's rollback and the CLI all do.
    pub async fn record_action(
        &self,
        who: &str,
        action: &str,
        profile: &str,
        reason: &str,
        result: &Result<String, ControlError>,
    ) {
        let detail = match result {
            Ok(outcome) => {
                tracing::info!(profile = %profile, action, %outcome, "engine action done");
                serde_json::json!({"ok": true, "outcome": outcome})
            }
            Err(e) => {
                tracing::warn!(profile = %profile, action, error = %e, "engine action failed");
                serde_json::json!({"ok": false, "error": e.to_string()})
            }
        };
        self.record(who, action, profile, reason, detail).await;
    }
}
