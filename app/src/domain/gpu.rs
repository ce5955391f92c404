//! GPU state as the console reports it, whatever read it (NVML or a recording), and which
//! processes on a GPU are our engines and which are foreign.

use serde::{Deserialize, Serialize};

/// A process holding memory on a GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct GpuProcess {
    pub pid: i32,
    pub used_bytes: Option<u64>,
    /// The profile whose engine owns it; `None` for a foreign process.
    #[serde(default)]
    pub profile: Option<String>,
}

/// One GPU's readings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct GpuReading {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub memory_used_bytes: u64,
    pub memory_total_bytes: u64,
    /// What the driver or firmware keeps of the total (NVML v2); CUDA reports the total
    /// less this, and that is what the engines' utilisation multiplies.
    #[serde(default)]
    pub memory_reserved_bytes: Option<u64>,
    pub utilization_pct: Option<u32>,
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub sm_clock_mhz: Option<u32>,
    /// Active clock throttle reasons ("sw_power_cap", "hw_thermal_slowdown", …).
    pub throttle: Vec<String>,
    pub processes: Vec<GpuProcess>,
    /// Uncorrected ECC errors since the last driver load (volatile counter).
    #[serde(default)]
    pub ecc_uncorrected: Option<u64>,
    /// Pages waiting to be retired (pre-Ampere) or rows waiting to be remapped (Ampere on):
    /// the GPU needs a reset before the memory is clean again.
    #[serde(default)]
    pub retired_pages_pending: Option<bool>,
    #[serde(default)]
    pub remapped_rows_pending: Option<bool>,
}

/// A critical event the driver reported for a GPU (NVML's event set; a recording in tests).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct GpuEvent {
    /// When the console received it (Unix ms).
    pub at_ms: i64,
    pub gpu: u32,
    /// An Xid code; `None` for a double-bit ECC event without one.
    pub xid: Option<u64>,
    #[serde(default)]
    pub double_bit_ecc: bool,
}

/// Who an Xid points at, from NVIDIA's Xid catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum XidBlame {
    /// The GPU or its link: no profile change fixes it; drain the GPU, reset or replace it.
    Hardware,
    /// The driver or GPU firmware.
    Driver,
    /// Usually the application (an illegal address, a kernel exception): the engine's bug or
    /// a bad build, the GPU itself is fine.
    Application,
}

impl GpuEvent {
    /// What the event says about the GPU, and a short meaning (English, for logs and ids).
    pub fn blame(&self) -> (XidBlame, &'static str) {
        if self.double_bit_ecc {
            return (XidBlame::Hardware, "double-bit ECC error");
        }
        match self.xid.unwrap_or(0) {
            79 => (XidBlame::Hardware, "the GPU fell off the bus"),
            48 => (XidBlame::Hardware, "double-bit ECC error"),
            63 => (XidBlame::Hardware, "ECC page retirement or row remapping recorded"),
            64 => (XidBlame::Hardware, "ECC page retirement or row remapping failed"),
            74 => (XidBlame::Hardware, "NVLink error"),
            92 => (XidBlame::Hardware, "high single-bit ECC error rate"),
            94 => (XidBlame::Hardware, "contained ECC error"),
            95 => (XidBlame::Hardware, "uncontained ECC error"),
            123 | 124 => (XidBlame::Hardware, "SPI PMU RPC failure"),
            61 | 62 => (XidBlame::Driver, "internal micro-controller error"),
            119 | 120 => (XidBlame::Driver, "GSP firmware error"),
            13 => (XidBlame::Application, "graphics engine exception"),
            31 => (XidBlame::Application, "GPU memory page fault (illegal address)"),
            43 => (XidBlame::Application, "GPU stopped processing (reset channel)"),
            45 => (XidBlame::Application, "preemptive cleanup after an earlier error"),
            _ => (XidBlame::Driver, "unlisted Xid"),
        }
    }
}

/// How close a GPU event must be to an engine's death or hang to be named as its cause.
pub const CORRELATION_MS: i64 = 2 * 60 * 1000;

