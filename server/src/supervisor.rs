//! The console's view of the fleet: a background task that computes every engine's state once
//! a second and publishes it, so pages, streams and server functions read one snapshot
//! instead of probing engines per request.

use crate::control::EngineControl;
use app::domain::engine::{EngineState, EngineStatus};
use app::domain::signals::Signals;
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

/// How far back live rates and percentiles look.
pub const WINDOW: Duration = Duration::from_secs(30);

/// Recent scrapes per profile, for windows of live signals.
#[derive(Default)]
pub struct History {
    scrapes: std::collections::HashMap<String, std::collections::VecDeque<(std::time::Instant, Signals)>>,
}

impl History {
    /// Adds live signals (and the hung state) to every engine that answers `/health`.
    pub async fn enrich(&mut self, http: &reqwest::Client, rows: &mut [EngineStatus]) {
        let targets: Vec<(usize, String)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.state, EngineState::Healthy | EngineState::Unhealthy))
            .map(|(i, r)| {
                let host = if r.host == "0.0.0.0" {
                    "127.0.0.1"
                } else {
                    r.host.as_str()
                };
                (i, format!("http://{}", crate::control::fmt_host_port(host, r.port)))
            })
            .collect();
        let scrapes =
            futures::future::join_all(targets.iter().map(|(_, base)| crate::collect::scrape(http, base))).await;
        let now = std::time::Instant::now();
        let live_profiles: Vec<String> = targets.iter().map(|(i, _)| rows[*i].profile.clone()).collect();
        self.scrapes.retain(|p, _| live_profiles.contains(p));
        for ((i, _), result) in targets.into_iter().zip(scrapes) {
            let row = &mut rows[i];
            match result {
                Ok((signals, _)) => {
                    let h = self.scrapes.entry(row.profile.clone()).or_default();
                    h.push_back((now, signals));
                    while h.front().is_some_and(|(t, _)| now.duration_since(*t) > WINDOW) && h.len() > 2 {
                        h.pop_front();
                    }
                    if let (Some((t0, first)), Some((t1, last))) = (h.front(), h.back()) {
                        let window = t1.duration_since(*t0).as_secs_f64();
                        if window > 0.0 {
                            let live = app::domain::signals::live(first, last, window);
                            if row.state == EngineState::Healthy && live.looks_hung() && window >= 10.0 {
                                row.state = EngineState::Hung;
                                row.note = Some(format!(
                                    "{} requests queued, no token generated in {window:.0} s",
                                    live.running.unwrap_or(0.0) + live.waiting.unwrap_or(0.0)
                                ));
                            }
                            row.live = Some(live);
                        }
                    }
                }
                Err(e) => row.metrics_note = Some(e.to_string()),
            }
        }
    }
}

/// Starts the refresh loop; the receiver always holds the latest snapshot.
pub async fn start(control: EngineControl) -> watch::Receiver<Vec<EngineStatus>> {
    let (tx, rx) = watch::channel(snapshot(&control).await);
    let http = reqwest::Client::builder().no_proxy().build().expect("static client");
    let mut history = History::default();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(INTERVAL).await;
            let mut next = snapshot(&control).await;
            history.enrich(&http, &mut next).await;
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
