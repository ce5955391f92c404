//! What the console captured the moment it called an engine hung or dead, before anyone could
//! restart it: the processes of its tree (with a Python stack of each, where py-spy is
//! installed), the log tail and the GPUs. A restart destroys exactly this, and an incident
//! opened after it still holds it.

use crate::domain::engine::EngineState;
use crate::domain::gpu::GpuState;
use serde::{Deserialize, Serialize};

/// One process of the engine's tree at the moment of the verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct CapturedProcess {
    pub pid: i32,
    pub name: String,
    /// The kernel's state letter (`S`, `R`, `D` stuck in the kernel, `T` stopped).
    pub state: String,
    pub rss_kib: Option<u64>,
    /// `py-spy dump` of its threads, capped; `None` when no dump was taken.
    pub stack: Option<String>,
}

/// The bundle.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Capture {
    pub at_ms: i64,
    pub state: Option<EngineState>,
    /// Why the console called it so (the monitor's note).
    pub note: String,
    pub processes: Vec<CapturedProcess>,
    /// Why there are no stacks, when there are none (py-spy not installed, not permitted).
    pub stacks_note: Option<String>,
    pub log_tail: Vec<String>,
    pub gpu: Option<GpuState>,
}

/// The most bytes of one stack dump kept.
pub const STACK_BYTES: usize = 32 << 10;