/// The GPU event that best explains an engine failure at `at_ms`: a hardware or driver event
/// within two minutes before it (or a few seconds after: the driver logs after the fact), the
/// closest first.
pub fn correlated(events: &[GpuEvent], at_ms: i64) -> Option<&GpuEvent> {
    events
        .iter()
        .filter(|e| e.at_ms <= at_ms + 10_000 && at_ms - e.at_ms <= CORRELATION_MS)
        .min_by_key(|e| {
            let rank = match e.blame().0 {
                XidBlame::Hardware => 0,
                XidBlame::Driver => 1,
                XidBlame::Application => 2,
            };
            (rank, (at_ms - e.at_ms).abs())
        })
}

/// What the GPU source could tell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum GpuState {
    Available {
        driver: Option<String>,
        /// The CUDA version the driver supports (e.g. `12.4`).
        #[serde(default)]
        cuda: Option<String>,
        gpus: Vec<GpuReading>,
        /// Critical events (Xid, double-bit ECC) received since the console started, newest
        /// last (bounded).
        #[serde(default)]
        events: Vec<GpuEvent>,
    },
    /// No NVIDIA driver or library on this host: said plainly, not an empty panel.
    NoDriver { reason: String },
}

/// Marks each GPU process with the profile whose engine it belongs to. Engines run in their
/// own process group led by the engine process, so a worker belongs to an engine when its
/// process group is the engine's pid.
pub fn mark_owners(state: &mut GpuState, engines: &[(i32, String)], group_of: impl Fn(i32) -> Option<i32>) {
    let GpuState::Available { gpus, .. } = state else {
        return;
    };
    for p in gpus.iter_mut().flat_map(|g| g.processes.iter_mut()) {
        let group = group_of(p.pid);
        p.profile = engines
            .iter()
            .find(|(pid, _)| *pid == p.pid || Some(*pid) == group)
            .map(|(_, name)| name.clone());
    }
}

/// Processes on any GPU that belong to no engine of ours.
pub fn foreign(state: &GpuState) -> Vec<(u32, &GpuProcess)> {
    match state {
        GpuState::Available { gpus, .. } => gpus
            .iter()
            .flat_map(|g| {
                g.processes
                    .iter()
                    .filter(|p| p.profile.is_none())
                    .map(move |p| (g.index, p))
            })
            .collect(),
        GpuState::NoDriver { .. } => Vec::new(),
    }
}

/// An engine's GPUs in a few numbers, for the fleet table and the charts: memory and power
/// summed over the GPUs that run one of its processes, the hottest temperature, the mean
/// utilisation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct GpuSummary {
    pub gpus: u32,
    pub memory_used_gib: f64,
    pub memory_total_gib: f64,
    pub utilization_pct: Option<f64>,
    pub temperature_c: Option<f64>,
    pub power_w: Option<f64>,
}

const GIB: f64 = (1u64 << 30) as f64;

impl GpuSummary {
    /// The GPUs running a process of `profile` (after [`mark_owners`]); `None` when none does.
    pub fn of_profile(state: &GpuState, profile: &str) -> Option<Self> {
        let GpuState::Available { gpus, .. } = state else {
            return None;
        };
        let mine: Vec<&GpuReading> = gpus
            .iter()
            .filter(|g| g.processes.iter().any(|p| p.profile.as_deref() == Some(profile)))
            .collect();
        if mine.is_empty() {
            return None;
        }
        let opt_sum = |f: &dyn Fn(&GpuReading) -> Option<f64>| -> Option<f64> {
            let v: Vec<f64> = mine.iter().filter_map(|g| f(g)).collect();
            (!v.is_empty()).then(|| v.iter().sum())
        };
        let util = opt_sum(&|g| g.utilization_pct.map(f64::from));
        let util_n = mine.iter().filter(|g| g.utilization_pct.is_some()).count();
        Some(Self {
            gpus: mine.len() as u32,
            memory_used_gib: mine.iter().map(|g| g.memory_used_bytes as f64 / GIB).sum(),
            memory_total_gib: mine.iter().map(|g| g.memory_total_bytes as f64 / GIB).sum(),
            utilization_pct: util.map(|u| u / util_n as f64),
            temperature_c: mine.iter().filter_map(|g| g.temperature_c).max().map(f64::from),
            power_w: opt_sum(&|g| g.power_w),
        })
    }

