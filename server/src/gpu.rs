//! GPU readings through NVML, behind a seam: `GpuSource` is NVML on a GPU host and a
//! recording (`ROOFLINE_GPU_RECORDING=file.json`) in tests and on machines without a GPU.
//! NVML is loaded at run time, so the binary runs anywhere; without the driver the state
//! says so plainly.

use app::domain::gpu::{GpuProcess, GpuReading, GpuState};

/// Anything that can read the GPUs.
pub trait GpuSource {
    fn read(&self) -> GpuState;
}

/// Recorded readings from a JSON file (a `GpuState`).
pub struct Recorded(pub std::path::PathBuf);

impl GpuSource for Recorded {
    fn read(&self) -> GpuState {
        match std::fs::read_to_string(&self.0) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| GpuState::NoDriver {
                reason: format!("recording {}: {e}", self.0.display()),
            }),
            Err(e) => GpuState::NoDriver {
                reason: format!("recording {}: {e}", self.0.display()),
            },
        }
    }
}

/// The NVIDIA driver's library.
pub struct NvmlSource;

impl GpuSource for NvmlSource {
    fn read(&self) -> GpuState {
        use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
        use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError};
        use nvml_wrapper::enums::device::UsedGpuMemory;
        let nvml = match nvml_wrapper::Nvml::init() {
            Ok(n) => n,
            Err(e) => {
                return GpuState::NoDriver {
                    reason: format!("no NVIDIA driver: {e}"),
                }
            }
        };
        let driver = nvml.sys_driver_version().ok();
        // NVML reports 12040 for CUDA 12.4.
        let cuda = nvml
            .sys_cuda_driver_version()
            .ok()
            .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10));
        let count = match nvml.device_count() {
            Ok(c) => c,
            Err(e) => {
                return GpuState::NoDriver {
                    reason: format!("NVML lists no devices: {e}"),
                }
            }
        };
        let mut gpus = Vec::new();
        for index in 0..count {
            let Ok(d) = nvml.device_by_index(index) else { continue };
            let mem = d.memory_info().ok();
            let throttle = d
                .current_throttle_reasons()
                .map(|r| {
                    let names = format!("{r:?}");
                    names
                        .split(['|', '(', ')', ' '])
                        .map(str::trim)
                        .filter(|n| !n.is_empty() && *n != "ThrottleReasons" && *n != "NONE" && *n != "GPU_IDLE")
                        .map(|n| n.to_ascii_lowercase())
                        .collect()
                })
                .unwrap_or_default();
            let processes = d
                .running_compute_processes()
                .unwrap_or_default()
                .into_iter()
                .map(|p| GpuProcess {
                    pid: p.pid as i32,
                    used_bytes: match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => Some(b),
                        UsedGpuMemory::Unavailable => None,
                    },
                    profile: None,
                })
                .collect();
            gpus.push(GpuReading {
                index,
                name: d.name().unwrap_or_default(),
                uuid: d.uuid().unwrap_or_default(),
                memory_used_bytes: mem.as_ref().map(|m| m.used).unwrap_or(0),
                memory_total_bytes: mem.as_ref().map(|m| m.total).unwrap_or(0),
                memory_reserved_bytes: mem.as_ref().map(|m| m.reserved),
                utilization_pct: d.utilization_rates().ok().map(|u| u.gpu),
                temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
                power_w: d.power_usage().ok().map(|mw| mw as f64 / 1000.0),
                power_limit_w: d.enforced_power_limit().ok().map(|mw| mw as f64 / 1000.0),
                sm_clock_mhz: d.clock_info(Clock::SM).ok(),
                throttle,
                processes,
                ecc_uncorrected: d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile).ok(),
                retired_pages_pending: d.are_pages_pending_retired().ok(),
                // nvml-wrapper 0.13 has no safe call for the row remapper; recordings carry it.
                remapped_rows_pending: None,
            });
        }
        GpuState::Available {
            driver,
            cuda,
            gpus,
            events: events::recent(),
        }
    }
}

/// Critical GPU events (Xid, double-bit ECC) as NVML delivers them: a thread waits on an NVML
/// event set for the whole process life and keeps the last [`events::MAX`] in a ring that every
/// reading carries. Events only arrive after registration, so the watcher starts with the
/// console. A recording carries its own events instead.
pub mod events {
    use app::domain::gpu::GpuEvent;
    use std::collections::VecDeque;
    use std::sync::{Mutex, OnceLock};

