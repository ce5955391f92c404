//! The investigator: scans a whole engine log (and the metric history) for the known failure
//! signatures and returns a verdict with the lines that support it and the next step.
//!
//! Wordings come from the engines' sources and issues (see the engine reference, section 5)
//! and tolerate the drift between releases. Lines are untrusted text: each is looked at once,
//! capped in length, and nothing in them is interpreted beyond matching.

use crate::domain::logseries::{self, QueueRow, StatsPoint};
use crate::domain::rows::Rule;
use crate::domain::startup_failure::{classify, FailureRow};
use serde::{Deserialize, Serialize};

/// A known signature in an engine log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum Signature {
    /// `CUDA out of memory` / `torch.OutOfMemoryError` / SGLang `Not enough memory`.
    CudaOom,
    /// Any other `CUDA error:`.
    CudaError,
    /// NCCL errors and timeouts.
    Nccl,
    /// The collective watchdog taking the process down.
    Watchdog,
    /// vLLM `EngineDeadError` / `EngineCore encountered a fatal error` / SGLang scheduler death.
    EngineDead,
    /// A Python traceback.
    Traceback,
    /// vLLM preemptions (V0 line, or a V1 stats line with `Preemptions: N`) and SGLang
    /// retractions.
    Preemption,
    /// The engine said it is ready (everything after this happened under traffic).
    Ready,
}

impl Signature {
    pub const ALL: [Signature; 8] = [
        Signature::CudaOom,
        Signature::CudaError,
        Signature::Nccl,
        Signature::Watchdog,
        Signature::EngineDead,
        Signature::Traceback,
        Signature::Preemption,
        Signature::Ready,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Signature::CudaOom => "cuda-oom",
            Signature::CudaError => "cuda-error",
            Signature::Nccl => "nccl",
            Signature::Watchdog => "watchdog",
            Signature::EngineDead => "engine-dead",
            Signature::Traceback => "traceback",
            Signature::Preemption => "preemption",
            Signature::Ready => "ready",
        }
    }

    /// The signatures a line carries (a line can carry several: an OOM inside a traceback).
    fn of(line: &str) -> impl Iterator<Item = Signature> + '_ {
        Signature::ALL.into_iter().filter(move |s| s.matches(line))
    }

    fn matches(self, l: &str) -> bool {
        match self {
            Signature::CudaOom => {
                l.contains("CUDA out of memory")
                    || l.contains("OutOfMemoryError")
                    || l.contains("CUDA error: out of memory")
                    || l.contains("Not enough memory. Please try to increase --mem-fraction-static")
            }
            Signature::CudaError => l.contains("CUDA error") && !l.contains("out of memory"),
            // NCCL trouble, not the harmless process-group warning at a clean exit.
            Signature::Nccl => {
                l.contains("NCCL")
                    && [
                        "NCCL error",
                        "NCCL timeout",
                        "Timeout(ms)",
                        "timed out",
                        "ncclSystemError",
                        "ncclInternalError",
                        "ncclUnhandledCudaError",
                        "ncclRemoteError",
                    ]
                    .iter()
                    .any(|w| l.contains(w))
            }
            Signature::Watchdog => {
                l.contains("Watchdog caught collective operation timeout")
                    || l.contains("Process group watchdog thread terminated")
            }
            Signature::EngineDead => {
                l.contains("EngineDeadError")
                    || l.contains("EngineCore encountered a fatal error")
                    || l.contains("died unexpectedly")
                    || l.contains("Got fatal signal from worker processes")
                    || l.contains("Scheduler hit an exception")
                    || l.contains("Received sigquit from a child process")
                    || l.contains("MQLLMEngine is already dead")
                    || l.contains("AsyncEngineDeadError")
                    || l.contains("Engine background task failed")
                    || (l.contains("Engine process (pid") && l.contains("died"))
            }
            Signature::Traceback => l.contains("Traceback (most recent call last)"),
            Signature::Preemption => {
                l.contains("is preempted by PreemptionMode")
                    || l.contains("Retract requests")
                    || l.contains("Decode out of memory happened")
                    || logseries::number_after(l, "Preemptions:").is_some_and(|n| n >= 1.0)
            }
            Signature::Ready => {
                l.contains("Application startup complete") || l.contains("The server is fired up and ready to roll")
            }
        }
    }
}

