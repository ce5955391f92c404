//! The incident runbook as rules: the symptom table (health × metrics), the three OOM cases
//! and the startup-failure table, each evaluated on one captured [`Evidence`]. The result is
//! a diagnosis: the rows that hold, each with the readings that support it and the runbook's
//! action, most destructive last.
//!
//! Row wording (diagnosis and action) lives in the locales as `rule-<id>-diagnosis` and
//! `rule-<id>-action`; evidence lines are locale keys with arguments, so the same diagnosis
//! reads in English and Russian.

use crate::domain::bench::{mean, median};
use crate::domain::engine::{EngineKind, EngineState};
use crate::domain::gpu::{correlated, foreign, GpuState, XidBlame};
use crate::domain::logscan::{investigate, Investigation, Signature};
use crate::domain::logseries::{queue_row, QueueRow};
pub use crate::domain::rows::{Rule, Step};
use crate::domain::series::Point;
use crate::domain::startup_failure::FailureMatch;
use serde::{Deserialize, Serialize};

/// Everything the triage looked at, captured before anything is touched (operating rule 1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Evidence {
    pub captured_at_ms: i64,
    pub profile: String,
    pub engine_kind: Option<EngineKind>,
    pub state: Option<EngineState>,
    /// `/health` status; `None` when nothing answered (the runbook's "000").
    pub health_status: Option<u16>,
    pub health_ms: Option<f64>,
    /// The one-token completion: `Some(ms)` answered, `None` with `probe_failed` no answer.
    pub probe_ms: Option<f64>,
    pub probe_failed: bool,
    /// The metric window, oldest first (the console's ring, or the CLI's own scrapes).
    pub points: Vec<Point>,
    pub metrics_note: Option<String>,
    pub gpu: Option<GpuState>,
    /// The last lines of the engine log.
    pub log_tail: Vec<String>,
    /// The last start's failure, when it failed.
    pub failure: Option<FailureMatch>,
    pub profile_env: String,
    pub engine_version: Option<String>,
    /// Changes shortly before the symptoms: profile edits, engine version changes.
    pub recent_changes: Vec<Change>,
    /// The operator (or an alert) says clients see errors although the engine looks fine.
    pub clients_see_errors: bool,
    /// The investigator's pass over the whole log (the tail above is what is shown); `None`
    /// when only the tail was available.
    #[serde(default)]
    pub investigation: Option<Investigation>,
    /// A start in progress stalled in one phase (against the profile's earlier starts).
    #[serde(default)]
    pub stall: Option<crate::domain::phases::Stall>,
    /// When the engine process exited, if it died (Unix ms).
    #[serde(default)]
    pub died_at_ms: Option<i64>,
    /// The model directory against the air-gap rules (hashes only where already known): what
    /// an incomplete transfer left out, named by file.
    #[serde(default)]
    pub model_check: Option<crate::domain::modelcheck::VerifyReport>,
    /// The set this profile last started well on against the host now (only when the start
    /// failed on a driver, CUDA or torch mismatch).
    #[serde(default)]
    pub pins: Option<crate::domain::pins::PinComparison>,
    /// What the console captured when it called the engine hung or dead (before a restart
    /// could destroy it), if that was recently.
    #[serde(default)]
    pub capture: Option<crate::domain::capture::Capture>,
}

/// A change before the incident, from the profile store or the recorded engine versions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Change {
    pub at_ms: i64,
    pub what: String,
}

pub use super::reading::Reading;

fn reading(key: &str, args: &[(&str, String)]) -> Reading {
    Reading::new(key, args)
}

/// What the console can do about a finding, from the least destructive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Action {
    /// Run smoke-toolcall (the after-upgrade path and the proxy/parser row).
    Smoke,
    /// Open the profile with a suggested change (`KEY=VALUE`), to be reviewed and served.
    EditProfile { key: String, value: String },
    /// Serve the profile (a dead engine whose cause is understood).
    Serve,
    /// Stop the engine.
    Stop,
    /// Restart: only for dead, hung, OOM under load.
    Restart,
}

impl Action {
    pub fn id(&self) -> &'static str {
        match self {
            Action::Smoke => "smoke",
            Action::EditProfile { .. } => "edit-profile",
            Action::Serve => "serve",
            Action::Stop => "stop",
            Action::Restart => "restart",
        }
    }
}

/// One row that holds, with its supporting readings and the actions it offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Finding {
    pub rule: Rule,
    pub evidence: Vec<Reading>,
    pub actions: Vec<Action>,
}

/// What each step found (for the wizard's step cards), whether or not a rule fired.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct StepResult {
    pub step: Step,
    pub readings: Vec<Reading>,
}

/// The triage result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Diagnosis {
    pub steps: Vec<StepResult>,
    /// Rows that hold, most specific first; the first is the diagnosis.
    pub findings: Vec<Finding>,
    /// A change shortly before the symptoms: smoke-toolcall first, rollback offered.
    pub after_upgrade: bool,
    pub investigation: Investigation,
}

impl Diagnosis {
    pub fn primary(&self) -> Option<&Finding> {
        self.findings.first()
    }
}

/// How long before the capture a change counts as "shortly before".
pub const RECENT_CHANGE_MS: i64 = 24 * 3600 * 1000;

fn fmt0(v: f64) -> String {
    format!("{v:.0}")
}

