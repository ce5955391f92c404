//! The rows of the runbooks' tables (the incident symptom table, the three OOM cases, the
//! startup failures) and the triage steps that find them. The triage (health, metrics, GPU,
//! logs) and the log investigator both answer with one of these rows, so a verdict always
//! names a runbook row and its action (`rule-<id>-diagnosis`, `rule-<id>-action`).

use crate::domain::startup_failure::FailureRow;
use serde::{Deserialize, Serialize};

/// A row of one of the runbook's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    // The symptom table.
    Dead,
    Hung,
    KvExhausted,
    SeqCapped,
    Preemptions,
    PrefixMiss,
    TpotNeighbor,
    ProxyParser,
    // The three OOM cases.
    OomStartWeights,
    OomStartKv,
    OomUnderLoad,
    // The rest of the startup-failure table.
    StartGpuMemoryTaken,
    StartAddressInUse,
    StartIncompleteWeights,
    StartUnsupportedArch,
    StartDriverMismatch,
    StartInvalidArgument,
    StartContextAboveModel,
    /// A start that aborted on a cause no row of the table names (its first exception cited).
    StartFailed,
    // Beyond the runbook's tables: a GPU fault (Xid, ECC) next to the engine's death or hang.
    GpuFault,
}

impl Rule {
    pub const ALL: [Rule; 20] = [
        Rule::Dead,
        Rule::Hung,
        Rule::KvExhausted,
        Rule::SeqCapped,
        Rule::Preemptions,
        Rule::PrefixMiss,
        Rule::TpotNeighbor,
        Rule::ProxyParser,
        Rule::OomStartWeights,
        Rule::OomStartKv,
        Rule::OomUnderLoad,
        Rule::StartGpuMemoryTaken,
        Rule::StartAddressInUse,
        Rule::StartIncompleteWeights,
        Rule::StartUnsupportedArch,
        Rule::StartDriverMismatch,
        Rule::StartInvalidArgument,
        Rule::StartContextAboveModel,
        Rule::StartFailed,
        Rule::GpuFault,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::Dead => "dead",
            Rule::Hung => "hung",
            Rule::KvExhausted => "kv-exhausted",
            Rule::SeqCapped => "seq-capped",
            Rule::Preemptions => "preemptions",
            Rule::PrefixMiss => "prefix-miss",
            Rule::TpotNeighbor => "tpot-neighbor",
            Rule::ProxyParser => "proxy-parser",
            Rule::OomStartWeights => "oom-start-weights",
            Rule::OomStartKv => "oom-start-kv",
            Rule::OomUnderLoad => "oom-under-load",
            Rule::StartGpuMemoryTaken => "start-gpu-memory-taken",
            Rule::StartAddressInUse => "start-address-in-use",
            Rule::StartIncompleteWeights => "start-incomplete-weights",
            Rule::StartUnsupportedArch => "start-unsupported-arch",
            Rule::StartDriverMismatch => "start-driver-mismatch",
            Rule::StartInvalidArgument => "start-invalid-argument",
            Rule::StartContextAboveModel => "start-context-above-model",
            Rule::StartFailed => "start-failed",
            Rule::GpuFault => "gpu-fault",
        }
    }

    /// Which triage step finds it (health → metrics → gpu → logs).
    pub fn step(self) -> Step {
        match self {
            Rule::Dead | Rule::Hung | Rule::ProxyParser => Step::Health,
            Rule::KvExhausted | Rule::SeqCapped | Rule::Preemptions | Rule::PrefixMiss => Step::Metrics,
            Rule::TpotNeighbor | Rule::GpuFault => Step::Gpu,
            _ => Step::Logs,
        }
    }

    pub fn of_startup(row: FailureRow) -> Rule {
        match row {
            FailureRow::CudaOomAtLoad => Rule::OomStartWeights,
            FailureRow::KvCacheTooSmall => Rule::OomStartKv,
            FailureRow::GpuMemoryTaken => Rule::StartGpuMemoryTaken,
            FailureRow::AddressInUse => Rule::StartAddressInUse,
            FailureRow::IncompleteWeights => Rule::StartIncompleteWeights,
            FailureRow::UnsupportedArchitecture => Rule::StartUnsupportedArch,
            FailureRow::DriverMismatch => Rule::StartDriverMismatch,
            FailureRow::InvalidArgument => Rule::StartInvalidArgument,
            FailureRow::ContextAboveModel => Rule::StartContextAboveModel,
        }
    }

    /// Operating rule 3: restart only for a dead or hung process or an OOM under load; a
    /// restart does not fix a queue or a slow p95.
    pub fn allows_restart(self) -> bool {
        matches!(self, Rule::Dead | Rule::Hung | Rule::OomUnderLoad)
    }
}

/// The triage steps, in the runbook's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    Health,
    Metrics,
    Gpu,
    Logs,
}

impl Step {
    pub const ALL: [Step; 4] = [Step::Health, Step::Metrics, Step::Gpu, Step::Logs];
    pub fn id(self) -> &'static str {
        match self {
            Step::Health => "health",
            Step::Metrics => "metrics",
            Step::Gpu => "gpu",
            Step::Logs => "logs",
        }
    }
}
