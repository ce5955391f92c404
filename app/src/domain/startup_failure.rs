//! The runbook's "Common startup failures" table (roofline-runtime), as rules over log lines.
//!
//! When an engine exits before it is healthy, the console shows the last log lines and the
//! table row that explains them. Patterns tolerate the wording drift between releases that the
//! engine reference documents (models's/model's, one-line and two-line KV summaries, vLLM vs
//! SGLang phrasing). Row texts (symptom, cause, action) live in the Fluent files under
//! `startup-failure-<id>-*`, so both languages share one rule set.

use serde::{Deserialize, Serialize};

/// One row of the startup-failure table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum FailureRow {
    /// `CUDA out of memory` while loading weights.
    #[serde(rename = "cuda-oom-load")]
    CudaOomAtLoad,
    /// The model's max seq len does not fit in the KV cache.
    #[serde(rename = "kv-too-small")]
    KvCacheTooSmall,
    /// Another process holds the GPU memory the engine asked for.
    GpuMemoryTaken,
    /// `Address already in use`.
    AddressInUse,
    /// `config.json` or the tokenizer is missing: incomplete weight transfer.
    IncompleteWeights,
    /// `Model architectures [...] are not supported`.
    UnsupportedArchitecture,
    /// Driver, CUDA and torch wheel mismatch.
    DriverMismatch,
    /// The engine's argument parser refused the command line (argparse's `error:`).
    InvalidArgument,
    /// The context asked for is above what the model's `config.json` allows.
    ContextAboveModel,
}

impl FailureRow {
    /// Every row, in the runbook's order.
    pub const ALL: [FailureRow; 9] = [
        Self::CudaOomAtLoad,
        Self::KvCacheTooSmall,
        Self::GpuMemoryTaken,
        Self::AddressInUse,
        Self::IncompleteWeights,
        Self::UnsupportedArchitecture,
        Self::DriverMismatch,
        Self::InvalidArgument,
        Self::ContextAboveModel,
    ];