/// A signal over the window's first, middle and last thirds (ignoring gaps; the middle is none
/// under three values), each third reduced to one figure: a trend the runbook's "growing" rows
/// can trust, where two single samples are noise (a p95 from a histogram with few requests
/// jumps between buckets).
fn thirds(
    points: &[Point],
    pick: impl Fn(&Point) -> Option<f64>,
    reduce: fn(Vec<f64>) -> Option<f64>,
) -> Option<[Option<f64>; 3]> {
    let values: Vec<f64> = points.iter().filter_map(pick).collect();
    let n = values.len();
    let k = (n / 3).max(1);
    if n == 0 {
        return None;
    }
    let middle = values.get(k..n.saturating_sub(k)).unwrap_or_default();
    Some([
        reduce(values[..k].to_vec()),
        reduce(middle.to_vec()),
        reduce(values[n - k..].to_vec()),
    ])
}

/// The medians of the window's first and last thirds: where a "growing" row reads a signal.
fn trend(points: &[Point], pick: impl Fn(&Point) -> Option<f64>) -> Option<(f64, f64)> {
    thirds(points, pick, median).and_then(|[first, _, last]| first.zip(last))
}

/// How much more the busiest third of the window takes in than the quietest ("the same
/// traffic" is within [`SAME_TRAFFIC`]): each third's mean rate, so the sum of its arrivals,
/// which a Poisson burst moves less than a median of short intervals.
fn traffic_spread(points: &[Point], pick: impl Fn(&Point) -> Option<f64>) -> Option<f64> {
    let rates: Vec<f64> = thirds(points, pick, mean)?.into_iter().flatten().collect();
    let low = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let high = rates.iter().copied().fold(0.0, f64::max);
    (low > 0.0).then_some(high / low)
}

/// "The same traffic" of the runbook's TPOT row: arrivals within 30 % across the window. A
/// decode step grows with the batch, so a load half again as large slows TPOT by itself.
const SAME_TRAFFIC: f64 = 1.3;

/// First and last values of a signal over the window (ignoring gaps).
fn ends(points: &[Point], pick: impl Fn(&Point) -> Option<f64>) -> Option<(f64, f64)> {
    let first = points.iter().find_map(&pick)?;
    let last = points.iter().rev().find_map(&pick)?;
    Some((first, last))
}

/// The window's span in whole minutes (at least 1).
fn minutes(points: &[Point]) -> String {
    match (points.first(), points.last()) {
        (Some(a), Some(b)) => fmt0(((b.t_ms - a.t_ms) as f64 / 60_000.0).max(1.0)),
        _ => "0".into(),
    }
}

/// Preemptions above one every two seconds in at least two of the latest points: a burst, as
/// the investigator counts it (vLLM V1 logs no line per preemption).
pub fn preemption_bursts(points: &[Point]) -> bool {
    points
        .iter()
        .rev()
        .take(6)
        .filter(|p| p.live.rates.preemptions_per_s.is_some_and(|r| r > 0.5))
        .count()
        >= 2
}

/// Whether the engine produced tokens in the latest window: a probe stuck behind a long but
/// moving queue is a queue problem, not a hang.
fn generating(points: &[Point]) -> bool {
    points
        .iter()
        .rev()
        .find_map(|p| p.live.rates.generation_tokens_per_s)
        .is_some_and(|g| g > 0.0)
}

/// Runs every rule on the evidence: the runbook's four steps in its order (health, metrics,
/// GPU, logs), each a function that reads its step and adds the rows that hold, then the rows
/// that need more than one step.
pub fn diagnose(ev: &Evidence) -> Diagnosis {
    let bursts = preemption_bursts(&ev.points);
    let investigation = ev
        .investigation
        .clone()
        .unwrap_or_else(|| investigate(&ev.log_tail.join("\n"), bursts));
    let mut t = Triage {
        ev,
        investigation: &investigation,
        alive: ev.health_status == Some(200),
        findings: Vec::new(),
    };
    let steps = vec![t.health(), t.metrics(bursts), t.gpu(), t.logs()];
    t.stalled_start();
    t.gpu_fault();
    t.proxy_parser();
    let after_upgrade = t.smoke_after_upgrade();
    let findings = t.findings;
    Diagnosis {
        steps,
        findings,
        after_upgrade,
        investigation,
    }
}

/// One diagnosis in progress: the evidence, the log's investigation, whether `/health`
/// answered 200, and the rows found so far (most specific first).
struct Triage<'a> {
    ev: &'a Evidence,
    investigation: &'a Investigation,
    alive: bool,
    findings: Vec<Finding>,
}

