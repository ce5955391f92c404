//! The console's view of the fleet: a background task that computes every engine's state once
//! a second and publishes it, so pages, streams and server functions read one snapshot
//! instead of probing engines per request.
//!
//! Each second: the local engines' process and `/health` state; every scrape interval: their
//! `/metrics` (live signals, history points, the hung check); every probe interval: a real
//! one-token completion; every GPU interval: NVML (or a recording). Remote hosts of the fleet
//! are polled by [`remote`] on their own task and merged in.

pub mod console_metrics;
mod healthy_start;
pub mod history;
pub mod promql;
pub mod remote;
pub mod states;

pub use healthy_start::{on_healthy_start, HealthyStart};

use crate::context::Context;
use crate::monitor::console_metrics::ConsoleMetrics;
use crate::monitor::history::{now_ms, History};
use app::domain::engine::{EngineState, EngineStatus};
use app::domain::gpu::{GpuState, GpuSummary};
use app::domain::reading::Reading;
use app::domain::series::Point;
use app::domain::signals::{Live, Signals};
use app::domain::stall::{HangKind, HangVerdict};
use app::i18n::Lang;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How often states are refreshed.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// How often the GPUs are read.
pub const GPU_INTERVAL: Duration = Duration::from_secs(5);

/// How far back live rates and percentiles look.
pub const WINDOW: Duration = Duration::from_secs(30);

/// How often a healthy engine gets a real one-token completion, and how long it may take.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(10);
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The outcome of the last completion probe of an engine.
#[derive(Clone, Copy, Debug)]
enum Probe {
    Running,
    Answered {
        at: Instant,
        ms: f64,
    },
    /// No answer in time; `baseline` is the progress counters of the scrape before it was sent.
    NoAnswer {
        at: Instant,
        baseline: [Option<f64>; 3],
    },
}

/// A probe and the process (pid) it was sent to.
type SentProbe = (Option<i32>, Probe);

/// What the last scrape of an engine gave, kept between scrapes.
#[derive(Clone, Debug, Default)]
struct Latest {
    live: Option<Live>,
    note: Option<String>,
    at_ms: Option<i64>,
}

/// Scrapes, probes and the hung check for a set of engines: the local ones, or a fleet's bare
/// engines (which have no history pages, so `history` is `None` there).
pub struct Collector {
    metrics: Arc<ConsoleMetrics>,
    http: reqwest::Client,
    scrape_every: Duration,
    last_scrape: Option<Instant>,
    scrapes: HashMap<String, VecDeque<(Instant, Signals)>>,
    latest: HashMap<String, Latest>,
    /// The last probe of each engine, with the process it was sent to: a result that lands
    /// after the profile's process changed belongs to no one and is dropped.
    probes: Arc<Mutex<HashMap<String, SentProbe>>>,
    history: Option<History>,
    /// The process each profile's state above was gathered from: a new one (a restart, a
    /// gate's restore) starts with none of its predecessor's scrapes, probes or verdicts.
    instances: HashMap<String, Option<i32>>,
    /// Hang verdicts given, with when: they hold until the engine proves it moves.
    hung: HashMap<String, (Instant, HangVerdict)>,
    /// Since when `/health` has got no answer from an engine whose process is alive.
    no_answer_since: HashMap<String, Instant>,
}

/// The base URL of a local engine.
pub fn local_base(row: &EngineStatus) -> String {
    crate::engine::base_url(&row.host, row.port)
}

impl Collector {
    pub fn new(
        metrics: Arc<ConsoleMetrics>,
        http: reqwest::Client,
        scrape_every: Duration,
        history: Option<History>,
    ) -> Self {
        Self {
            metrics,
            http,
            scrape_every,
            last_scrape: None,
            scrapes: Default::default(),
            latest: Default::default(),
            probes: Default::default(),
            history,
            instances: Default::default(),
            hung: Default::default(),
            no_answer_since: Default::default(),
        }
    }