    /// Events kept: far more than a host produces between two triages.
    pub const MAX: usize = 256;

    fn ring() -> &'static Mutex<VecDeque<GpuEvent>> {
        static RING: OnceLock<Mutex<VecDeque<GpuEvent>>> = OnceLock::new();
        RING.get_or_init(|| Mutex::new(VecDeque::new()))
    }

    pub fn push(e: GpuEvent) {
        if let Ok(mut r) = ring().lock() {
            if r.len() == MAX {
                r.pop_front();
            }
            r.push_back(e);
        }
    }

    pub fn recent() -> Vec<GpuEvent> {
        ring().lock().map(|r| r.iter().cloned().collect()).unwrap_or_default()
    }

    /// Starts the watcher once; without a driver (or with a recording) it does nothing.
    pub fn watch() {
        static STARTED: OnceLock<()> = OnceLock::new();
        if std::env::var_os("ROOFLINE_GPU_RECORDING").is_some() || STARTED.set(()).is_err() {
            return;
        }
        let spawned = std::thread::Builder::new().name("gpu-events".into()).spawn(|| {
            if let Err(e) = run() {
                tracing::info!("GPU events (Xid, ECC) are not watched: {e}");
            }
        });
        if let Err(e) = spawned {
            tracing::warn!("GPU event watcher not started: {e}");
        }
    }

    /// Why the watcher does not run (logged once: events are an extra, not a fault).
    #[derive(Debug, thiserror::Error)]
    enum Unwatched {
        #[error("no NVIDIA driver: {0}")]
        NoDriver(nvml_wrapper::error::NvmlError),
        #[error("{0}")]
        Nvml(#[from] nvml_wrapper::error::NvmlError),
        #[error("GPU {index}: {error}")]
        Register {
            index: u32,
            error: nvml_wrapper::error::NvmlError,
        },
    }

    fn run() -> Result<(), Unwatched> {
        use nvml_wrapper::bitmasks::event::EventTypes;
        use nvml_wrapper::enums::event::XidError;
        use nvml_wrapper::error::NvmlError;
        let nvml = nvml_wrapper::Nvml::init().map_err(Unwatched::NoDriver)?;
        let count = nvml.device_count()?;
        let mut set = nvml.create_event_set()?;
        for index in 0..count {
            let device = nvml.device_by_index(index)?;
            set = device
                .register_events(EventTypes::CRITICAL_XID_ERROR | EventTypes::DOUBLE_BIT_ECC_ERROR, set)
                .map_err(|e| Unwatched::Register { index, error: e.error })?;
        }
        loop {
            match set.wait(5_000) {
                Ok(data) => push(GpuEvent {
                    at_ms: crate::clock::now_ms(),
                    gpu: data.device.index().unwrap_or(u32::MAX),
                    xid: match data.event_data {
                        Some(XidError::Value(v)) => Some(v),
                        _ => None,
                    },
                    double_bit_ecc: data.event_type.contains(EventTypes::DOUBLE_BIT_ECC_ERROR),
                }),
                Err(NvmlError::Timeout) => {}
                Err(e) => {
                    tracing::warn!("GPU event wait: {e}");
                    std::thread::sleep(std::time::Duration::from_secs(5));
                }
            }
        }
    }
}

/// The source for this process: a recording when `ROOFLINE_GPU_RECORDING` names one, else NVML.
pub fn source() -> Box<dyn GpuSource + Send + Sync> {
    match std::env::var_os("ROOFLINE_GPU_RECORDING") {
        Some(path) => Box::new(Recorded(path.into())),
        None => Box::new(NvmlSource),
    }
}

/// Reads the GPUs off the async threads (NVML calls block); a failed read is a clear
/// "no driver" state, never a panic.
pub async fn read() -> GpuState {
    tokio::task::spawn_blocking(|| source().read())
        .await
        .unwrap_or_else(|e| GpuState::NoDriver { reason: e.to_string() })
}

/// The process group of a pid (field 5 of /proc/PID/stat).
pub fn process_group(pid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    after.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_the_state_says_so() {
        // CI and dev machines have no NVIDIA driver: NVML fails to load, plainly.
        if std::path::Path::new("/dev/nvidiactl").exists() {
            return;
        }
        match NvmlSource.read() {
            GpuState::NoDriver { reason } => assert!(reason.contains("NVIDIA") || reason.contains("NVML"), "{reason}"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn own_process_group() {
        let me = std::process::id() as i32;
        assert!(process_group(me).is_some());
    }
}