impl Triage<'_> {
    /// Step 1, health: `/health` and the one-token probe; dead, or hung while nothing generates.
    fn health(&mut self) -> StepResult {
        let (ev, points, alive, investigation) = (self.ev, &self.ev.points, self.alive, self.investigation);
        let mut health = Vec::new();
        match ev.health_status {
            Some(code) => health.push(reading(
                "ev-health-status",
                &[
                    ("code", code.to_string()),
                    ("ms", ev.health_ms.map(fmt0).unwrap_or_default()),
                ],
            )),
            None => health.push(reading("ev-health-none", &[])),
        }
        if let Some(ms) = ev.probe_ms {
            health.push(reading("ev-probe-ok", &[("ms", fmt0(ms))]));
        } else if ev.probe_failed {
            health.push(reading("ev-probe-failed", &[]));
        }
        if ev.health_status.is_none() {
            // OOM under load and failed starts are more specific than "dead"; they come from the
            // log step below and sort first.
            let mut evidence = health.clone();
            if let Some(state) = ev.state {
                evidence.push(reading("ev-state", &[("state", state.as_str().to_string())]));
            }
            self.findings.push(Finding {
                rule: Rule::Dead,
                evidence,
                actions: vec![Action::Serve, Action::Restart],
            });
        } else if alive && (ev.probe_failed || ev.state == Some(EngineState::Hung)) && !generating(points) {
            let mut evidence = health.clone();
            for s in [Signature::CudaError, Signature::Nccl, Signature::Watchdog] {
                if let Some(f) = investigation.scan.get(s) {
                    evidence.push(reading(
                        "ev-log-line",
                        &[("line", f.last.line.to_string()), ("text", f.last.text.clone())],
                    ));
                }
            }
            if let Some((w0, w1)) = ends(points, |p| p.live.waiting.zip(p.live.running).map(|(w, r)| w + r)) {
                if let Some(g) = points.iter().rev().find_map(|p| p.live.rates.generation_tokens_per_s) {
                    if w1 > 0.0 && g == 0.0 {
                        evidence.push(reading("ev-queue-stuck", &[("from", fmt0(w0)), ("to", fmt0(w1))]));
                    }
                }
            }
            self.findings.push(Finding {
                rule: Rule::Hung,
                evidence,
                actions: vec![Action::Restart],
            });
        }
        StepResult {
            step: Step::Health,
            readings: health,
        }
    }

    /// Step 2, metrics: the queue and KV rows, preemption bursts, TTFT against the prefix-cache hit rate.
    fn metrics(&mut self, bursts: bool) -> StepResult {
        let (ev, points, alive) = (self.ev, &self.ev.points, self.alive);
        let mut metrics = Vec::new();
        if let Some(note) = &ev.metrics_note {
            metrics.push(reading("ev-metrics-none", &[("reason", note.clone())]));
        } else if points.is_empty() {
            metrics.push(reading("ev-metrics-empty", &[]));
        }
        let mins = minutes(points);
        let waiting = ends(points, |p| p.live.waiting);
        let kv = points.iter().rev().find_map(|p| p.live.kv_usage);
        if let Some((w0, w1)) = waiting {
            metrics.push(reading(
                "ev-waiting",
                &[("from", fmt0(w0)), ("to", fmt0(w1)), ("minutes", mins.clone())],
            ));
        }
        if let Some(k) = kv {
            metrics.push(reading("ev-kv", &[("pct", fmt0(k * 100.0))]));
        }
        // The queue rows, evaluated by the same function the log investigator uses on the
        // engines' stats lines.
        let samples: Vec<(f64, Option<f64>)> = points
            .iter()
            .filter_map(|p| p.live.waiting.map(|w| (w, p.live.kv_usage)))
            .collect();
        if let (true, Some(q)) = (alive, queue_row(&samples)) {
            let (w0, w1) = waiting.unwrap_or_default();
            let k = kv.unwrap_or(0.0);
            let evidence = vec![reading(
                "ev-waiting-kv",
                &[
                    ("from", fmt0(w0)),
                    ("to", fmt0(w1)),
                    ("minutes", mins.clone()),
                    ("pct", fmt0(k * 100.0)),
                ],
            )];
            self.findings.push(queue_finding(ev, q, evidence));
        }
        let preempt = points.iter().rev().find_map(|p| p.live.rates.preemptions_per_s);
        if let Some(p) = preempt {
            metrics.push(reading("ev-preemptions", &[("rate", format!("{p:.1}"))]));
        }
        if alive && bursts {
            self.findings.push(Finding {
                rule: Rule::Preemptions,
                evidence: vec![reading(
                    "ev-preemptions",
                    &[("rate", format!("{:.1}", preempt.unwrap_or(0.0)))],
                )],
                actions: kv_relief(ev),
            });
        }
        // Trends, like the TPOT row: the first third against the last.
        let ttft = trend(points, |p| p.live.ttft_p95_ms);
        let hit = trend(points, |p| p.live.rates.prefix_hit_rate);
        if let (true, Some((t0, t1)), Some((h0, h1))) = (alive, ttft, hit) {
            // p95 up by half (and by more than timer noise) while the hit rate lost 20 points.
            if t1 >= t0 * 1.5 && t1 - t0 >= 5.0 && h0 - h1 >= 0.2 {
                self.findings.push(Finding {
                    rule: Rule::PrefixMiss,
                    evidence: vec![reading(
                        "ev-ttft-hit",
                        &[
                            ("from", fmt0(t0)),
                            ("to", fmt0(t1)),
                            ("hit_from", fmt0(h0 * 100.0)),
                            ("hit_to", fmt0(h1 * 100.0)),
                        ],
                    )],
                    actions: vec![],
                });
            }
        }
        StepResult {
            step: Step::Metrics,
            readings: metrics,
        }
    }

    /// Step 3, GPU: memory, foreign processes, ECC, recent Xids; ITL up at the same traffic (a neighbour).
    fn gpu(&mut self) -> StepResult {
        let (ev, points, alive) = (self.ev, &self.ev.points, self.alive);
        let mut gpu = Vec::new();
        match &ev.gpu {
            Some(GpuState::NoDriver { reason }) => gpu.push(reading("ev-gpu-none", &[("reason", reason.clone())])),
            Some(state @ GpuState::Available { gpus, .. }) => {
                for g in gpus {
                    gpu.push(reading(
                        "ev-gpu",
                        &[
                            ("index", g.index.to_string()),
                            (
                                "used",
                                format!("{:.1}", g.memory_used_bytes as f64 / (1u64 << 30) as f64),
                            ),
                            (
                                "total",
                                format!("{:.1}", g.memory_total_bytes as f64 / (1u64 << 30) as f64),
                            ),
                            (
                                "temp",
                                g.temperature_c.map(|t| t.to_string()).unwrap_or_else(|| "?".into()),
                            ),
                            ("throttle", g.throttle.join(", ")),
                        ],
                    ));
                }
                for (index, p) in foreign(state) {
                    gpu.push(reading(
                        "ev-gpu-foreign",
                        &[("index", index.to_string()), ("pid", p.pid.to_string())],
                    ));
                }
                for g in gpus {
                    let pending = g.retired_pages_pending == Some(true) || g.remapped_rows_pending == Some(true);
                    if g.ecc_uncorrected.is_some_and(|n| n > 0) || pending {
                        gpu.push(reading(
                            "ev-gpu-ecc",
                            &[
                                ("index", g.index.to_string()),
                                ("count", g.ecc_uncorrected.unwrap_or(0).to_string()),
                                ("pending", if pending { "yes" } else { "no" }.to_string()),
                            ],
                        ));
                    }
                }
                if let GpuState::Available { events, .. } = state {
                    for e in events
                        .iter()
                        .filter(|e| ev.captured_at_ms - e.at_ms <= RECENT_CHANGE_MS)
                        .rev()
                        .take(5)
                    {
                        gpu.push(xid_reading(e, ev.captured_at_ms));
                    }
                }
            }
            None => {}
        }
        let tpot = trend(points, |p| p.live.itl_p95_ms);
        // "The same traffic": the prompt tokens the engine takes in (arrivals, as long as it keeps
        // up) across the whole window, its middle included: a burst in the middle leaves decode
        // slow while its batch drains, at the first third's arrivals. The running count is no
        // guide, it grows as decode slows.
        let spread = traffic_spread(points, |p| p.live.rates.prompt_tokens_per_s);
        let running = points.iter().rev().find_map(|p| p.live.running).unwrap_or(0.0);
        if let (true, Some((t0, t1)), Some(spread)) = (alive, tpot, spread) {
            let same_traffic = spread <= SAME_TRAFFIC;
            if t0 > 0.0 && t1 >= t0 * 1.5 && same_traffic {
                let mut evidence = vec![reading(
                    "ev-tpot",
                    &[("from", fmt0(t0)), ("to", fmt0(t1)), ("running", fmt0(running))],
                )];
                evidence.extend(
                    gpu.iter()
                        .filter(|r| r.key == "ev-gpu-foreign" || r.key == "ev-gpu")
                        .cloned(),
                );
                self.findings.push(Finding {
                    rule: Rule::TpotNeighbor,
                    evidence,
                    actions: vec![],
                });
            }
        }
        StepResult {
            step: Step::Gpu,
            readings: gpu,
        }
    }

    /// Step 4, logs: every signature found, a failed start's row (with the model check or the pinned versions), OOM under load, and the log's own row where the live path could not see it.
    fn logs(&mut self) -> StepResult {
        let (ev, points, alive, investigation) = (self.ev, &self.ev.points, self.alive, self.investigation);
        let mut logs = Vec::new();
        for f in &investigation.scan.found {
            if f.signature != Signature::Ready {
                logs.push(reading(
                    "ev-log-signature",
                    &[
                        ("signature", f.signature.id().to_string()),
                        ("count", f.count.to_string()),
                        ("line", f.last.line.to_string()),
                        ("text", f.last.text.clone()),
                    ],
                ));
            }
        }
        // A failed start never became ready; an engine that was ready and then ran out of memory
        // is the OOM-under-load case, even though its exit matched the OOM startup row.
        let startup_row = ev.failure.as_ref().map(|m| m.row).or(investigation.startup_failure);
        let served = investigation.served;
        let log_lines = |inv: &Investigation| -> Vec<Reading> {
            inv.evidence
                .iter()
                .map(|h| reading("ev-log-line", &[("line", h.line.to_string()), ("text", h.text.clone())]))
                .collect()
        };
        if investigation.row == Some(Rule::OomUnderLoad) && !alive {
            self.findings.insert(
                0,
                Finding {
                    rule: Rule::OomUnderLoad,
                    evidence: log_lines(investigation),
                    actions: vec![
                        Action::EditProfile {
                            key: "MEM_FRACTION".into(),
                            value: "0.88".into(),
                        },
                        Action::EditProfile {
                            key: "MAX_BATCHED_TOKENS".into(),
                            value: "8192".into(),
                        },
                        Action::Restart,
                    ],
                },
            );
        } else if let (Some(row), false, false) = (startup_row, alive, served) {
            let line = ev
                .failure
                .as_ref()
                .map(|m| m.line.clone())
                .or_else(|| investigation.evidence.first().map(|h| h.text.clone()))
                .unwrap_or_default();
            let rule = Rule::of_startup(row);
            let mut evidence = vec![reading("ev-log-line", &[("line", String::new()), ("text", line)])];
            // The runbook's action for an incomplete transfer is to check the directory: the
            // check's errors are the evidence (the first five).
            if rule == Rule::StartIncompleteWeights {
                if let Some(check) = &ev.model_check {
                    evidence.extend(check.errors().take(5).map(|f| {
                        reading(
                            "ev-model-finding",
                            &[("file", f.file.clone()), ("detail", f.detail.clone())],
                        )
                    }));
                }
            }
            // "Restore the pinned versions from the journal": each pinned version against the
            // host's, the ones that moved first.
            if rule == Rule::StartDriverMismatch {
                if let Some(c) = &ev.pins {
                    let none = || "?".to_string();
                    let mut pins = c.pins();
                    pins.sort_by_key(|p| !p.differs());
                    evidence.extend(
                        pins.iter()
                            .filter(|p| p.pinned.is_some() || p.current.is_some())
                            .map(|p| {
                                reading(
                                    if p.differs() { "ev-pin-moved" } else { "ev-pin-same" },
                                    &[
                                        ("field", p.field.clone()),
                                        ("pinned", p.pinned.clone().unwrap_or_else(none)),
                                        ("current", p.current.clone().unwrap_or_else(none)),
                                    ],
                                )
                            }),
                    );
                }
            }
            let actions = match rule {
                Rule::OomStartKv => kv_relief(ev),
                Rule::OomStartWeights => vec![Action::EditProfile {
                    key: "QUANTIZATION".into(),
                    value: "fp8".into(),
                }],
                _ => vec![Action::Serve],
            };
            self.findings.insert(
                0,
                Finding {
                    rule,
                    evidence,
                    actions,
                },
            );
        } else if investigation.row == Some(Rule::StartFailed) && !alive && !served {
            // A start that aborted on a cause no row names: its root-cause line leads.
            self.findings.insert(
                0,
                Finding {
                    rule: Rule::StartFailed,
                    evidence: log_lines(investigation),
                    actions: vec![Action::Serve],
                },
            );
        }
        // The log's own row where the live path could not see it: the queue rows from the stats
        // lines when there is no metric window, the log's lines behind a dead engine.
        match investigation.row {
            Some(rule @ (Rule::KvExhausted | Rule::SeqCapped | Rule::Preemptions))
                if alive && points.is_empty() && !self.findings.iter().any(|f| f.rule == rule) =>
            {
                let q = match rule {
                    Rule::SeqCapped => Some(QueueRow::SeqCapped),
                    Rule::KvExhausted => Some(QueueRow::KvExhausted),
                    _ => None,
                };
                let mut finding = match q {
                    Some(q) => queue_finding(ev, q, Vec::new()),
                    None => Finding {
                        rule,
                        evidence: Vec::new(),
                        actions: kv_relief(ev),
                    },
                };
                finding.evidence = log_lines(investigation);
                self.findings.push(finding);
            }
            Some(Rule::Dead | Rule::Hung) => {
                if let Some(f) = self
                    .findings
                    .iter_mut()
                    .find(|f| matches!(f.rule, Rule::Dead | Rule::Hung))
                {
                    f.evidence.extend(log_lines(investigation));
                }
            }
            _ => {}
        }
        StepResult {
            step: Step::Logs,
            readings: logs,
        }
    }

    /// A start stalled in one phase, far past this profile's earlier starts: a hang at start.
    fn stalled_start(&mut self) {
        let ev = self.ev;
        if let Some(st) = ev.stall {
            if !self.findings.iter().any(|f| f.rule == Rule::Hung) {
                self.findings.insert(
                    0,
                    Finding {
                        rule: Rule::Hung,
                        evidence: vec![reading(
                            "ev-stalled-phase",
                            &[
                                ("phase", st.phase.as_str().to_string()),
                                ("elapsed", fmt0(st.elapsed_s)),
                                ("median", format!("{:.1}", st.median_s)),
                                ("starts", st.starts.to_string()),
                            ],
                        )],
                        actions: vec![Action::Restart],
                    },
                );
            }
        }
    }

    /// A death or hang within two minutes of a GPU fault: the GPU, not the profile.
    fn gpu_fault(&mut self) {
        let ev = self.ev;
        let failed = self
            .findings
            .iter()
            .any(|f| matches!(f.rule, Rule::Dead | Rule::Hung | Rule::OomUnderLoad));
        if let (true, Some(GpuState::Available { events, .. })) = (failed, &ev.gpu) {
            let at = ev.died_at_ms.unwrap_or(ev.captured_at_ms);
            if let Some(e) = correlated(events, at).filter(|e| e.blame().0 != XidBlame::Application) {
                self.findings.insert(
                    0,
                    Finding {
                        rule: Rule::GpuFault,
                        evidence: vec![xid_reading(e, at)],
                        actions: vec![],
                    },
                );
            }
        }
    }

    /// Metrics fine, engine fine, clients still see errors: proxy, timeouts, parser.
    fn proxy_parser(&mut self) {
        let (ev, alive) = (self.ev, self.alive);
        if alive && self.findings.is_empty() && ev.clients_see_errors {
            self.findings.push(Finding {
                rule: Rule::ProxyParser,
                evidence: vec![reading("ev-clients-errors", &[])],
                actions: vec![Action::Smoke],
            });
        }
    }

    /// A change shortly before the symptoms: smoke-toolcall first in every row's actions.
    fn smoke_after_upgrade(&mut self) -> bool {
        let ev = self.ev;
        let after_upgrade = ev
            .recent_changes
            .iter()
            .any(|c| ev.captured_at_ms - c.at_ms <= RECENT_CHANGE_MS && c.at_ms <= ev.captured_at_ms);
        if after_upgrade {
            for f in &mut self.findings {
                if !f.actions.contains(&Action::Smoke) {
                    f.actions.insert(0, Action::Smoke);
                }
            }
        }
        after_upgrade
    }
}