/// One matching line: 1-based number and its text (capped).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Hit {
    pub line: usize,
    pub text: String,
}

const MAX_LINE: usize = 400;

fn hit(n: usize, l: &str) -> Hit {
    let mut text: String = l.chars().take(MAX_LINE).collect();
    if text.len() < l.len() {
        text.push('…');
    }
    Hit { line: n, text }
}

/// Counts, first and last occurrence of each signature in a log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct LogScan {
    pub lines: usize,
    pub found: Vec<Found>,
    /// The startup-failure row the log shows, if it is a failed start.
    pub startup_failure: Option<FailureRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Found {
    pub signature: Signature,
    pub count: usize,
    pub first: Hit,
    pub last: Hit,
}

impl LogScan {
    pub fn get(&self, s: Signature) -> Option<&Found> {
        self.found.iter().find(|f| f.signature == s)
    }

    /// The last "ready" line, when there is one.
    fn ready_line(&self) -> Option<usize> {
        self.get(Signature::Ready).map(|f| f.last.line)
    }

    /// Whether `s` happened after the engine was last ready, i.e. under traffic.
    pub fn after_ready(&self, s: Signature) -> bool {
        match (self.get(s), self.ready_line()) {
            (Some(f), Some(r)) => f.last.line > r,
            _ => false,
        }
    }
}

/// Scans the whole log.
pub fn scan(text: &str) -> LogScan {
    let mut out = LogScan::default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        out.lines = n;
        // Comment lines (captured logs carry `# source:` headers) are not engine output.
        if line.starts_with("# ") {
            continue;
        }
        for s in Signature::of(line) {
            match out.found.iter_mut().find(|f| f.signature == s) {
                Some(f) => {
                    f.count += 1;
                    f.last = hit(n, line);
                }
                None => out.found.push(Found {
                    signature: s,
                    count: 1,
                    first: hit(n, line),
                    last: hit(n, line),
                }),
            }
        }
    }
    // A failed start: the last attempt never became ready and a startup row matches.
    if out.get(Signature::Ready).is_none() {
        out.startup_failure = classify(text.lines()).map(|m| m.row);
    }
    out.found.sort_by_key(|f| f.signature);
    out
}

/// The investigator's answer: the runbook row the log shows (`None`: no failure row holds, as
/// far as the log goes), the lines behind it, and the full scan. The row's diagnosis and action
/// are the runbook's (`rule-<id>-diagnosis`, `rule-<id>-action`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Investigation {
    pub row: Option<Rule>,
    pub evidence: Vec<Hit>,
    pub startup_failure: Option<FailureRow>,
    /// Requests were served in the last start the log shows (stats with traffic, access lines,
    /// batches): what separates a failure under load from a failed start.
    pub served: bool,
    /// Periodic stats lines read from the last start, oldest first (capped).
    pub stats: Vec<StatsPoint>,
    pub scan: LogScan,
    /// The line where the engine was told to shut down (SIGTERM, SIGINT): what it logs after
    /// that, `EngineDeadError` included, is its way down, not a failure.
    #[serde(default)]
    pub stopped: Option<Hit>,
}

/// The most stats points kept: enough for hours of 5-second vLLM ticks, bounded for a hostile
/// log.
const MAX_POINTS: usize = 4096;

/// A shutdown someone asked for: vLLM marks its way down with `[shutdown]` lines once a
/// signal arrives (and logs `EngineDeadError` on the way, which is no death).
fn requested_shutdown(l: &str) -> bool {
    l.contains("[shutdown] API server: shutdown triggered")
        || l.contains("trigger received signal=SIGTERM")
        || l.contains("trigger received signal=SIGINT")
        || l.contains("Received SIGTERM")
        || l.contains("received SIGTERM")
        || l.contains("Received sigterm")
}