    /// The mean of several readings (a minute's rollup); `None` for none.
    pub fn mean(all: &[GpuSummary]) -> Option<Self> {
        let n = all.len() as f64;
        let mean_opt = |f: fn(&GpuSummary) -> Option<f64>| {
            let v: Vec<f64> = all.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let last = all.last()?;
        Some(Self {
            gpus: last.gpus,
            memory_used_gib: all.iter().map(|g| g.memory_used_gib).sum::<f64>() / n,
            memory_total_gib: last.memory_total_gib,
            utilization_pct: mean_opt(|g| g.utilization_pct),
            temperature_c: mean_opt(|g| g.temperature_c),
            power_w: mean_opt(|g| g.power_w),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> GpuState {
        let gpu = |index, pids: &[i32]| GpuReading {
            ecc_uncorrected: None,
            retired_pages_pending: None,
            remapped_rows_pending: None,
            index,
            name: "NVIDIA H200".into(),
            uuid: format!("GPU-{index}"),
            memory_used_bytes: 70 << 30,
            memory_total_bytes: 141 << 30,
            memory_reserved_bytes: None,
            utilization_pct: Some(90),
            temperature_c: Some(61),
            power_w: Some(512.0),
            power_limit_w: Some(700.0),
            sm_clock_mhz: Some(1980),
            throttle: vec![],
            processes: pids
                .iter()
                .map(|p| GpuProcess {
                    pid: *p,
                    used_bytes: Some(60 << 30),
                    profile: None,
                })
                .collect(),
        };
        GpuState::Available {
            events: vec![],
            driver: Some("570.86".into()),
            cuda: Some("12.8".into()),
            gpus: vec![gpu(0, &[101, 102]), gpu(1, &[103, 999])],
        }
    }

    #[test]
    fn workers_of_our_engines_are_ours_the_rest_foreign() {
        let mut s = state();
        // Engine "qwen" is pid 100 (group leader); 101–103 are its TP workers; 999 is not ours.
        mark_owners(&mut s, &[(100, "qwen".into())], |pid| {
            (101..=103).contains(&pid).then_some(100)
        });
        let f = foreign(&s);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].0, f[0].1.pid), (1, 999));
        let GpuState::Available { gpus, .. } = &s else { panic!() };
        assert_eq!(gpus[0].processes[0].profile.as_deref(), Some("qwen"));
        // Both GPUs run a qwen worker: 2 × 70 GiB used of 2 × 141, the hotter one, summed watts.
        let sum = GpuSummary::of_profile(&s, "qwen").unwrap();
        assert_eq!((sum.gpus, sum.memory_used_gib, sum.memory_total_gib), (2, 140.0, 282.0));
        assert_eq!(
            (sum.temperature_c, sum.power_w, sum.utilization_pct),
            (Some(61.0), Some(1024.0), Some(90.0))
        );
        assert_eq!(GpuSummary::of_profile(&s, "other"), None);
    }

    #[test]
    fn recordings_round_trip_and_no_driver_is_explicit() {
        let s = state();
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<GpuState>(&json).unwrap(), s);
        let none: GpuState =
            serde_json::from_str(r#"{"status":"no-driver","reason":"libnvidia-ml.so.1 not found"}"#).unwrap();
        assert!(foreign(&none).is_empty());
    }

    #[test]
    fn a_gpu_event_near_a_failure_is_named_hardware_first() {
        let ev = |at_ms, gpu, xid| GpuEvent {
            at_ms,
            gpu,
            xid: Some(xid),
            double_bit_ecc: false,
        };
        let died = 1_000_000;
        let events = vec![
            ev(died - 60_000, 0, 31),
            ev(died - 3_000, 1, 79),
            ev(died - 600_000, 2, 48),
        ];
        let e = correlated(&events, died).unwrap();
        assert_eq!((e.gpu, e.xid), (1, Some(79)));
        assert_eq!(e.blame(), (XidBlame::Hardware, "the GPU fell off the bus"));
        // Older than two minutes: not the cause.
        assert!(correlated(&events[2..], died).is_none());
        // Only an application Xid: it is still named, as the application's.
        assert_eq!(correlated(&events[..1], died).unwrap().blame().0, XidBlame::Application);
        let ecc = GpuEvent {
            at_ms: died,
            gpu: 0,
            xid: None,
            double_bit_ecc: true,
        };
        assert_eq!(ecc.blame().0, XidBlame::Hardware);
    }
}