/// A GPU event as a reading: how long before `at_ms`, which GPU, the Xid and what it means.
fn xid_reading(e: &crate::domain::gpu::GpuEvent, at_ms: i64) -> Reading {
    let (blame, meaning) = e.blame();
    reading(
        "ev-gpu-xid",
        &[
            ("seconds", fmt0(((at_ms - e.at_ms) as f64 / 1000.0).max(0.0))),
            ("index", e.gpu.to_string()),
            ("xid", e.xid.map(|x| x.to_string()).unwrap_or_else(|| "ECC".into())),
            ("meaning", meaning.to_string()),
            (
                "blame",
                match blame {
                    XidBlame::Hardware => "hardware",
                    XidBlame::Driver => "driver",
                    XidBlame::Application => "application",
                }
                .to_string(),
            ),
        ],
    )
}

/// The finding for a queue row, with the runbook's action for it.
fn queue_finding(ev: &Evidence, q: QueueRow, evidence: Vec<Reading>) -> Finding {
    match q {
        QueueRow::KvExhausted => Finding {
            rule: Rule::KvExhausted,
            evidence,
            actions: kv_relief(ev),
        },
        QueueRow::SeqCapped => Finding {
            rule: Rule::SeqCapped,
            evidence,
            actions: vec![Action::EditProfile {
                key: "MAX_RUNNING_REQUESTS".into(),
                value: profile_value(ev, "MAX_RUNNING_REQUESTS")
                    .and_then(|v| v.parse::<u32>().ok())
                    .map(|n| n.saturating_mul(2).to_string())
                    .unwrap_or_else(|| "512".into()),
            }],
        },
    }
}