/// A process that exited during its start: vLLM's own verdict lines, argparse's `error:`, or
/// an uncaught exception (Python's hook prints the traceback with no logger prefix).
fn start_aborted(l: &str) -> bool {
    l.contains("Engine core initialization failed")
        || l.contains("EngineCore failed to start")
        || (l.contains(": error: ") && !l.contains(" INFO ") && !l.contains(" WARNING "))
        || l.starts_with("Traceback (most recent call last)")
}

/// Lines that open a new start of the engine: a log file that spans restarts is judged on its
/// last start.
fn starts_engine(l: &str) -> bool {
    l.contains("vLLM API server version")
        || l.contains("Starting vLLM API server")
        || l.contains("server_args=ServerArgs(")
}

/// A served request (not a health check or a route listing): what makes a failure one under
/// load.
fn serves(l: &str, stats: Option<&StatsPoint>) -> bool {
    if let Some(p) = stats {
        return [p.running, p.waiting, p.generation_tps, p.prompt_tps]
            .iter()
            .any(|v| v.is_some_and(|v| v > 0.0));
    }
    l.contains("Added request") || l.contains("Finished request") || (l.contains("\"POST /") && l.contains(" HTTP/1."))
}

/// Frames and lines that only a start goes through (weights, memory profiling, KV allocation,
/// graph capture, distributed init).
const STARTUP_FRAMES: &[&str] = &[
    "load_model",
    "load_weights",
    "create_weights",
    "Loading model weights",
    "Loading safetensors checkpoint",
    "determine_num_available_blocks",
    "determine_available_memory",
    "profile_run",
    "_dummy_run",
    "_dummy_sampler_run",
    "_initialize_kv_caches",
    "initialize_from_config",
    "init_memory_pool",
    "capture_model",
    "Capturing CUDA graph",
    "compile_or_warm_up_model",
    "EngineCore failed to start",
    "Engine core initialization failed",
    "Memory profiling",
    "ModelRunner(",
    "init_torch_distributed",
];

/// Frames of the serving loop: the V0 async engine loop, the V1 EngineCore busy loop and its
/// output handler, the sampler, SGLang's scheduler loop.
const SERVING_FRAMES: &[&str] = &[
    "run_engine_loop",
    "engine_step",
    "step_async",
    "async_llm_engine.py",
    "_log_task_completion",
    "run_busy_loop",
    "_process_engine_step",
    "step_with_batch_queue",
    "output_handler",
    "EngineDeadError",
    "event_loop_normal",
    "event_loop_overlap",
    "run_batch",
    "sampler.py",
    "execute_model",
];

/// Frames of the KV-cache sizing check: an OOM or error there is the KV row, not the weights'.
const KV_FRAMES: &[&str] = &[
    "check_enough_kv_cache_memory",
    "No available memory for the cache blocks",
];

/// Lines that say the engine stopped making progress (the hung row): a collective timed out,
/// the watchdog fired, an engine step never returned.
fn stalls(l: &str) -> bool {
    Signature::Watchdog.matches(l)
        || Signature::Nccl.matches(l)
        || l.contains("Engine iteration timed out")
        || l.contains("Process group watchdog thread terminated")
        || l.contains("ncclCommWatchdog")
        || (l.contains("Watchdog timeout") && l.contains("watchdog_timeout"))
        // V1 under TP: a collective RPC to the workers never came back.
        || (l.contains("RPC call to") && l.contains("timed out"))
}

/// V1 under TP: the workers stopped reading the scheduler's broadcast. During a start the same
/// line means a long compilation, so it is a hang only once the engine was ready.
fn broadcast_stuck(l: &str) -> bool {
    l.contains("No available shared memory broadcast block found")
}