    /// Adds live signals (and the hung state) to every engine that answers `/health`.
    /// `base` gives each row's URL; rows are keyed by profile.
    pub async fn enrich(&mut self, rows: &mut [EngineStatus], base: impl Fn(&EngineStatus) -> String) {
        let targets: Vec<(usize, String)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.state, EngineState::Healthy | EngineState::Unhealthy))
            .map(|(i, r)| (i, base(r)))
            .collect();
        let now = Instant::now();
        let keys: Vec<String> = targets.iter().map(|(i, _)| rows[*i].profile.clone()).collect();
        self.instances.retain(|p, _| keys.contains(p));
        for (i, _) in &targets {
            let row = &rows[*i];
            if self.instances.insert(row.profile.clone(), row.pid) != Some(row.pid) {
                self.forget(&row.profile);
            }
        }
        self.scrapes.retain(|p, _| keys.contains(p));
        self.latest.retain(|p, _| keys.contains(p));
        self.hung.retain(|p, _| keys.contains(p));
        self.no_answer_since.retain(|p, _| keys.contains(p));
        if let Some(h) = &self.history {
            h.retain(&keys);
        }
        // Ticks jitter by a few milliseconds; a quarter tick of slack keeps a 1 s interval
        // from skipping every other tick.
        let due = self.scrape_every.saturating_sub(INTERVAL / 4);
        // An engine whose /health got no answer is not scraped or probed: its /metrics would
        // only hold the tick for the scrape timeout (the silence itself is the evidence).
        let answering: Vec<(usize, String)> = targets.iter().filter(|(i, _)| answered(&rows[*i])).cloned().collect();
        if self.last_scrape.is_none_or(|t| now.duration_since(t) >= due) {
            self.last_scrape = Some(now);
            self.scrape_all(rows, &answering, now).await;
        }
        self.start_probes(rows, &answering, now);
        for (i, _) in &targets {
            let row = &mut rows[*i];
            if let Some(latest) = self.latest.get(&row.profile) {
                row.live = latest.live.clone();
                row.metrics_note = latest.note.clone();
                row.scraped_at_ms = latest.at_ms;
            }
            // Hung: work pending while no progress counter moves (see `domain::stall`).
            let scrapes: Vec<(f64, &Signals)> = self
                .scrapes
                .get(&row.profile)
                .map(|h| {
                    h.iter()
                        .map(|(t, s)| (-now.duration_since(*t).as_secs_f64(), s))
                        .collect()
                })
                .unwrap_or_default();
            let flat = app::domain::stall::flat_for(&scrapes);
            let latest_signals = scrapes.last().map(|(_, s)| *s);
            // The freshest scrape only: a failed scrape is no evidence of movement.
            let fresh_signals =
                latest_signals.filter(|_| self.latest.get(&row.profile).is_some_and(|l| l.note.is_none()));
            let probe = self
                .probes
                .lock()
                .ok()
                .and_then(|p| p.get(&row.profile).map(|(_, p)| *p));
            if let Some(Probe::Answered { ms, .. }) = probe {
                row.probe_ms = Some(ms);
            }
            let health_answered = answered(row);
            if health_answered {
                self.no_answer_since.remove(&row.profile);
            } else {
                // The unanswered /health was sent one health timeout before this refresh.
                let asked = now.checked_sub(crate::engine::HEALTH_TIMEOUT).unwrap_or(now);
                self.no_answer_since.entry(row.profile.clone()).or_insert(asked);
            }
            // A verdict given earlier holds until this refresh's evidence undoes it.
            if let Some((at, verdict)) = self.hung.get(&row.profile) {
                let evidence = app::domain::stall::Evidence {
                    latest: fresh_signals,
                    probe_answered: matches!(probe, Some(Probe::Answered { at: answered, .. }) if answered > *at),
                    health_answered,
                };
                if app::domain::stall::recovered(verdict, evidence) {
                    tracing::info!(profile = %row.profile, "no longer hung: it moves again");
                    self.hung.remove(&row.profile);
                }
            }
            if !self.hung.contains_key(&row.profile) {
                if let Some((kind, why)) = self.fresh_hang(row, flat, latest_signals, probe, now) {
                    let counters = latest_signals.map(app::domain::stall::counters).unwrap_or_default();
                    tracing::warn!(profile = %row.profile, why = %why.text(Lang::En), "hung");
                    self.hung
                        .insert(row.profile.clone(), (now, HangVerdict { kind, counters, why }));
                }
            }
            if let Some((at, verdict)) = self.hung.get(&row.profile) {
                row.state = EngineState::Hung;
                let mut why = verdict.why.clone();
                why.args
                    .push(("held".into(), format!("{:.0}", now.duration_since(*at).as_secs_f64())));
                row.note = Some(why.text(Lang::En));
                row.verdict = Some(why);
            }
        }
    }

    /// Drops what was gathered about a profile's previous process.
    fn forget(&mut self, profile: &str) {
        self.scrapes.remove(profile);
        self.latest.remove(profile);
        self.hung.remove(profile);
        self.no_answer_since.remove(profile);
        if let Ok(mut probes) = self.probes.lock() {
            probes.remove(profile);
        }
    }

    /// This refresh's own evidence of a hang, if any: work pending with flat counters, an idle
    /// engine whose probe got no answer, or an API server that has answered no connection for
    /// as long as counters may stay flat.
    fn fresh_hang(
        &self,
        row: &EngineStatus,
        flat: Option<f64>,
        latest_signals: Option<&Signals>,
        probe: Option<Probe>,
        now: Instant,
    ) -> Option<(HangKind, Reading)> {
        if row.state == EngineState::Healthy && flat.is_some_and(|f| f >= app::domain::stall::FLAT_S) {
            let pending = row
                .live
                .as_ref()
                .map(|l| l.running.unwrap_or(0.0) + l.waiting.unwrap_or(0.0));
            return Some((
                HangKind::Flat,
                Reading::new(
                    HangKind::Flat.key(),
                    &[
                        ("pending", format!("{:.0}", pending.unwrap_or(0.0))),
                        ("seconds", format!("{:.0}", flat.unwrap_or(0.0))),
                    ],
                ),
            ));
        }
        // /health can answer while completions do not (vLLM's check only reads a flag). The
        // probe runs on idle engines only; a busy one is judged by its counters above.
        if let Some(Probe::NoAnswer { baseline, .. }) = probe {
            if row.state == EngineState::Healthy && app::domain::stall::probe_shows_hang(baseline, latest_signals) {
                return Some((
                    HangKind::Probe,
                    Reading::new(
                        HangKind::Probe.key(),
                        &[("seconds", PROBE_TIMEOUT.as_secs().to_string())],
                    ),
                ));
            }
        }
        let silent = self
            .no_answer_since
            .get(&row.profile)
            .map(|t| now.duration_since(*t).as_secs_f64());
        if row.state == EngineState::Unhealthy && silent.is_some_and(|s| s >= app::domain::stall::FLAT_S) {
            return Some((
                HangKind::NoConnection,
                Reading::new(
                    HangKind::NoConnection.key(),
                    &[("seconds", format!("{:.0}", silent.unwrap_or(0.0)))],
                ),
            ));
        }
        None
    }

    async fn scrape_all(&mut self, rows: &[EngineStatus], targets: &[(usize, String)], now: Instant) {
        let http = &self.http;
        let metrics = &self.metrics;
        let scrapes = futures::future::join_all(targets.iter().map(|(_, base)| async move {
            let t0 = Instant::now();
            let r = crate::engine::Engine::with_client(http.clone(), base).scrape().await;
            metrics.scraped(r.is_ok(), t0.elapsed());
            r
        }))
        .await;
        let at_ms = now_ms();
        for ((i, _), result) in targets.iter().zip(scrapes) {
            let row = &rows[*i];
            let latest = self.latest.entry(row.profile.clone()).or_default();
            match result {
                Ok((signals, _)) => {
                    let h = self.scrapes.entry(row.profile.clone()).or_default();
                    h.push_back((now, signals.clone()));
                    while h.front().is_some_and(|(t, _)| now.duration_since(*t) > WINDOW) && h.len() > 2 {
                        h.pop_front();
                    }
                    latest.note = None;
                    latest.at_ms = Some(at_ms);
                    if let (Some((t0, first)), Some((t1, last))) = (h.front(), h.back()) {
                        let window = t1.duration_since(*t0).as_secs_f64();
                        latest.live = (window > 0.0).then(|| app::domain::signals::live(first, last, window));
                    }
                    if let (Some(history), Some(live)) = (&self.history, &latest.live) {
                        let point = Point {
                            t_ms: at_ms,
                            live: live.clone(),
                            gpu: row.gpu.clone(),
                        };
                        history.record(&row.profile, point, signals, row.gpu.clone()).await;
                    }
                }
                Err(e) => {
                    latest.live = None;
                    latest.note = Some(e.to_string());
                }
            }
        }
    }

    /// Starts a completion probe for every answering engine whose last probe is older than
    /// the interval; results land in `probes` when they finish, never blocking the loop.
    fn start_probes(&self, rows: &[EngineStatus], targets: &[(usize, String)], now: Instant) {
        let Ok(mut probes) = self.probes.lock() else { return };
        probes.retain(|p, _| targets.iter().any(|(i, _)| rows[*i].profile == *p));
        for (i, base) in targets {
            let row = &rows[*i];
            let last = self.scrapes.get(&row.profile).and_then(|h| h.back()).map(|(_, s)| s);
            if !app::domain::stall::idle(last) {
                // No probe traffic for a busy engine: its counters say whether it moves.
                continue;
            }
            let baseline = last.map(app::domain::stall::counters).unwrap_or_default();
            let due = match probes.get(&row.profile).map(|(_, p)| p) {
                None => true,
                Some(Probe::Running) => false,
                Some(Probe::Answered { at, .. }) | Some(Probe::NoAnswer { at, .. }) => {
                    now.duration_since(*at) >= PROBE_INTERVAL
                }
            };
            if !due || row.model_name.is_empty() {
                continue;
            }
            probes.insert(row.profile.clone(), (row.pid, Probe::Running));
            let counters = self.metrics.clone();
            let (pid, http, base, model, profile, store) = (
                row.pid,
                self.http.clone(),
                base.clone(),
                row.model_name.clone(),
                row.profile.clone(),
                self.probes.clone(),
            );
            tokio::spawn(async move {
                let result = crate::engine::Engine::with_client(http, &base)
                    .probe(&model, PROBE_TIMEOUT)
                    .await
                    .ok();
                counters.probed(result.is_some());
                let at = Instant::now();
                let outcome = match result {
                    Some(ms) => Probe::Answered { at, ms },
                    None => Probe::NoAnswer { at, baseline },
                };
                if let Ok(mut p) = store.lock() {
                    // Only the process it was sent to is judged by it.
                    if let Some(entry) = p.get_mut(&profile).filter(|(sent_to, _)| *sent_to == pid) {
                        entry.1 = outcome;
                    }
                }
            });
        }
    }
}

