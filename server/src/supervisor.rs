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

/// How often a healthy engine gets a real one-token completion, and how long it may take.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(10);
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The outcome of the last completion probe of a profile.
#[derive(Clone, Copy, Debug)]
enum Probe {
    Running,
    Answered { at: std::time::Instant, ms: f64 },
    NoAnswer { at: std::time::Instant },
}

/// Recent scrapes and completion probes per profile.
pub struct History {
    metrics: std::sync::Arc<crate::console_metrics::ConsoleMetrics>,
    scrapes: std::collections::HashMap<String, std::collections::VecDeque<(std::time::Instant, Signals)>>,
    probes: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Probe>>>,
}

/// One-token completion, as `roofline health` sends it.
async fn probe_once(http: reqwest::Client, base: String, model: String) -> Option<f64> {
    let t0 = std::time::Instant::now();
    let body = serde_json::json!({"model": model, "prompt": "ping", "max_tokens": 1, "temperature": 0});
    let resp = http
        .post(format!("{base}/v1/completions"))
        .timeout(PROBE_TIMEOUT)
        .json(&body)
        .send()
        .await
        .ok()?;
    resp.status().is_success().then(|| t0.elapsed().as_secs_f64() * 1000.0)
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
        self.start_probes(http, rows, &targets, now);
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
            // /health can answer while completions do not (vLLM's check only reads a flag).
            let probe = self.probes.lock().ok().and_then(|p| p.get(&row.profile).copied());
            match probe {
                Some(Probe::Answered { ms, .. }) => row.probe_ms = Some(ms),
                Some(Probe::NoAnswer { .. }) if row.state == EngineState::Healthy => {
                    row.state = EngineState::Hung;
                    row.note = Some(format!(
                        "/health answers but a one-token completion got no answer in {} s",
                        PROBE_TIMEOUT.as_secs()
                    ));
                }
                _ => {}
            }
        }
    }

    /// Starts a completion probe for every answering engine whose last probe is older than
    /// the interval; results land in `probes` when they finish, never blocking the loop.
    fn start_probes(
        &self,
        http: &reqwest::Client,
        rows: &[EngineStatus],
        targets: &[(usize, String)],
        now: std::time::Instant,
    ) {
        let Ok(mut probes) = self.probes.lock() else { return };
        probes.retain(|p, _| targets.iter().any(|(i, _)| rows[*i].profile == *p));
        for (i, base) in targets {
            let row = &rows[*i];
            let due = match probes.get(&row.profile) {
                None => true,
                Some(Probe::Running) => false,
                Some(Probe::Answered { at, .. }) | Some(Probe::NoAnswer { at }) => {
                    now.duration_since(*at) >= PROBE_INTERVAL
                }
            };
            if !due || row.model_name.is_empty() {
                continue;
            }
            probes.insert(row.profile.clone(), Probe::Running);
            let counters = self.metrics.clone();
            let (http, base, model, profile, store) = (
                http.clone(),
                base.clone(),
                row.model_name.clone(),
                row.profile.clone(),
                self.probes.clone(),
            );
            tokio::spawn(async move {
                let result = probe_once(http, base, model).await;
                counters.probed(result.is_some());
                let at = std::time::Instant::now();
                if let Ok(mut p) = store.lock() {
                    p.insert(
                        profile,
                        match result {
                            Some(ms) => Probe::Answered { at, ms },
                            None => Probe::NoAnswer { at },
                        },
                    );
                }
            });
        }
    }
}

/// Starts the refresh loop; the receiver always holds the latest snapshot.
pub async fn start(
    control: EngineControl,
    metrics: std::sync::Arc<crate::console_metrics::ConsoleMetrics>,
) -> watch::Receiver<Vec<EngineStatus>> {
    let (tx, rx) = watch::channel(snapshot(&control).await);
    let http = reqwest::Client::builder().no_proxy().build().expect("static client");
    let mut history = History {
        metrics,
        scrapes: Default::default(),
        probes: Default::default(),
    };
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
