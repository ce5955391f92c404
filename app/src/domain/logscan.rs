//! The investigator: scans a whole engine log (and the metric history) for the known failure
//! signatures and returns a verdict with the lines that support it and the next step.
//!
//! Wordings come from the engines' sources and issues (see the engine reference, section 5)
//! and tolerate the drift between releases. Lines are untrusted text: each is looked at once,
//! capped in length, and nothing in them is interpreted beyond matching.

use crate::domain::startup_failure::{classify, FailureRow};
use serde::{Deserialize, Serialize};

/// A known signature in an engine log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
            Signature::Watchdog => l.contains("Watchdog caught collective operation timeout"),
            Signature::EngineDead => {
                l.contains("EngineDeadError")
                    || l.contains("EngineCore encountered a fatal error")
                    || l.contains("died unexpectedly")
                    || l.contains("Got fatal signal from worker processes")
                    || l.contains("Scheduler hit an exception")
                    || l.contains("Received sigquit from a child process")
            }
            Signature::Traceback => l.contains("Traceback (most recent call last)"),
            Signature::Preemption => {
                l.contains("is preempted by PreemptionMode")
                    || l.contains("Retract requests")
                    || l.contains("Decode out of memory happened")
                    || preemptions_in_stats(l).is_some_and(|n| n > 0)
            }
            Signature::Ready => {
                l.contains("Application startup complete") || l.contains("The server is fired up and ready to roll")
            }
        }
    }
}

/// `Preemptions: N` from vLLM V1's periodic stats line.
fn preemptions_in_stats(line: &str) -> Option<u64> {
    let rest = &line[line.find("Preemptions: ")? + "Preemptions: ".len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// One matching line: 1-based number and its text (capped).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogScan {
    pub lines: usize,
    pub found: Vec<Found>,
    /// The startup-failure row the log shows, if it is a failed start.
    pub startup_failure: Option<FailureRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// What the investigator concludes from a log (and, optionally, preemption bursts seen in the
/// metric history).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// OOM after the engine was ready: under load, usually a long prefill.
    OomUnderLoad,
    /// A failed start, with its startup-failure row.
    StartupFailure,
    /// A collective timed out: a hang under tensor parallelism.
    NcclHang,
    /// A CUDA error (not OOM): driver, hardware, or a kernel bug.
    CudaError,
    /// The engine died without one of the causes above.
    EngineDied,
    /// Preemption or retraction bursts: KV cache too small for the load.
    PreemptionBursts,
    /// No known signature.
    NothingKnown,
}

impl Verdict {
    pub const ALL: [Verdict; 7] = [
        Verdict::OomUnderLoad,
        Verdict::StartupFailure,
        Verdict::NcclHang,
        Verdict::CudaError,
        Verdict::EngineDied,
        Verdict::PreemptionBursts,
        Verdict::NothingKnown,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Verdict::OomUnderLoad => "oom-under-load",
            Verdict::StartupFailure => "startup-failure",
            Verdict::NcclHang => "nccl-hang",
            Verdict::CudaError => "cuda-error",
            Verdict::EngineDied => "engine-died",
            Verdict::PreemptionBursts => "preemption-bursts",
            Verdict::NothingKnown => "nothing-known",
        }
    }
}

/// The investigator's answer: a verdict, the lines behind it, the next step (a locale key
/// `verdict-<id>-next`), and the full scan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Investigation {
    pub verdict: Verdict,
    pub evidence: Vec<Hit>,
    pub startup_failure: Option<FailureRow>,
    pub scan: LogScan,
}