    /// Stable id, used in Fluent keys and JSON.
    pub fn id(self) -> &'static str {
        match self {
            Self::CudaOomAtLoad => "cuda-oom-load",
            Self::KvCacheTooSmall => "kv-too-small",
            Self::GpuMemoryTaken => "gpu-memory-taken",
            Self::AddressInUse => "address-in-use",
            Self::IncompleteWeights => "incomplete-weights",
            Self::UnsupportedArchitecture => "unsupported-architecture",
            Self::DriverMismatch => "driver-mismatch",
            Self::InvalidArgument => "invalid-argument",
            Self::ContextAboveModel => "context-above-model",
        }
    }

    /// Whether a single log line shows this row's symptom.
    pub fn matches(self, line: &str) -> bool {
        let l = line;
        match self {
            Self::CudaOomAtLoad => {
                l.contains("CUDA out of memory")
                    || l.contains("CUDA error: out of memory")
                    || l.contains("OutOfMemoryError")
            }
            Self::KvCacheTooSmall => {
                (l.contains("max seq len") && l.contains("KV cache"))
                    || l.contains("No available memory for the cache blocks")
                    || l.contains("Not enough memory. Please try to increase --mem-fraction-static")
            }
            // The GPU wording, and the CPU backend's (where the fraction is of the node's RAM).
            Self::GpuMemoryTaken => {
                l.contains("is less than desired GPU memory utilization")
                    || l.contains("less than desired CPU memory utilization")
            }
            Self::AddressInUse => {
                l.contains("Address already in use")
                    || l.contains("address already in use")
                    || l.contains("EADDRINUSE")
                    || (l.contains("is not available in") && l.contains("seconds"))
            }
            Self::IncompleteWeights => {
                l.contains("does not appear to have a file named")
                    || l.contains("Invalid repository ID or local directory specified")
                    || l.contains("Could not detect config format")
                    || l.contains("No tokenizer file found")
                    // A shard cut short in transfer: safetensors cannot read its header, torch
                    // cannot read its zip.
                    || l.contains("SafetensorError")
                    || l.contains("PytorchStreamReader failed reading zip archive")
            }
            Self::UnsupportedArchitecture => {
                (l.contains("Model architectures") && l.contains("are not supported"))
                    || l.contains("is not supported in-tree anymore")
            }
            Self::DriverMismatch => {
                l.contains("no kernel image is available")
                    || l.contains("CUDA driver version is insufficient")
                    || l.contains("NVIDIA driver on your system is too old")
                    // A datacenter image's forward-compatibility CUDA on a GPU or driver that
                    // does not support it (CUDA error 804), and the driver/runtime pair error 803.
                    || l.contains("forward compatibility was attempted on non supported HW")
                    || l.contains("unsupported display driver / cuda driver combination")
            }
            // Python's argparse, which both engines use: `vllm serve: error: argument --dtype:
            // invalid choice: …`, `error: unrecognized arguments: …`, `error: ambiguous option`.
            Self::InvalidArgument => {
                l.contains("error: argument ")
                    || l.contains("error: unrecognized arguments")
                    || l.contains("error: ambiguous option")
                    || l.contains("error: the following arguments are required")
            }
            // vLLM's model config validator; SGLang's server args say context_length.
            Self::ContextAboveModel => {
                l.contains("is greater than the derived max_model_len")
                    || l.contains("is greater than the derived context_length")
            }
        }
    }

    /// The profile settings the row's action tells the operator to change.
    pub fn related_keys(self) -> &'static [&'static str] {
        match self {
            Self::CudaOomAtLoad => &["TENSOR_PARALLEL", "QUANTIZATION"],
            Self::KvCacheTooSmall => &["CONTEXT_LENGTH", "MEM_FRACTION", "KV_CACHE_DTYPE"],
            Self::GpuMemoryTaken => &["MEM_FRACTION"],
            Self::AddressInUse => &["PORT"],
            Self::IncompleteWeights => &["MODEL"],
            Self::UnsupportedArchitecture => &["ENGINE"],
            Self::DriverMismatch => &["ENGINE"],
            Self::InvalidArgument => &["EXTRA_ARGS"],
            Self::ContextAboveModel => &["CONTEXT_LENGTH"],
        }
    }
}

/// A diagnosed startup failure: the row and the log line that proves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct FailureMatch {
    pub row: FailureRow,
    pub line: String,
}

/// Finds the row that explains a failed start. The earliest matching line wins: engines print
/// the root cause first and the consequences (`EngineCore failed to start`, tracebacks) after.
/// When two rows match the same line, the more specific one (KV before plain OOM) wins.
pub fn classify<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<FailureMatch> {
    const PRIORITY: [FailureRow; 9] = [
        FailureRow::InvalidArgument,
        FailureRow::ContextAboveModel,
        FailureRow::KvCacheTooSmall,
        FailureRow::GpuMemoryTaken,
        FailureRow::CudaOomAtLoad,
        FailureRow::AddressInUse,
        FailureRow::IncompleteWeights,
        FailureRow::UnsupportedArchitecture,
        FailureRow::DriverMismatch,
    ];
    lines.into_iter().find_map(|line| {
        PRIORITY.iter().find(|row| row.matches(line)).map(|row| FailureMatch {
            row: *row,
            line: line.trim_end().to_string(),
        })
    })
}

/// Whether a log line carries a Python exception (`ValueError: …`,
/// `torch.OutOfMemoryError: …`, after any logger prefix) or argparse's `error:`, rather than
/// a traceback frame or a logger's ERROR level alone (vLLM prefixes every frame with ERROR).
pub fn is_exception_line(l: &str) -> bool {
    l.contains(": error: ")
        || l.split_whitespace().any(|w| {
            let name = w.strip_suffix(':').unwrap_or("");
            (name.ends_with("Error") || name.ends_with("Exception"))
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        })
}

