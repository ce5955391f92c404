//! Startup phases with history: when each phase of a start began, how long each took, and
//! whether the phase the engine is in now has run far past what it took in earlier starts of
//! the same profile.
//!
//! A start that hangs in one phase (weights on a slow mount, graph capture stuck, NCCL init
//! waiting for a peer) otherwise shows nothing until the serve timeout (900 s by default). The
//! profile's own history is the yardstick: a phase taking over twice its median of past starts,
//! and at least [`STALL_FLOOR_S`] more than that median, is called stalled.

use crate::domain::bench::median;
use serde::{Deserialize, Serialize};

/// Coarse startup progress read from the engine's own log milestones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum StartupPhase {
    Launched,
    LoadingWeights,
    /// Weights are in; the engine measures its peak memory (vLLM's profile run; SGLang's
    /// memory-pool sizing).
    Profiling,
    AllocatingKvCache,
    CapturingGraphs,
    StartingServer,
    Ready,
}

impl StartupPhase {
    /// Every phase, in the order an engine passes them.
    pub const ALL: [StartupPhase; 7] = [
        Self::Launched,
        Self::LoadingWeights,
        Self::Profiling,
        Self::AllocatingKvCache,
        Self::CapturingGraphs,
        Self::StartingServer,
        Self::Ready,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Launched => "launched",
            Self::LoadingWeights => "loading-weights",
            Self::Profiling => "profiling",
            Self::AllocatingKvCache => "allocating-kv-cache",
            Self::CapturingGraphs => "capturing-graphs",
            Self::StartingServer => "starting-server",
            Self::Ready => "ready",
        }
    }

    /// The phase a log line proves the engine has reached, if it is a milestone.
    /// Wording follows both engines' current and older releases.
    pub fn from_log_line(line: &str) -> Option<Self> {
        if line.contains("Application startup complete.") || line.contains("fired up and ready to roll") {
            Some(Self::Ready)
        } else if line.contains("Starting vLLM server on")
            || line.contains("Starting vLLM API server")
            || line.contains("Uvicorn running on")
        {
            Some(Self::StartingServer)
        } else if line.contains("Capturing CUDA graphs")
            || line.contains("CUDA graph begin")
            || line.contains("Capture cuda graph begin")
        {
            Some(Self::CapturingGraphs)
        } else if line.contains("GPU KV cache size")
            || line.contains("Available KV cache memory")
            || line.contains("KV Cache is allocated")
        {
            Some(Self::AllocatingKvCache)
        } else if line.contains("Model loading took")
            || line.contains("Loading weights took")
            || line.contains("Loading model weights took")
            || line.contains("Load weight end")
            || line.contains("Memory profiling")
        {
            Some(Self::Profiling)
        } else if line.contains("Starting to load model")
            || line.contains("Loading model")
            || line.contains("Load weight begin")
        {
            Some(Self::LoadingWeights)
        } else {
            None
        }
    }
}

/// When a phase began, in seconds from the launch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct PhaseMark {
    pub phase: StartupPhase,
    pub at_s: f64,
}

/// A phase running far past its history.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Stall {
    pub phase: StartupPhase,
    /// Seconds in the phase so far.
    pub elapsed_s: f64,
    /// Median seconds the phase took in earlier starts.
    pub median_s: f64,
    /// How many earlier starts the median is over.
    pub starts: usize,
}

/// The least excess over the median that counts: a phase of 2 s taking 5 s is noise, not a
/// stall.
pub const STALL_FLOOR_S: f64 = 10.0;

/// How many earlier starts the median looks at (the most recent).
pub const HISTORY: usize = 10;

/// Seconds each completed phase took (a phase is complete when a later one began; the last
/// mark's phase runs to `end_s` when given).
pub fn durations(marks: &[PhaseMark], end_s: Option<f64>) -> Vec<(StartupPhase, f64)> {
    let mut out: Vec<(StartupPhase, f64)> = marks
        .windows(2)
        .map(|w| (w[0].phase, (w[1].at_s - w[0].at_s).max(0.0)))
        .collect();
    if let (Some(last), Some(end)) = (marks.last(), end_s) {
        if last.phase != StartupPhase::Ready {
            out.push((last.phase, (end - last.at_s).max(0.0)));
        }
    }
    out
}

/// The median seconds of `phase` over earlier completed starts.
pub fn median_of(phase: StartupPhase, history: &[Vec<PhaseMark>]) -> Option<(f64, usize)> {
    let past: Vec<f64> = history
        .iter()
        .rev()
        .take(HISTORY)
        .filter_map(|run| {
            durations(run, None)
                .into_iter()
                .find(|(p, _)| *p == phase)
                .map(|(_, s)| s)
        })
        .collect();
    let n = past.len();
    median(past).map(|m| (m, n))
}

/// Whether the start in progress is stalled in its current phase, judged against earlier
/// starts of the same profile (oldest first).
pub fn stalled(current: &[PhaseMark], now_s: f64, history: &[Vec<PhaseMark>]) -> Option<Stall> {
    let last = current.last()?;
    if last.phase == StartupPhase::Ready {
        return None;
    }
    let elapsed = now_s - last.at_s;
    let (median_s, starts) = median_of(last.phase, history)?;
    (elapsed > 2.0 * median_s && elapsed - median_s >= STALL_FLOOR_S).then_some(Stall {
        phase: last.phase,
        elapsed_s: elapsed,
        median_s,
        starts,
    })
}

/// One recorded start of a profile's engine: when, how it ended, its phase timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct StartupRun {
    pub started_at_ms: i64,
    /// `ready`, `failed` or `timeout`.
    pub outcome: String,
    pub phases: Vec<PhaseMark>,
}

