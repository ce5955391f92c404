//! Record versions (`record_version`, bumped by triggers on the incident and change tables):
//! one task reads the little table while any page listens and hands the versions to every
//! event stream. Triggers rather than calls in each store, so that a write by another process
//! (`roofline incident` from the CLI, a second console on the same file) reaches open pages too.

use crate::db::Pool;
use app::api::RecordVersions;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::watch;

/// How often the table is read while a page listens: the latency of a live page.
const POLL: Duration = Duration::from_millis(500);

/// The versions as they were last read; subscribe for changes.
#[derive(Clone)]
pub struct Records(Arc<watch::Sender<RecordVersions>>);

impl Records {
    /// Starts the reader (on the current tokio runtime); it stops when the last `Records` goes.
    pub fn start(pool: Pool) -> Self {
        let tx = Arc::new(watch::Sender::new(RecordVersions::default()));
        tokio::spawn(read_while_listened(pool, Arc::downgrade(&tx)));
        Self(tx)
    }

    pub fn subscribe(&self) -> watch::Receiver<RecordVersions> {
        self.0.subscribe()
    }
}

async fn read_while_listened(pool: Pool, tx: Weak<watch::Sender<RecordVersions>>) {
    loop {
        tokio::time::sleep(POLL).await;
        let Some(tx) = tx.upgrade() else { return };
        if tx.receiver_count() == 0 {
            continue;
        }
        match read(&pool).await {
            Ok(v) => {
                tx.send_if_modified(|cur| std::mem::replace(cur, v) != v);
            }
            Err(e) => tracing::warn!(error = %e, "reading record versions"),
        }
    }
}

/// The versions now.
pub async fn read(pool: &Pool) -> Result<RecordVersions, sqlx::Error> {
    let rows: Vec<(String, i64)> = sqlx::query_as("select kind, version from record_version")
        .fetch_all(pool)
        .await?;
    let mut v = RecordVersions::default();
    for (kind, version) in rows {
        match kind.as_str() {
            "incidents" => v.incidents = version,
            "changes" => v.changes = version,
            "jobs" => v.jobs = version,
            _ => {}
        }
    }
    Ok(v)
}
