//! The failures the simulator can play, one per runbook row.

use serde::{Deserialize, Serialize};

/// A fault scenario. Start-time faults (`oom-load`, `kv-too-small`, `missing-config`,
/// `unsupported-arch`, `driver-mismatch`) end the process before it is healthy; the rest
/// change behaviour while it serves and can be switched on and off through `/sim/faults`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// The engine dies: EngineDeadError (vLLM) / scheduler exception (SGLang), then exit.
    Crash,
    /// `/health` stays 200 but completions never answer (a stuck NCCL collective).
    Hang,
    /// `CUDA out of memory` while loading weights.
    OomLoad,
    /// KV cache too small for max-model-len at start.
    KvTooSmall,
    /// OOM during prefill of a long prompt: the engine crashes under load.
    OomUnderLoad,
    /// KV capacity shrinks to a tenth: requests queue, KV usage pins near 100 %.
    KvExhaustion,
    /// Running requests are preempted every step.
    PreemptionStorm,
    /// The prefix cache stops hitting.
    PrefixCacheMiss,
    /// Decode steps take four times longer at the same traffic (a noisy neighbour, throttling).
    TpotSlowdown,
    /// Tool calls come back as plain text in `content` (a broken parser or chat template).
    BrokenToolParser,
    /// `config.json` missing (an incomplete weight transfer).
    MissingConfig,
    /// The engine does not know the model architecture.
    UnsupportedArch,
    /// Driver, CUDA and torch do not match.
    DriverMismatch,
    /// Another process holds the GPU memory the engine asks for at start.
    GpuMemoryTaken,
    /// The API server's port is taken between the console's check and the engine's bind.
    AddressInUse,
    /// CUDA graph capture hangs (`ROOFLINE_SIM_STALL_S` seconds, default 600): a start stalled
    /// in one phase, long before the serve timeout.
    StallGraphs,
    /// Every prompt's prefill takes a minute (120 chunked steps of 500 ms): no token generated
    /// while the prompt tokens and steps advance.
    LongPrefill,
    /// The first step with work takes `ROOFLINE_SIM_WARMUP_S` (12 s): a cold engine's warm-up.
    SlowWarmup,
}

impl Fault {
    pub const ALL: [Fault; 18] = [
        Fault::Crash,
        Fault::Hang,
        Fault::OomLoad,
        Fault::KvTooSmall,
        Fault::OomUnderLoad,
        Fault::KvExhaustion,
        Fault::PreemptionStorm,
        Fault::PrefixCacheMiss,
        Fault::TpotSlowdown,
        Fault::BrokenToolParser,
        Fault::MissingConfig,
        Fault::UnsupportedArch,
        Fault::DriverMismatch,
        Fault::GpuMemoryTaken,
        Fault::AddressInUse,
        Fault::StallGraphs,
        Fault::LongPrefill,
        Fault::SlowWarmup,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Crash => "crash",
            Self::Hang => "hang",
            Self::OomLoad => "oom-load",
            Self::KvTooSmall => "kv-too-small",
            Self::OomUnderLoad => "oom-under-load",
            Self::KvExhaustion => "kv-exhaustion",
            Self::PreemptionStorm => "preemption-storm",
            Self::PrefixCacheMiss => "prefix-cache-miss",
            Self::TpotSlowdown => "tpot-slowdown",
            Self::BrokenToolParser => "broken-tool-parser",
            Self::MissingConfig => "missing-config",
            Self::UnsupportedArch => "unsupported-arch",
            Self::DriverMismatch => "driver-mismatch",
            Self::GpuMemoryTaken => "gpu-memory-taken",
            Self::AddressInUse => "address-in-use",
            Self::StallGraphs => "stall-graphs",
            Self::LongPrefill => "long-prefill",
            Self::SlowWarmup => "slow-warmup",
        }
    }

    /// Faults that act during startup and end the process.
    pub fn at_start(self) -> bool {
        matches!(
            self,
            Self::OomLoad
                | Self::KvTooSmall
                | Self::MissingConfig
                | Self::UnsupportedArch
                | Self::DriverMismatch
                | Self::GpuMemoryTaken
                | Self::AddressInUse
        )
    }
}

impl std::str::FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fault::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            format!(
                "unknown fault `{s}`; known: {}",
                Fault::ALL.map(|f| f.name()).join(", ")
            )
        })
    }
}