/// Whether the row's `/health` answered on this read (a healthy row did, whoever built it).
fn answered(row: &EngineStatus) -> bool {
    row.health_code.is_some() || row.state == EngineState::Healthy
}

/// Marks our engines' processes on the GPUs and gives each row its GPU summary.
fn attach_gpus(state: &mut GpuState, rows: &mut [EngineStatus]) {
    let engines: Vec<(i32, String)> = rows
        .iter()
        .filter_map(|r| r.pid.map(|p| (p, r.profile.clone())))
        .collect();
    app::domain::gpu::mark_owners(state, &engines, crate::gpu::process_group);
    for row in rows {
        row.gpu = GpuSummary::of_profile(state, &row.profile);
    }
}

/// What the console's pages and streams read.
#[derive(Clone)]
pub struct Feeds {
    pub fleet: watch::Receiver<Vec<EngineStatus>>,
    pub gpu: watch::Receiver<GpuState>,
    pub history: History,
}

/// The history of this console's engines: its memory and minute rollups, and the team's
/// Prometheus beyond them when host configuration names one.
fn history_of(ctx: &Context) -> History {
    let prometheus = ctx
        .data
        .config
        .prometheus
        .url
        .as_deref()
        .map(|u| crate::monitor::promql::Prometheus::new(u, &ctx.data.host_name()));
    History::new(ctx.pool.clone()).with_prometheus(prometheus)
}

