//! The console's view of the fleet: a background task that computes every engine's state once
//! a second and publishes it, so pages, streams and server functions read one snapshot
//! instead of probing engines per request.

use crate::control::EngineControl;
use app::domain::engine::EngineStatus;
use std::time::Duration;
use tokio::sync::watch;

/// How often states are refreshed.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// Computes the status of every stored profile.
pub async fn snapshot(control: &EngineControl) -> Vec<EngineStatus> {
    let profiles = match control.store.list().await {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "listing profiles");
            return Vec::new();
        }
    };
    let futures = profiles.iter().map(|p| control.status(&p.profile));
    futures::future::join_all(futures).await
}

/// Starts the refresh loop; the receiver always holds the latest snapshot.
pub async fn start(control: EngineControl) -> watch::Receiver<Vec<EngineStatus>> {
    let (tx, rx) = watch::channel(snapshot(&control).await);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(INTERVAL).await;
            let next = snapshot(&control).await;
            tx.send_if_modified(|cur| {
                if *cur != next {
                    *cur = next;
                    true
                } else {
                    false
                }
            });
            if tx.is_closed() {
                break;
            }
        }
    });
    rx
}