/// A profile value from the captured profile file.
fn profile_value(ev: &Evidence, key: &str) -> Option<String> {
    ev.profile_env.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches(['\'', '"']).to_string())
    })
}

/// The runbook's KV relief: lower max-model-len, or fp8 KV when it is not already.
fn kv_relief(ev: &Evidence) -> Vec<Action> {
    let mut actions = Vec::new();
    let ctx = profile_value(ev, "CONTEXT_LENGTH").and_then(|v| v.parse::<u32>().ok());
    actions.push(Action::EditProfile {
        key: "CONTEXT_LENGTH".into(),
        value: ctx
            .map(|c| (c / 2).max(2048).to_string())
            .unwrap_or_else(|| "16384".into()),
    });
    if profile_value(ev, "KV_CACHE_DTYPE").is_none_or(|v| !v.starts_with("fp8")) {
        actions.push(Action::EditProfile {
            key: "KV_CACHE_DTYPE".into(),
            value: "fp8".into(),
        });
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::signals::{Live, Rates};

    fn healthy() -> Evidence {
        Evidence {
            captured_at_ms: 10_000_000,
            profile: "p".into(),
            state: Some(EngineState::Healthy),
            health_status: Some(200),
            health_ms: Some(3.0),
            probe_ms: Some(40.0),
            profile_env: "ENGINE=sim\nMODEL=/m\nCONTEXT_LENGTH=32768\n".into(),
            ..Default::default()
        }
    }

    fn series(n: i64, f: impl Fn(i64) -> Live) -> Vec<Point> {
        (0..n)
            .map(|i| Point {
                t_ms: 10_000_000 - (n - i) * 30_000,
                live: f(i),
                gpu: None,
            })
            .collect()
    }

    fn rule_of(ev: &Evidence) -> Option<Rule> {
        diagnose(ev).primary().map(|f| f.rule)
    }

    /// Every row of the three tables, from evidence built by hand (the simulator-driven test in
    /// `server/tests/it/triage.rs` drives the same rules from real faults).
    #[test]
    fn every_row_of_every_table() {
        let mut cases: Vec<(Rule, Evidence)> = Vec::new();
        let mut ev = healthy();
        ev.health_status = None;
        ev.state = Some(EngineState::Dead);
        cases.push((Rule::Dead, ev));
        let mut ev = healthy();
        ev.probe_ms = None;
        ev.probe_failed = true;
        cases.push((Rule::Hung, ev));
        let mut ev = healthy();
        ev.points = series(10, |i| Live {
            waiting: Some(i as f64 * 4.0),
            kv_usage: Some(0.96),
            ..Default::default()
        });
        cases.push((Rule::KvExhausted, ev));
        let mut ev = healthy();
        ev.points = series(10, |i| Live {
            waiting: Some(i as f64 * 4.0),
            kv_usage: Some(0.40),
            ..Default::default()
        });
        cases.push((Rule::SeqCapped, ev));
        let mut ev = healthy();
        ev.points = series(10, |_| Live {
            rates: Rates {
                preemptions_per_s: Some(3.0),
                ..Default::default()
            },
            ..Default::default()
        });
        cases.push((Rule::Preemptions, ev));
        let mut ev = healthy();
        ev.points = series(10, |i| Live {
            ttft_p95_ms: Some(if i < 5 { 80.0 } else { 400.0 }),
            rates: Rates {
                prefix_hit_rate: Some(if i < 5 { 0.8 } else { 0.05 }),
                ..Default::default()
            },
            ..Default::default()
        });
        cases.push((Rule::PrefixMiss, ev));
        let mut ev = healthy();
        ev.points = series(10, |i| Live {
            running: Some(8.0),
            itl_p95_ms: Some(if i < 5 { 20.0 } else { 80.0 }),
            rates: Rates {
                prompt_tokens_per_s: Some(1000.0),
                ..Default::default()
            },
            ..Default::default()
        });
        cases.push((Rule::TpotNeighbor, ev));
        let mut ev = healthy();
        ev.clients_see_errors = true;
        cases.push((Rule::ProxyParser, ev));
        let failed_start = |line: &str| {
            let mut ev = healthy();
            ev.health_status = None;
            ev.state = Some(EngineState::Dead);
            ev.log_tail = vec!["INFO starting".into(), line.to_string()];
            ev
        };
        cases.push((
            Rule::OomStartWeights,
            failed_start("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."),
        ));
        cases.push((Rule::OomStartKv, failed_start("ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.50 GiB).")));
        let mut ev = failed_start("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.");
        ev.log_tail.insert(1, "INFO Application startup complete.".into());
        ev.log_tail
            .push("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.".into());
        cases.push((Rule::OomUnderLoad, ev));
        cases.push((Rule::StartGpuMemoryTaken, failed_start("ValueError: Free memory on device cuda:0 (10.2/79.1 GiB) on startup is less than desired GPU memory utilization (0.92, 72.8 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.")));
        cases.push((
            Rule::StartAddressInUse,
            failed_start("OSError: [Errno 98] Address already in use"),
        ));
        cases.push((Rule::StartIncompleteWeights, failed_start("ValueError: Invalid repository ID or local directory specified: '/models/x'. Please verify the following requirements: 1. Provide a valid Hugging Face repository ID. 2. Specify a local directory that contains a recognized configuration file.")));
        cases.push((
            Rule::StartUnsupportedArch,
            failed_start("Value error, Model architectures ['FooForCausalLM'] are not supported for now."),
        ));
        cases.push((
            Rule::StartDriverMismatch,
            failed_start("RuntimeError: CUDA driver version is insufficient for CUDA runtime version"),
        ));
        cases.push((
            Rule::StartInvalidArgument,
            failed_start(
                "vllm serve: error: argument --dtype: invalid choice: 'bf17' (choose from 'auto', 'bfloat16')",
            ),
        ));
        cases.push((Rule::StartContextAboveModel, failed_start("  Value error, User-specified max_model_len (8192) is greater than the derived max_model_len (max_position_embeddings=4096.0 or model_max_length=None in model's config.json).")));
        let mut ev = failed_start("(EngineCore pid=2) ERROR KeyError: 'model.layers.0.mlp.gate_proj.weight'");
        ev.log_tail.push(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}".into(),
        );
        cases.push((Rule::StartFailed, ev));
        let mut ev = healthy();
        ev.health_status = None;
        ev.state = Some(EngineState::Dead);
        ev.gpu = Some(GpuState::Available {
            driver: None,
            cuda: None,
            gpus: vec![],
            events: vec![crate::domain::gpu::GpuEvent {
                at_ms: ev.captured_at_ms - 3_000,
                gpu: 0,
                xid: Some(79),
                double_bit_ecc: false,
            }],
        });
        cases.push((Rule::GpuFault, ev));
        let covered: Vec<Rule> = cases.iter().map(|(r, _)| *r).collect();
        for r in Rule::ALL {
            assert!(covered.contains(&r), "row {} has no case", r.id());
        }
        for (want, ev) in cases {
            let d = diagnose(&ev);
            assert_eq!(
                d.primary().map(|f| f.rule),
                Some(want),
                "row {}: {:?}",
                want.id(),
                d.findings
            );
            assert!(
                !d.primary().unwrap().evidence.is_empty(),
                "row {} cites evidence",
                want.id()
            );
        }
    }

    #[test]
    fn a_healthy_engine_has_no_finding_and_restart_is_rare() {
        assert_eq!(rule_of(&healthy()), None);
        for r in Rule::ALL {
            assert_eq!(
                r.allows_restart(),
                matches!(r, Rule::Dead | Rule::Hung | Rule::OomUnderLoad),
                "{}",
                r.id()
            );
        }
        // The KV row never offers a restart: it does not fix a queue.
        let mut ev = healthy();
        ev.points = series(10, |i| Live {
            waiting: Some(i as f64 * 4.0),
            kv_usage: Some(0.96),
            ..Default::default()
        });
        let d = diagnose(&ev);
        let f = d.primary().unwrap();
        assert!(!f.actions.contains(&Action::Restart));
        assert_eq!(
            f.actions[0],
            Action::EditProfile {
                key: "CONTEXT_LENGTH".into(),
                value: "16384".into()
            }
        );
        assert_eq!(f.evidence[0].args[0], ("from".to_string(), "0".to_string()));
        assert_eq!(f.evidence[0].args[1], ("to".to_string(), "36".to_string()));
    }

    #[test]
    fn a_recent_change_puts_smoke_toolcall_first() {
        let mut ev = healthy();
        ev.clients_see_errors = true;
        ev.recent_changes.push(Change {
            at_ms: ev.captured_at_ms - 3_600_000,
            what: "engine version 0.32.0 → 0.33.0".into(),
        });
        let d = diagnose(&ev);
        assert!(d.after_upgrade);
        assert_eq!(d.primary().unwrap().actions[0], Action::Smoke);
        ev.recent_changes[0].at_ms = ev.captured_at_ms - 3 * RECENT_CHANGE_MS;
        assert!(!diagnose(&ev).after_upgrade, "an old change is not 'shortly before'");
    }

    /// A death three seconds after Xid 79 names the GPU, not the profile; an application Xid
    /// or one long before does not.
    #[test]
    fn a_death_next_to_a_gpu_fault_is_the_gpu() {
        use crate::domain::gpu::GpuEvent;
        let died = 10_000_000;
        let gpu = |events: Vec<GpuEvent>| {
            Some(GpuState::Available {
                driver: None,
                cuda: None,
                gpus: vec![],
                events,
            })
        };
        let xid = |at_ms, code| GpuEvent {
            at_ms,
            gpu: 1,
            xid: Some(code),
            double_bit_ecc: false,
        };
        let mut ev = Evidence {
            captured_at_ms: died + 60_000,
            died_at_ms: Some(died),
            gpu: gpu(vec![xid(died - 3_000, 79)]),
            ..Default::default()
        };
        let d = diagnose(&ev);
        let first = d.primary().unwrap();
        assert_eq!(first.rule, Rule::GpuFault);
        let args = &first.evidence[0].args;
        assert!(
            args.contains(&("seconds".into(), "3".into())) && args.contains(&("xid".into(), "79".into())),
            "{args:?}"
        );
        assert!(
            d.findings.iter().any(|f| f.rule == Rule::Dead),
            "the death is still a finding"
        );
        ev.gpu = gpu(vec![xid(died - 3_000, 31)]);
        assert_eq!(rule_of(&ev), Some(Rule::Dead));
        ev.gpu = gpu(vec![xid(died - 300_000, 79)]);
        assert_eq!(rule_of(&ev), Some(Rule::Dead));
        // A healthy engine with an old Xid is not a GPU fault, but the GPU step shows it.
        let mut ok = healthy();
        ok.gpu = gpu(vec![xid(ok.captured_at_ms - 1_000, 79)]);
        let d = diagnose(&ok);
        assert!(d.primary().is_none());
        assert!(d.steps.iter().any(|s| s.readings.iter().any(|r| r.key == "ev-gpu-xid")));
    }

    #[test]
    fn an_incomplete_transfer_cites_the_model_check() {
        use crate::domain::modelcheck::{Finding as Check, VerifyReport};
        let mut ev = healthy();
        ev.health_status = None;
        ev.state = Some(EngineState::Dead);
        ev.log_tail = vec![
            "INFO starting".into(),
            "ValueError: No tokenizer file found in directory: /m".into(),
        ];
        ev.model_check = Some(VerifyReport {
            findings: vec![
                Check::error("missing", "tokenizer.json", "missing"),
                Check::warning("no-manifest", "SHA256SUMS", "no manifest"),
            ],
            ..Default::default()
        });
        let d = diagnose(&ev);
        let f = d.primary().unwrap();
        assert_eq!(f.rule, Rule::StartIncompleteWeights);
        let cited: Vec<&Reading> = f.evidence.iter().filter(|r| r.key == "ev-model-finding").collect();
        assert_eq!(cited.len(), 1, "errors only: {:?}", f.evidence);
        assert!(cited[0].args.contains(&("file".into(), "tokenizer.json".into())));
        // Another row does not cite it.
        ev.log_tail[1] = "OSError: [Errno 98] Address already in use".into();
        let d = diagnose(&ev);
        assert!(d
            .findings
            .iter()
            .all(|f| f.evidence.iter().all(|r| r.key != "ev-model-finding")));
    }

    #[test]
    fn a_stalled_start_is_a_hang_with_its_phase() {
        use crate::domain::phases::StartupPhase;
        let ev = Evidence {
            state: Some(EngineState::Starting),
            health_status: None,
            stall: Some(crate::domain::phases::Stall {
                phase: StartupPhase::CapturingGraphs,
                elapsed_s: 95.0,
                median_s: 12.0,
                starts: 4,
            }),
            ..healthy()
        };
        let d = diagnose(&ev);
        let f = d.primary().unwrap();
        assert_eq!(f.rule, Rule::Hung);
        assert_eq!(f.evidence[0].key, "ev-stalled-phase");
        assert!(f.evidence[0]
            .args
            .contains(&("phase".into(), "capturing-graphs".into())));
    }

    /// A healthy engine under bursty traffic: single p95 readings jump between histogram buckets,
    /// so the first and the last can differ by half while nothing grows. The runbook's row is a
    /// trend ("TPOT p95 growing at the same traffic"), read from the window's first and last
    /// thirds, not from two samples (the CI run of stop 34 named a neighbour on a healthy engine).
    #[test]
    fn tpot_noise_at_the_ends_is_no_neighbour() {
        // A healthy engine's ten points: its TPOT p95 and its prompt tokens a second.
        let window = |itl: [f64; 10], traffic: [f64; 10]| {
            let mut ev = healthy();
            ev.points = series(10, |i| Live {
                running: Some(4.0),
                itl_p95_ms: Some(itl[i as usize]),
                rates: Rates {
                    prompt_tokens_per_s: Some(traffic[i as usize]),
                    ..Default::default()
                },
                ..Default::default()
            });
            rule_of(&ev)
        };
        let itl = [20.0, 34.0, 22.0, 33.0, 21.0, 35.0, 22.0, 31.0, 20.0, 32.0];
        let traffic = [600.0, 900.0, 500.0, 800.0, 700.0, 900.0, 550.0, 650.0, 750.0, 600.0];
        assert_eq!(window(itl, traffic), None);
        // The same noise around a real rise still is one.
        let risen = std::array::from_fn(|i| itl[i] * if i < 5 { 1.0 } else { 2.5 });
        assert_eq!(window(risen, traffic), Some(Rule::TpotNeighbor));
        // A burst in the middle: decode stays slow while its batch drains, at the arrivals of
        // the first third; not the same traffic.
        let itl = [12.0, 12.0, 12.0, 25.0, 27.0, 28.0, 25.0, 22.0, 20.0, 19.0];
        let traffic = [600.0, 600.0, 600.0, 3600.0, 3600.0, 3600.0, 600.0, 600.0, 600.0, 600.0];
        assert_eq!(window(itl, traffic), None);
        // More traffic, decode slower with the bigger batch: a load that grew by 80 % (the
        // simulator's step grows with the batch, as a real engine's does) is not the same
        // traffic, whatever the p95 did (the local run of the incident spec after d8f691d).
        let traffic = [400.0, 420.0, 380.0, 500.0, 560.0, 600.0, 650.0, 700.0, 720.0, 740.0];
        let itl = traffic.map(|t| 17.0 + 0.0275 * (t - 400.0));
        assert_eq!(window(itl, traffic), None);
    }
}