/// Decides, most specific cause first. `preemption_bursts` comes from the metric history
/// (vLLM V1 logs no line per preemption).
pub fn investigate(text: &str, preemption_bursts: bool) -> Investigation {
    let scan = scan(text);
    let lines = |s: Signature| -> Vec<Hit> {
        scan.get(s)
            .map(|f| {
                let mut v = vec![f.first.clone()];
                if f.last.line != f.first.line {
                    v.push(f.last.clone());
                }
                v
            })
            .unwrap_or_default()
    };
    let (verdict, evidence) = if scan.startup_failure.is_some() {
        let m = classify(text.lines()).expect("classified above");
        (
            Verdict::StartupFailure,
            vec![Hit {
                line: 0,
                text: m.line.chars().take(MAX_LINE).collect(),
            }],
        )
    } else if scan.get(Signature::CudaOom).is_some() && scan.after_ready(Signature::CudaOom) {
        let mut ev = lines(Signature::CudaOom);
        ev.extend(lines(Signature::EngineDead));
        (Verdict::OomUnderLoad, ev)
    } else if scan.get(Signature::Watchdog).is_some() || scan.get(Signature::Nccl).is_some() {
        let mut ev = lines(Signature::Watchdog);
        ev.extend(lines(Signature::Nccl));
        (Verdict::NcclHang, ev)
    } else if scan.get(Signature::CudaError).is_some() {
        (Verdict::CudaError, lines(Signature::CudaError))
    } else if scan.get(Signature::EngineDead).is_some() {
        let mut ev = lines(Signature::EngineDead);
        ev.extend(lines(Signature::Traceback));
        (Verdict::EngineDied, ev)
    } else if preemption_bursts || scan.get(Signature::Preemption).is_some_and(|f| f.count >= 3) {
        (Verdict::PreemptionBursts, lines(Signature::Preemption))
    } else {
        (Verdict::NothingKnown, Vec::new())
    };
    Investigation {
        verdict,
        evidence,
        startup_failure: scan.startup_failure,
        scan,
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
    fn real_logs_get_their_verdicts() {
        let cases = [
            ("vllm-startup-ok.log", Verdict::NothingKnown),
            ("sglang-startup-ok.log", Verdict::NothingKnown),
            ("vllm-oom-load.log", Verdict::StartupFailure),
            ("vllm-kv-too-small.log", Verdict::StartupFailure),
            ("vllm-address-in-use.log", Verdict::StartupFailure),
            ("vllm-engine-dead.log", Verdict::EngineDied),
        ];
        for (file, want) in cases {
            let inv = investigate(&fixture(file), false);
            assert_eq!(inv.verdict, want, "{file}: {:?}", inv.scan);
            if want != Verdict::NothingKnown {
                assert!(!inv.evidence.is_empty(), "{file}: a verdict cites lines");
            }
        }
        assert_eq!(
            investigate(&fixture("vllm-oom-load.log"), false).startup_failure,
            Some(FailureRow::CudaOomAtLoad)
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
        assert_eq!(inv.verdict, Verdict::OomUnderLoad);
        assert!(inv.evidence.iter().any(|h| h.text.contains("EngineDeadError")));

        let nccl = format!("{ready}[rank0]:[E ProcessGroupNCCL.cpp:1414] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600059 milliseconds before timing out.\n[rank0]: To avoid data inconsistency, we are taking the entire process down.\n");
        assert_eq!(investigate(&nccl, false).verdict, Verdict::NcclHang);

        let cuda = format!("{ready}RuntimeError: CUDA error: an illegal memory access was encountered\n");
        assert_eq!(investigate(&cuda, false).verdict, Verdict::CudaError);

        let sglang_retract = format!(
            "[2026-12-02 10:00:00] The server is fired up and ready to roll!\n{}",
            "[2026-12-02 10:01:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_tokens_gained: 512, #new_token_ratio: 0.4 -> 0.7\n".repeat(4)
        );
        let inv = investigate(&sglang_retract, false);
        assert_eq!(inv.verdict, Verdict::PreemptionBursts);
        assert_eq!(inv.scan.get(Signature::Preemption).unwrap().count, 4);

        let v1_stats = format!("{ready}(APIServer pid=1) INFO 12-02 10:01:00 [loggers.py:127] Engine 000: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 50.0 tokens/s, Running: 8 reqs, Waiting: 12 reqs, Preemptions: 5, GPU KV cache usage: 99.1%, Prefix cache hit rate: 10.0%\n");
        assert!(investigate(&v1_stats, false).scan.get(Signature::Preemption).is_some());
        assert_eq!(investigate(&v1_stats, true).verdict, Verdict::PreemptionBursts);
        let no_preempt = v1_stats.replace("Preemptions: 5", "Preemptions: 0");
        assert!(investigate(&no_preempt, false)
            .scan
            .get(Signature::Preemption)
            .is_none());

        let sglang_dead = "[2026-12-02 10:00:00] The server is fired up and ready to roll!\n[2026-12-02 10:02:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n";
        assert_eq!(investigate(sglang_dead, false).verdict, Verdict::OomUnderLoad);
    }

    #[test]
    fn hostile_input_is_bounded() {
        let long = format!("{}\n", "CUDA error: x".repeat(10_000));
        let inv = investigate(&long, false);
        assert!(inv.evidence[0].text.chars().count() <= MAX_LINE + 1);
        assert_eq!(investigate("", false).verdict, Verdict::NothingKnown);
        let binary = String::from_utf8_lossy(&[0xff, 0x00, b'\n', 0xfe]).to_string();
        let _ = investigate(&binary, true);
    }
}