/// The lines an operator needs from a failed start's log: the root cause (the row's line, or
/// else the first error), the traceback it ends, then the last lines, with an elision marker
/// between them; at most `max` lines. The last 40 lines of a vLLM log end in "Engine core
/// initialization failed. See root cause above." and hide exactly that cause.
pub fn excerpt(lines: &[String], failure: Option<&FailureMatch>, max: usize) -> Vec<String> {
    let max = max.max(8);
    if lines.len() <= max {
        return lines.to_vec();
    }
    let cause = failure
        .and_then(|f| lines.iter().position(|l| l.trim_end() == f.line))
        .or_else(|| lines.iter().position(|l| is_exception_line(l)))
        .or_else(|| {
            lines
                .iter()
                .position(|l| l.contains(" ERROR ") || l.trim_start().starts_with("ERROR"))
        });
    let Some(cause) = cause else {
        return lines[lines.len() - max..].to_vec();
    };
    // The traceback this cause ends, within a bound; else a little context before it.
    let lookback = cause.saturating_sub(80);
    let start = lines[lookback..cause]
        .iter()
        .rposition(|l| l.contains("Traceback (most recent call last)"))
        .map(|i| lookback + i)
        .unwrap_or(cause.saturating_sub(3));
    // The exception line may continue (pydantic's validation errors are several lines).
    let end = (cause + 4).min(lines.len());
    let mut head: Vec<String> = lines[start..end].to_vec();
    let budget_head = max * 2 / 3;
    if head.len() > budget_head {
        // Keep the traceback's first line, its innermost frames and the cause.
        let keep_tail = budget_head - 2;
        let mut cut = vec![head[0].clone(), "…".to_string()];
        cut.extend(head[head.len() - keep_tail..].iter().cloned());
        head = cut;
    }
    let room = max - head.len();
    if end >= lines.len() {
        return head;
    }
    let tail_from = (lines.len() - (room - 1)).max(end);
    if tail_from > end {
        head.push("…".to_string());
    }
    head.extend(lines[tail_from..].iter().cloned());
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_of(text: &str) -> Option<FailureRow> {
        classify(text.lines()).map(|m| m.row)
    }

    #[test]
    fn wordings_from_the_engine_reference() {
        let cases = [
            ("ValueError: To serve at least one request with the model's max seq len (100000), (4.26 GiB KV cache is needed, which is larger than the available KV cache memory (4.25 GiB).", FailureRow::KvCacheTooSmall),
            ("ValueError: To serve at least one request with the models's max seq len (1048576), (24.00 GiB KV cache is needed", FailureRow::KvCacheTooSmall),
            ("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (7344).", FailureRow::KvCacheTooSmall),
            ("No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", FailureRow::KvCacheTooSmall),
            ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.88", FailureRow::KvCacheTooSmall),
            ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.", FailureRow::CudaOomAtLoad),
            ("Free memory on device cuda:0 (10.1/79.2 GiB) on startup is less than desired GPU memory utilization (0.92, 72.9 GiB).", FailureRow::GpuMemoryTaken),
            ("OSError: [Errno 98] Address already in use", FailureRow::AddressInUse),
            ("[Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use", FailureRow::AddressInUse),
            ("nccl_port at 30001 is not available in 30 seconds.", FailureRow::AddressInUse),
            ("Invalid repository ID or local directory specified: '/models/x'.", FailureRow::IncompleteWeights),
            ("ValueError: No tokenizer file found in directory: /models/x", FailureRow::IncompleteWeights),
            ("/models/x does not appear to have a file named config.json.", FailureRow::IncompleteWeights),
            ("Value error, Model architectures ['Foo'] are not supported for now. Supported architectures: [...]", FailureRow::UnsupportedArchitecture),
            ("RuntimeError: CUDA error: no kernel image is available for execution on the device", FailureRow::DriverMismatch),
            ("CUDA driver version is insufficient for CUDA runtime version", FailureRow::DriverMismatch),
            ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040)", FailureRow::DriverMismatch),
        ];
        for (line, row) in cases {
            assert_eq!(row_of(line), Some(row), "{line}");
        }
        assert_eq!(row_of("INFO all good\nApplication startup complete."), None);
    }

    #[test]
    fn root_cause_comes_first() {
        let log = "torch.OutOfMemoryError: CUDA out of memory. Tried\nERROR EngineCore failed to start.\nOSError: [Errno 98] Address already in use";
        let m = classify(log.lines()).unwrap();
        assert_eq!(m.row, FailureRow::CudaOomAtLoad);
        assert!(m.line.starts_with("torch.OutOfMemoryError"));
    }

    #[test]
    fn argument_and_context_refusals_have_rows() {
        let cases = [
            ("vllm serve: error: argument --dtype: invalid choice: 'bf17' (choose from 'auto', 'half', 'float16', 'bfloat16', 'float', 'float32')", FailureRow::InvalidArgument),
            ("vllm serve: error: unrecognized arguments: --no-such-flag", FailureRow::InvalidArgument),
            ("launch_server.py: error: ambiguous option: --max could match --max-running-requests, --max-total-tokens", FailureRow::InvalidArgument),
            ("(APIServer pid=53)   Value error, User-specified max_model_len (65536) is greater than the derived max_model_len (max_position_embeddings=32768.0 or model_max_length=None in model's config.json).", FailureRow::ContextAboveModel),
            ("ValueError: User-specified context_length (200000) is greater than the derived context_length (131072).", FailureRow::ContextAboveModel),
            ("RuntimeError: Available memory on node 0 (16.00 GiB) less than desired CPU memory utilization (0.92, 21.5 GiB)", FailureRow::GpuMemoryTaken),
        ];
        for (line, row) in cases {
            assert_eq!(row_of(line), Some(row), "{line}");
        }
    }

    #[test]
    fn the_excerpt_keeps_the_root_cause_and_its_traceback() {
        let mut log: Vec<String> = (0..100).map(|i| format!("INFO loading step {i}")).collect();
        log.push("(EngineCore_DP0 pid=2) ERROR Traceback (most recent call last):".into());
        for i in 0..30 {
            log.push(format!("(EngineCore_DP0 pid=2) ERROR   File \"x.py\", line {i}, in f"));
        }
        let cause = "(EngineCore_DP0 pid=2) ERROR ValueError: User-specified max_model_len (8192) is greater than the derived max_model_len (max_position_embeddings=4096 or model_max_length=None in model's config.json).";
        log.push(cause.into());
        for i in 0..60 {
            log.push(format!("(APIServer pid=1) ERROR shutdown noise {i}"));
        }
        log.push(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}".into(),
        );
        let m = classify(log.iter().map(String::as_str)).unwrap();
        assert_eq!(m.row, FailureRow::ContextAboveModel);
        let ex = excerpt(&log, Some(&m), 40);
        assert!(ex.len() <= 40, "{}", ex.len());
        assert!(ex.iter().any(|l| l == cause));
        assert!(ex[0].contains("Traceback"), "{ex:?}");
        assert!(ex.last().unwrap().contains("Engine core initialization failed"));
        assert!(ex.iter().any(|l| l == "…"));
        // No row: the first exception line still leads, with its traceback.
        let ex = excerpt(&log, None, 40);
        assert!(ex.iter().any(|l| l == cause) && ex[0].contains("Traceback"), "{ex:?}");
        assert!(is_exception_line("vllm serve: error: argument --dtype: invalid choice"));
        assert!(is_exception_line(
            "(EngineCore_DP0 pid=2) ERROR torch.OutOfMemoryError: CUDA out of memory"
        ));
        assert!(!is_exception_line(
            "(EngineCore_DP0 pid=2) ERROR   File \"x.py\", line 3, in f"
        ));
        // Short logs come whole; hostile sizes stay bounded.
        assert_eq!(excerpt(&log[..5], None, 40).len(), 5);
        let huge: Vec<String> = (0..10_000).map(|_| "ValueError: x".to_string()).collect();
        assert!(excerpt(&huge, None, 40).len() <= 40);
    }

    #[test]
    fn ids_are_unique() {
        let mut ids: Vec<_> = FailureRow::ALL.iter().map(|r| r.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), FailureRow::ALL.len());
        for row in FailureRow::ALL {
            assert_eq!(serde_json::to_value(row).unwrap(), serde_json::json!(row.id()));
        }
    }
}