/// Starts the refresh loop; the receivers always hold the latest snapshot.
pub async fn start(ctx: Context, metrics: Arc<ConsoleMetrics>) -> Feeds {
    start_with(ctx, metrics, None).await
}

/// The refresh loop, with the other hosts' rows of a shared database (`hosts::runner::follow`)
/// joined to the fleet as they land.
pub async fn start_with(
    ctx: Context,
    metrics: Arc<ConsoleMetrics>,
    shared: Option<watch::Receiver<Vec<EngineStatus>>>,
) -> Feeds {
    let control = ctx.control.clone();
    let history = history_of(&ctx);
    crate::gpu::events::watch();
    let mut gpu_state = crate::gpu::read().await;
    let mut first = control.statuses().await;
    attach_gpus(&mut gpu_state, &mut first);
    let (tx, rx) = watch::channel(first);
    let (gpu_tx, gpu_rx) = watch::channel(gpu_state.clone());
    let http = crate::engine::shared_client();
    let config = ctx.data.config.clone();
    let remote = crate::monitor::remote::start(
        config.fleet.clone(),
        config.auth.fleet_token.clone(),
        http.clone(),
        metrics.clone(),
        config.scrape_interval_s,
    );
    let remote = crate::monitor::remote::merged(remote, shared);
    let mut collector = Collector::new(
        metrics,
        http,
        Duration::from_secs(config.scrape_interval_s),
        Some(history.clone()),
    );
    let pruner = history.clone();
    tokio::spawn(async move {
        let mut gpu_read_at = Instant::now();
        let mut pruned_at: Option<Instant> = None;
        let states = states::StateLog::new(ctx.pool.clone());
        let mut local: Vec<EngineStatus> = tx.borrow().clone();
        let mut next_tick = tokio::time::Instant::now() + INTERVAL;
        let mut remote = remote;
        // Engines seen healthy on the last tick: a new one is a start to calibrate from.
        let mut was_healthy: std::collections::HashSet<String> = Default::default();
        // Each engine's state on the last tick: a change into hung or dead is captured.
        let mut last_state: HashMap<String, EngineState> = Default::default();
        loop {
            // Local engines refresh on the tick; the other hosts' rows are published as soon
            // as their poll lands, so a remote scrape does not wait for our next tick.
            let tick = tokio::select! {
                _ = tokio::time::sleep_until(next_tick) => true,
                changed = async {
                    match remote.as_mut() {
                        Some(r) => r.changed().await.is_ok(),
                        None => std::future::pending().await,
                    }
                } => {
                    if !changed {
                        remote = None;
                    }
                    false
                }
            };
            if tick {
                next_tick = tokio::time::Instant::now() + INTERVAL;
                let mut next = control.statuses().await;
                let healthy: std::collections::HashSet<String> = next
                    .iter()
                    .filter(|r| r.state == EngineState::Healthy)
                    .map(|r| r.profile.clone())
                    .collect();
                for name in healthy.difference(&was_healthy) {
                    let (ctx, name) = (ctx.clone(), name.clone());
                    tokio::spawn(async move {
                        on_healthy_start(&ctx, &name).await;
                    });
                }
                was_healthy = healthy;
                if gpu_read_at.elapsed() >= GPU_INTERVAL {
                    gpu_read_at = Instant::now();
                    gpu_state = crate::gpu::read().await;
                }
                attach_gpus(&mut gpu_state, &mut next);
                gpu_tx.send_if_modified(|cur| {
                    let changed = *cur != gpu_state;
                    if changed {
                        *cur = gpu_state.clone();
                    }
                    changed
                });
                collector.enrich(&mut next, local_base).await;
                // `roofline status` shows the same verdicts (control::verdicts).
                control.write_verdicts(&next);
                // Evidence before action: what a restart would destroy is kept the moment an
                // engine is called hung or dead (control::capture).
                let mut entered: Vec<(String, EngineState)> = Vec::new();
                for r in &next {
                    let bad = matches!(r.state, EngineState::Hung | EngineState::Dead);
                    let before = last_state.insert(r.profile.clone(), r.state);
                    if before != Some(r.state) {
                        entered.push((r.profile.clone(), r.state));
                    }
                    let newly = match before {
                        Some(b) => b != r.state,
                        // Seen first as dead: only when something of it still runs.
                        None => r.pid.is_some(),
                    };
                    if bad && newly {
                        let (control, name, state, note, gpu) = (
                            control.clone(),
                            r.profile.clone(),
                            r.state,
                            r.note.clone().unwrap_or_default(),
                            gpu_state.clone(),
                        );
                        tokio::spawn(async move {
                            let c = control.capture(&name, state, &note, Some(gpu)).await;
                            tracing::info!(profile = %name, processes = c.processes.len(), "evidence captured before any action");
                        });
                    }
                }
                // The state timeline: each state entered, written off the tick.
                if !entered.is_empty() {
                    let (log, at) = (states.clone(), now_ms());
                    tokio::spawn(async move {
                        for (profile, state) in entered {
                            if let Err(e) = log.record(&profile, at, state).await {
                                tracing::warn!(profile = %profile, error = %e, "the state timeline misses a change");
                            }
                        }
                    });
                }
                last_state.retain(|p, _| next.iter().any(|r| &r.profile == p));
                local = next;
            }
            let mut next = local.clone();
            if let Some(remote) = remote.as_mut() {
                next.extend(remote.borrow_and_update().iter().cloned());
            }
            tx.send_if_modified(|cur| {
                if *cur != next {
                    *cur = next;
                    true
                } else {
                    false
                }
            });
            if pruned_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(600)) {
                pruned_at = Some(Instant::now());
                if let Err(e) = pruner.prune(now_ms()).await {
                    tracing::warn!(error = %e, "pruning signal rollups");
                }
                if let Err(e) = states.prune(now_ms()).await {
                    tracing::warn!(error = %e, "pruning the state timeline");
                }
            }
            if tx.is_closed() {
                break;
            }
        }
    });
    Feeds {
        fleet: rx,
        gpu: gpu_rx,
        history,
    }
}