/// The timeline the engine page draws: per phase, seconds in this start and in the one before.
pub fn compare(this: &StartupRun, previous: Option<&StartupRun>) -> Vec<(StartupPhase, Option<f64>, Option<f64>)> {
    let a = durations(&this.phases, None);
    let b = previous.map(|p| durations(&p.phases, None)).unwrap_or_default();
    StartupPhase::ALL
        .into_iter()
        .filter(|p| *p != StartupPhase::Ready)
        .map(|p| {
            let of = |v: &[(StartupPhase, f64)]| v.iter().find(|(q, _)| *q == p).map(|(_, s)| *s);
            (p, of(&a), of(&b))
        })
        .filter(|(_, x, y)| x.is_some() || y.is_some())
        .collect()
}

/// Records phase entries as a start progresses: one mark per phase, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Timeline {
    pub marks: Vec<PhaseMark>,
}

impl Timeline {
    /// Notes that the engine is in `phase` at `at_s`; earlier phases it skipped are not
    /// invented, a phase seen again is not moved.
    pub fn reach(&mut self, phase: StartupPhase, at_s: f64) {
        if self.marks.last().is_none_or(|m| phase > m.phase) {
            self.marks.push(PhaseMark { phase, at_s });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use StartupPhase::*;

    #[test]
    fn milestones_from_both_engines() {
        assert_eq!(
            StartupPhase::from_log_line(
                "(APIServer pid=1) INFO 12-02 10:00:00 [launcher.py:46] Application startup complete."
            ),
            Some(StartupPhase::Ready)
        );
        assert_eq!(
            StartupPhase::from_log_line("[2026-12-02 10:00:00 TP0] Load weight begin. avail mem=78.50 GB"),
            Some(StartupPhase::LoadingWeights)
        );
        assert_eq!(
            StartupPhase::from_log_line("(Worker_TP0 pid=3) INFO [gpu_model_runner.py:4879] Model loading took 14.99 GiB memory and 20.1 seconds"),
            Some(StartupPhase::Profiling)
        );
        assert_eq!(
            StartupPhase::from_log_line(
                "INFO 12-25 12:00:00 model_runner.py:1072] Loading model weights took 14.9888 GB"
            ),
            Some(StartupPhase::Profiling)
        );
        assert_eq!(StartupPhase::from_log_line("random"), None);
        assert!(StartupPhase::Ready > StartupPhase::Launched);
    }

    fn run(ts: &[(StartupPhase, f64)]) -> Vec<PhaseMark> {
        ts.iter()
            .map(|(phase, at_s)| PhaseMark {
                phase: *phase,
                at_s: *at_s,
            })
            .collect()
    }

    #[test]
    fn durations_and_medians() {
        let a = run(&[
            (Launched, 0.0),
            (LoadingWeights, 1.0),
            (CapturingGraphs, 21.0),
            (Ready, 26.0),
        ]);
        assert_eq!(
            durations(&a, None),
            vec![(Launched, 1.0), (LoadingWeights, 20.0), (CapturingGraphs, 5.0)]
        );
        let b = run(&[
            (Launched, 0.0),
            (LoadingWeights, 1.0),
            (CapturingGraphs, 31.0),
            (Ready, 40.0),
        ]);
        let c = run(&[
            (Launched, 0.0),
            (LoadingWeights, 2.0),
            (CapturingGraphs, 27.0),
            (Ready, 33.0),
        ]);
        assert_eq!(
            median_of(LoadingWeights, &[a.clone(), b.clone(), c.clone()]),
            Some((25.0, 3))
        );
        assert_eq!(median_of(CapturingGraphs, &[a, b]), Some((7.0, 2)));
        assert_eq!(median_of(Profiling, &[]), None);
    }

    #[test]
    fn a_phase_far_past_its_median_is_stalled() {
        let history = vec![
            run(&[
                (Launched, 0.0),
                (LoadingWeights, 1.0),
                (CapturingGraphs, 21.0),
                (Ready, 26.0),
            ]),
            run(&[
                (Launched, 0.0),
                (LoadingWeights, 1.0),
                (CapturingGraphs, 23.0),
                (Ready, 27.0),
            ]),
        ];
        let now = run(&[(Launched, 0.0), (LoadingWeights, 1.0), (CapturingGraphs, 22.0)]);
        // Graphs took 5 and 4 s (median 4.5): at 13 s in, not yet (floor of 10 s over it) …
        assert_eq!(stalled(&now, 35.0, &history), None);
        // … at 16 s it is.
        let s = stalled(&now, 38.0, &history).unwrap();
        assert_eq!((s.phase, s.starts), (CapturingGraphs, 2));
        assert!((s.median_s - 4.5).abs() < 1e-9 && (s.elapsed_s - 16.0).abs() < 1e-9);
        // A first start has no history to judge against; a ready engine is not stalled.
        assert_eq!(stalled(&now, 500.0, &[]), None);
        let ready = run(&[(Launched, 0.0), (Ready, 1.0)]);
        assert_eq!(stalled(&ready, 500.0, &history), None);
    }

    #[test]
    fn the_timeline_keeps_one_mark_per_phase_in_order() {
        let mut t = Timeline::default();
        t.reach(Launched, 0.0);
        t.reach(LoadingWeights, 1.0);
        t.reach(LoadingWeights, 2.0);
        t.reach(Launched, 3.0);
        t.reach(Ready, 4.0);
        assert_eq!(t.marks.len(), 3);
        assert_eq!(t.marks[1].at_s, 1.0);
    }
}
