//! The runbook's "Common startup failures" table (roofline-runtime), as rules over log lines.
//!
//! When an engine exits before it is healthy, the console shows the last log lines and the
//! table row that explains them. Patterns tolerate the wording drift between releases that the
//! engine reference documents (models's/model's, one-line and two-line KV summaries, vLLM vs
//! SGLang phrasing). Row texts (symptom, cause, action) live in the Fluent files under
//! `startup-failure-<id>-*`, so both languages share one rule set.

use serde::{Deserialize, Serialize};

/// One row of the startup-failure table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl FailureRow {
    /// Every row, in the runbook's order.
    pub const ALL: [FailureRow; 7] = [
        Self::CudaOomAtLoad,
        Self::KvCacheTooSmall,
        Self::GpuMemoryTaken,
        Self::AddressInUse,
        Self::IncompleteWeights,
        Self::UnsupportedArchitecture,
        Self::DriverMismatch,
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
            Self::GpuMemoryTaken => l.contains("is less than desired GPU memory utilization"),
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
        }
    }
}

/// A diagnosed startup failure: the row and the log line that proves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureMatch {
    pub row: FailureRow,
    pub line: String,
}

/// Finds the row that explains a failed start. The earliest matching line wins: engines print
/// the root cause first and the consequences (`EngineCore failed to start`, tracebacks) after.
/// When two rows match the same line, the more specific one (KV before plain OOM) wins.
pub fn classify<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<FailureMatch> {
    const PRIORITY: [FailureRow; 7] = [
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