/// Requests preempted or retracted on this line (0 when none).
fn preempted(l: &str, stats: Option<&StatsPoint>) -> f64 {
    if let Some(p) = stats {
        return p.preemptions.unwrap_or(0.0).max(0.0);
    }
    if l.contains("is preempted by PreemptionMode") {
        return 1.0;
    }
    if l.contains("Retract requests") || l.contains("Decode out of memory happened") {
        return logseries::number_after(l, "#retracted_reqs:")
            .unwrap_or(1.0)
            .clamp(1.0, 1e6);
    }
    0.0
}

/// Reads the log's structure and decides which runbook row it shows, most specific cause
/// first: a failed start (by the startup-failure table, before any request was served), an OOM
/// (at start or under load, by whether requests were served before it and by the frames around
/// it), a hang, a death, preemptions, then the queue rows on the stats lines.
/// `preemption_bursts` comes from the metric history (vLLM V1 logs no line per preemption).
pub fn investigate(text: &str, preemption_bursts: bool) -> Investigation {
    let scan = scan(text);
    // The last start, without the comment lines that captured logs open with.
    let all: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.starts_with("# "))
        .collect();
    let from = all.iter().rposition(|(_, l)| starts_engine(l)).unwrap_or(0);
    let seg = &all[from..];

    let mut stats = Vec::new();
    let mut first_served: Option<usize> = None;
    let mut preempt_lines = Vec::new();
    let mut preempt_total = 0.0;
    for (i, (n, l)) in seg.iter().enumerate() {
        let p = logseries::parse_line(*n, l);
        if first_served.is_none() && serves(l, p.as_ref()) {
            first_served = Some(i);
        }
        let k = preempted(l, p.as_ref());
        if k > 0.0 {
            preempt_total += k;
            preempt_lines.push(hit(*n, l));
        }
        if let Some(p) = p {
            if stats.len() < MAX_POINTS {
                stats.push(p);
            }
        }
    }
    let served = first_served.is_some();
    let ready_at = seg.iter().position(|(_, l)| Signature::Ready.matches(l));
    let stopped_at = seg.iter().position(|(_, l)| requested_shutdown(l));
    let stopped = stopped_at.map(|i| hit(seg[i].0, seg[i].1));
    // What the engine logged on a requested way down decides nothing.
    let seg = &seg[..stopped_at.unwrap_or(seg.len())];
    let cite = |i: usize| hit(seg[i].0, seg[i].1);
    let first_last = |v: &[Hit]| -> Vec<Hit> {
        match (v.first(), v.last()) {
            (Some(a), Some(b)) if a.line != b.line => vec![a.clone(), b.clone()],
            (Some(a), _) => vec![a.clone()],
            _ => Vec::new(),
        }
    };
    let window = |i: usize| &seg[i.saturating_sub(80)..(i + 80).min(seg.len())];
    let has = |w: &[(usize, &str)], frames: &[&str]| w.iter().any(|(_, l)| frames.iter().any(|f| l.contains(f)));

    let done =
        |row: Rule, evidence: Vec<Hit>, startup_failure: Option<FailureRow>, stats: Vec<StatsPoint>| Investigation {
            row: Some(row),
            evidence,
            startup_failure,
            served,
            stats,
            scan: scan.clone(),
            stopped: stopped.clone(),
        };

    // 1. A failed start: the startup-failure table on what came before the first served
    //    request. An OOM there is decided below, by its frames.
    let before = &seg[..first_served.unwrap_or(seg.len())];
    if let Some(m) = classify(before.iter().map(|(_, l)| *l)) {
        if m.row != FailureRow::CudaOomAtLoad {
            let ev = before
                .iter()
                .find(|(_, l)| m.row.matches(l))
                .map(|(n, l)| vec![hit(*n, l)])
                .unwrap_or_default();
            return done(Rule::of_startup(m.row), ev, Some(m.row), stats);
        }
    }

    // 2. An OOM: under load when requests were served (or the engine said it was ready)
    //    before it, or when only serving-loop frames surround it; at start otherwise.
    if let Some(i) = seg.iter().position(|(_, l)| Signature::CudaOom.matches(l)) {
        let w = window(i);
        let after_traffic = first_served.is_some_and(|s| s < i) || ready_at.is_some_and(|r| r < i);
        let under_load = after_traffic || (!has(w, STARTUP_FRAMES) && has(w, SERVING_FRAMES));
        let mut ev = vec![cite(i)];
        if under_load {
            if let Some(j) = seg.iter().position(|(_, l)| Signature::EngineDead.matches(l)) {
                ev.push(cite(j));
            }
            return done(Rule::OomUnderLoad, ev, None, stats);
        }
        if let Some(j) = w.iter().position(|(_, l)| KV_FRAMES.iter().any(|f| l.contains(f))) {
            ev.push(hit(w[j].0, w[j].1));
            return done(Rule::OomStartKv, ev, Some(FailureRow::KvCacheTooSmall), stats);
        }
        return done(Rule::OomStartWeights, ev, Some(FailureRow::CudaOomAtLoad), stats);
    }

    // 2b. A start that aborted on a cause no table row names: the first exception (the root
    //     cause; vLLM's last lines only say "see root cause above") and the abort line.
    if ready_at.is_none() && !served {
        if let Some(end) = seg.iter().position(|(_, l)| start_aborted(l)) {
            let cause = seg
                .iter()
                .position(|(_, l)| crate::domain::startup_failure::is_exception_line(l))
                .unwrap_or(end);
            let mut ev = vec![cite(cause)];
            if let Some(last) = seg.iter().rposition(|(_, l)| start_aborted(l)).filter(|l| *l != cause) {
                ev.push(cite(last));
            }
            return done(Rule::StartFailed, ev, None, stats);
        }
    }

    // 3. A hang: a collective timed out, the watchdog fired, a step never returned, the
    //    stats show requests running with no token moving, or a CUDA error left the process
    //    up (the runbook: "engine hung, often after a CUDA error or an NCCL timeout").
    let dead: Vec<Hit> = seg
        .iter()
        .filter(|(_, l)| Signature::EngineDead.matches(l))
        .map(|(n, l)| hit(*n, l))
        .collect();
    let stall_lines: Vec<Hit> = seg
        .iter()
        .enumerate()
        .filter(|(i, (_, l))| stalls(l) || (broadcast_stuck(l) && ready_at.is_some_and(|r| r < *i)))
        .map(|(_, (n, l))| hit(*n, l))
        .collect();
    let cuda: Vec<Hit> = seg
        .iter()
        .filter(|(_, l)| Signature::CudaError.matches(l))
        .map(|(n, l)| hit(*n, l))
        .collect();
    let flat = logseries::stalled(&stats);
    if !stall_lines.is_empty() || flat.is_some() || (!cuda.is_empty() && dead.is_empty()) {
        let mut ev = first_last(&stall_lines);
        if let Some((a, b)) = flat {
            ev.extend(seg.iter().filter(|(n, _)| *n == a || *n == b).map(|(n, l)| hit(*n, l)));
        }
        ev.extend(first_last(&cuda));
        return done(Rule::Hung, ev, None, stats);
    }

    // 4. The process died.
    if !dead.is_empty() {
        let mut ev = first_last(&dead);
        ev.extend(first_last(&cuda));
        return done(Rule::Dead, ev, None, stats);
    }

    // 5. Preemptions or retractions: the scheduler recovers by recomputing, the KV cache is
    //    too small for the load (retraction lines win over the queue rows they come with).
    if preemption_bursts || preempt_total >= 2.0 {
        return done(Rule::Preemptions, first_last(&preempt_lines), None, stats);
    }

    // 6. The queue rows, on the stats lines.
    let samples: Vec<(f64, Option<f64>)> = stats.iter().filter_map(|p| p.waiting.map(|w| (w, p.kv))).collect();
    if let Some(q) = logseries::queue_row(&samples) {
        let queued: Vec<Hit> = stats
            .iter()
            .filter(|p| p.waiting.is_some_and(|w| w >= 1.0))
            .filter_map(|p| seg.iter().find(|(n, _)| *n == p.line).map(|(n, l)| hit(*n, l)))
            .collect();
        let row = match q {
            QueueRow::KvExhausted => Rule::KvExhausted,
            QueueRow::SeqCapped => Rule::SeqCapped,
        };
        return done(row, first_last(&queued), None, stats);
    }

    Investigation {
        row: None,
        evidence: Vec::new(),
        startup_failure: None,
        served,
        stats,
        scan,
        stopped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/fixtures")
            .join(name);
        // The fixtures open with `#` lines naming their sources; they are not log lines.
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn real_logs_get_their_rows() {
        let cases = [
            ("vllm-startup-ok.log", None),
            ("sglang-startup-ok.log", None),
            ("vllm-oom-load.log", Some(Rule::OomStartWeights)),
            ("vllm-kv-too-small.log", Some(Rule::OomStartKv)),
            ("vllm-address-in-use.log", Some(Rule::StartAddressInUse)),
            ("vllm-engine-dead.log", Some(Rule::Dead)),
            // A real vLLM on this machine kind (testdata/fixtures/vllm-cpu-*).
            ("vllm-cpu-invalid-argument.log", Some(Rule::StartInvalidArgument)),
            ("vllm-cpu-context-above-model.log", Some(Rule::StartContextAboveModel)),
            ("vllm-cpu-memory-refused.log", Some(Rule::StartGpuMemoryTaken)),
            // A clean stop logs EngineDeadError on its way down: no failure.
            ("vllm-cpu-clean-stop.log", None),
        ];
        for (file, want) in cases {
            let inv = investigate(&fixture(file), false);
            assert_eq!(inv.row, want, "{file}: {:?}", inv.scan);
            if want.is_some() {
                assert!(!inv.evidence.is_empty(), "{file}: a verdict cites lines");
            }
        }
        assert_eq!(
            investigate(&fixture("vllm-oom-load.log"), false).startup_failure,
            Some(FailureRow::CudaOomAtLoad)
        );
        let stop = investigate(&fixture("vllm-cpu-clean-stop.log"), false);
        assert!(
            stop.stopped.is_some_and(|h| h.text.contains("SIGTERM")),
            "{:?}",
            stop.evidence
        );
        // The same start killed without a shutdown request: its EngineDeadError is a death.
        let killed: String = fixture("vllm-cpu-clean-stop.log")
            .lines()
            .filter(|l| !l.contains("[shutdown]"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(investigate(&killed, false).row, Some(Rule::Dead));
    }

    #[test]
    fn a_start_that_aborts_without_a_row_names_its_first_exception() {
        let log = "(APIServer pid=1) INFO vLLM API server version 0.32.0\n(EngineCore pid=2) ERROR Traceback (most recent call last):\n(EngineCore pid=2) ERROR   File \"x.py\", line 1, in f\n(EngineCore pid=2) ERROR KeyError: 'model.layers.0.mlp.gate_proj.weight'\nTraceback (most recent call last):\nRuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n";
        let inv = investigate(log, false);
        assert_eq!(inv.row, Some(Rule::StartFailed));
        assert!(inv.evidence[0].text.contains("KeyError"), "{:?}", inv.evidence);
        assert!(inv.evidence.iter().any(|h| h.text.contains("initialization failed")));
        // A start still in progress with a harmless error word is no failure.
        let starting = "(APIServer pid=1) INFO vLLM API server version 0.32.0\nWARNING Found ulimit of 20000 and failed to automatically increase with error current limit exceeds maximum limit. This can cause fd limit errors like `OSError: [Errno 24] Too many open files`.\n";
        assert_eq!(investigate(starting, false).row, None);
    }

    /// Every real log in `logs-dev` (public reports, see its SOURCES.md) reaches the row
    /// `expected.csv` gives it; the failure lists every miss, not just the first.
    #[test]
    fn logs_dev_reach_their_rows() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/logs-dev");
        let csv = std::fs::read_to_string(dir.join("expected.csv")).unwrap();
        let mut misses = Vec::new();
        let mut n = 0;
        for line in csv.lines().skip(1) {
            let mut cols = line.splitn(3, ',');
            let (Some(file), Some(expected)) = (cols.next(), cols.next()) else {
                continue;
            };
            let text = String::from_utf8_lossy(&std::fs::read(dir.join(file)).unwrap()).to_string();
            let inv = investigate(&text, false);
            let got = inv.row.map(|r| r.id()).unwrap_or("healthy");
            n += 1;
            if got != expected {
                misses.push(format!(
                    "{file}: expected {expected}, got {got} ({:?})",
                    inv.evidence.first().map(|h| &h.text)
                ));
            } else if inv.row.is_some() && inv.evidence.is_empty() {
                misses.push(format!("{file}: {got} cites no line"));
            }
        }
        assert!(n >= 29, "expected.csv lists {n} logs");
        assert!(
            misses.is_empty(),
            "{} of {n} missed:\n{}",
            misses.len(),
            misses.join("\n")
        );
    }

    /// Logs written from the wordings quoted in the engine reference, section 5.
    #[test]
    fn quoted_wordings_are_recognised() {
        let ready = "(APIServer pid=1) INFO 12-02 10:00:00 [launcher.py:46] Application startup complete.\n";
        let oom_under_load = format!(
            "{ready}(EngineCore_DP0 pid=2) ERROR 12-02 10:05:00 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.2 GiB is free.\n(APIServer pid=1) ERROR 12-02 10:05:00 [async_llm.py:480] AsyncLLM output_handler failed.\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.\n"
        );
        let inv = investigate(&oom_under_load, false);
        assert_eq!(inv.row, Some(Rule::OomUnderLoad));
        assert!(inv.evidence.iter().any(|h| h.text.contains("EngineDeadError")));

        // The same OOM with no startup in the excerpt: the busy-loop frames and the
        // EngineDeadError say it happened while serving.
        let busy = "(EngineCore_DP0 pid=2) ERROR [core.py:700] EngineCore encountered a fatal error.\n(EngineCore_DP0 pid=2) ERROR   File \"vllm/v1/engine/core.py\", line 670, in run_busy_loop\n(EngineCore_DP0 pid=2) ERROR   File \"vllm/v1/engine/core.py\", line 290, in step\n(EngineCore_DP0 pid=2) ERROR     model_output = self.execute_model_with_error_logging(\n(EngineCore_DP0 pid=2) ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.00 GiB.\n(APIServer pid=1) ERROR vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\n";
        assert_eq!(investigate(busy, false).row, Some(Rule::OomUnderLoad));
        // An OOM in load_model before anything was served: the weights row.
        let load = "(EngineCore_DP0 pid=2) ERROR   File \"vllm/v1/worker/gpu_model_runner.py\", line 1600, in load_model\n(EngineCore_DP0 pid=2) ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n(EngineCore_DP0 pid=2) ERROR EngineCore failed to start.\n";
        assert_eq!(investigate(load, false).row, Some(Rule::OomStartWeights));

        let nccl = format!("{ready}[rank0]:[E ProcessGroupNCCL.cpp:1414] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600059 milliseconds before timing out.\n[rank0]: To avoid data inconsistency, we are taking the entire process down.\n");
        assert_eq!(investigate(&nccl, false).row, Some(Rule::Hung));
        let shm = format!("{ready}(EngineCore_DP0 pid=2) INFO [shm_broadcast.py:466] No available shared memory broadcast block found in 60 second. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation)\n");
        assert_eq!(investigate(&shm, false).row, Some(Rule::Hung));
        assert_eq!(
            investigate(&shm.replacen(ready, "", 1), false).row,
            None,
            "a long compile at start"
        );
        let sglang_watchdog = "[2026-12-02 10:00:00] The server is fired up and ready to roll!\n[2026-12-02 10:09:00 TP0] Watchdog timeout (self.watchdog_timeout=300)\n";
        assert_eq!(investigate(sglang_watchdog, false).row, Some(Rule::Hung));

        // A CUDA error that left the process up is a hang; one that killed it, a death.
        let cuda = format!("{ready}RuntimeError: CUDA error: an illegal memory access was encountered\n");
        assert_eq!(investigate(&cuda, false).row, Some(Rule::Hung));
        let cuda_dead = format!("{cuda}vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\n");
        assert_eq!(investigate(&cuda_dead, false).row, Some(Rule::Dead));

        let sglang_retract = format!(
            "[2026-12-02 10:00:00] The server is fired up and ready to roll!\n{}",
            "[2026-12-02 10:01:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_tokens_gained: 512, #new_token_ratio: 0.4 -> 0.7\n".repeat(4)
        );
        let inv = investigate(&sglang_retract, false);
        assert_eq!(inv.row, Some(Rule::Preemptions));
        assert_eq!(inv.scan.get(Signature::Preemption).unwrap().count, 4);

        let v1_stats = format!("{ready}(APIServer pid=1) INFO 12-02 10:01:00 [loggers.py:127] Engine 000: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 50.0 tokens/s, Running: 8 reqs, Waiting: 12 reqs, Preemptions: 5, GPU KV cache usage: 99.1%, Prefix cache hit rate: 10.0%\n");
        assert!(investigate(&v1_stats, false).scan.get(Signature::Preemption).is_some());
        assert_eq!(investigate(&v1_stats, false).row, Some(Rule::Preemptions));
        let no_preempt = v1_stats.replace("Preemptions: 5", "Preemptions: 0");
        assert!(investigate(&no_preempt, false)
            .scan
            .get(Signature::Preemption)
            .is_none());
        assert_eq!(investigate(&no_preempt, true).row, Some(Rule::Preemptions));

        // The queue rows on V1 stats: full cache with a queue, a growing queue with room.
        let tick = |w: u32, kv: f64| {
            format!("(APIServer pid=1) INFO [loggers.py:127] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 500.0 tokens/s, Running: 64 reqs, Waiting: {w} reqs, GPU KV cache usage: {kv:.1}%, Prefix cache hit rate: 0.0%\n")
        };
        let full: String = [(4, 93.0), (6, 96.0), (5, 98.0)]
            .iter()
            .map(|(w, k)| tick(*w, *k))
            .collect();
        assert_eq!(investigate(&full, false).row, Some(Rule::KvExhausted));
        let capped: String = [(1, 30.0), (6, 31.0), (14, 33.0)]
            .iter()
            .map(|(w, k)| tick(*w, *k))
            .collect();
        assert_eq!(investigate(&capped, false).row, Some(Rule::SeqCapped));

        let sglang_dead = "[2026-12-02 10:00:00] The server is fired up and ready to roll!\n[2026-12-02 10:02:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n";
        assert_eq!(investigate(sglang_dead, false).row, Some(Rule::OomUnderLoad));
    }

    /// A log that spans restarts is judged on its last start: an earlier OOM under load does
    /// not explain a later start that failed on its port.
    #[test]
    fn the_last_start_decides() {
        let log = "INFO vLLM API server version 0.11.0\nINFO Application startup complete.\nINFO Added request cmpl-1.\ntorch.OutOfMemoryError: CUDA out of memory.\nINFO vLLM API server version 0.11.0\nOSError: [Errno 98] Address already in use\n";
        let inv = investigate(log, false);
        assert_eq!(inv.row, Some(Rule::StartAddressInUse));
        assert_eq!(inv.evidence[0].line, 6);
    }

    #[test]
    fn hostile_input_is_bounded() {
        let long = format!("{}\n", "CUDA error: x".repeat(10_000));
        let inv = investigate(&long, false);
        assert!(inv.evidence[0].text.chars().count() <= MAX_LINE + 1);
        assert_eq!(investigate("", false).row, None);
        let ticks = "Avg prompt throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs\n".repeat(MAX_POINTS + 10);
        assert_eq!(investigate(&ticks, false).stats.len(), MAX_POINTS);
        let binary = String::from_utf8_lossy(&[0xff, 0x00, b'\n', 0xfe]).to_string();
        let _ = investigate(&binary, true);
    }
}
