//! GPU state as the console reports it, whatever read it (NVML or a recording), and which
//! processes on a GPU are our engines and which are foreign.

use serde::{Deserialize, Serialize};

/// A process holding memory on a GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuProcess {
    pub pid: i32,
    pub used_bytes: Option<u64>,
    /// The profile whose engine owns it; `None` for a foreign process.
    #[serde(default)]
    pub profile: Option<String>,
}

/// One GPU's readings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuReading {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub memory_used_bytes: u64,
    pub memory_total_bytes: u64,
    pub utilization_pct: Option<u32>,
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub sm_clock_mhz: Option<u32>,
    /// Active clock throttle reasons ("sw_power_cap", "hw_thermal_slowdown", …).
    pub throttle: Vec<String>,
    pub processes: Vec<GpuProcess>,
}

/// What the GPU source could tell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum GpuState {
    Available {
        driver: Option<String>,
        /// The CUDA version the driver supports (e.g. `12.4`).
        #[serde(default)]
        cuda: Option<String>,
        gpus: Vec<GpuReading>,
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
            index,
            name: "NVIDIA H200".into(),
            uuid: format!("GPU-{index}"),
            memory_used_bytes: 70 << 30,
            memory_total_bytes: 141 << 30,
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
}
