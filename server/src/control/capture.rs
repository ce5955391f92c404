//! Evidence before action: the moment the console calls an engine hung or dead, it keeps what
//! a restart would destroy (`app::domain::capture`). Stored per profile in the state directory
//! (`captures/<ms>.json`, the newest few), read back when an incident is opened.
//!
//! Stacks come from `py-spy dump --nonblocking` (it reads a stopped or wedged process without
//! attaching and pausing it), found next to the engine installation's own executable (the
//! same virtualenv) or on the console's PATH: which program runs is host configuration, never
//! a profile's. Each dump is bounded in time and size.

use super::{procfs, EngineControl, Running};
use app::domain::capture::{Capture, CapturedProcess, STACK_BYTES};
use app::domain::engine::EngineState;
use app::domain::gpu::GpuState;
use std::path::PathBuf;
use std::time::Duration;

/// Captures kept per profile.
const KEEP: usize = 5;
/// Log lines kept in a capture.
const LOG_LINES: usize = 200;
/// How long one stack dump may take.
const DUMP_TIMEOUT: Duration = Duration::from_secs(10);

impl EngineControl {
    fn captures_dir(&self, profile: &str) -> PathBuf {
        self.dir(profile).join("captures")
    }

    /// The py-spy this host offers for an installation: beside its executable, else on PATH.
    fn py_spy(&self, engine: &str) -> Option<PathBuf> {
        let beside = self
            .data
            .engine(engine)
            .filter(|i| !i.simulator && i.runtime.is_none())
            .and_then(|i| i.command.first())
            .map(PathBuf::from)
            .and_then(|p| p.parent().map(|d| d.join("py-spy")))
            .filter(|p| p.is_file());
        beside.or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("py-spy"))
                    .find(|p| p.is_file())
            })
        })
    }

    /// Captures the bundle for `profile` now and stores it; returns it.
    pub async fn capture(&self, profile: &str, state: EngineState, note: &str, gpu: Option<GpuState>) -> Capture {
        let record = match self.running(profile) {
            Some(Running::Alive(r)) | Some(Running::Orphaned(r, _)) => Some(r),
            _ => None,
        };
        let tree = record.as_ref().map(|r| self.tree(r)).unwrap_or_default();
        let engine = self.store.get(profile).await.ok().flatten().map(|s| s.profile.engine);
        let py_spy = engine.as_deref().and_then(|e| self.py_spy(e));
        let stacks_note = match (&py_spy, tree.is_empty()) {
            (_, true) => Some("no process of the engine was running".to_string()),
            (None, false) => Some("py-spy is not installed beside the engine or on the console's PATH".to_string()),
            (Some(_), false) => None,
        };
        let dumps = futures::future::join_all(tree.iter().map(|p| {
            let py_spy = py_spy.clone();
            async move {
                match py_spy {
                    Some(exe) => dump(&exe, p.pid).await,
                    None => None,
                }
            }
        }))
        .await;
        let processes = tree
            .iter()
            .zip(dumps)
            .map(|(p, stack)| CapturedProcess {
                pid: p.pid,
                name: p.name.clone(),
                state: procfs::stat(p.pid).map(|s| s.state.to_string()).unwrap_or_default(),
                rss_kib: rss_kib(p.pid),
                stack,
            })
            .collect();
        let capture = Capture {
            at_ms: crate::clock::now_ms(),
            state: Some(state),
            note: note.to_string(),
            processes,
            stacks_note,
            log_tail: super::logs::tail(&self.log_path(profile), LOG_LINES).unwrap_or_default(),
            gpu,
        };
        self.keep_capture(profile, &capture);
        capture
    }

    fn keep_capture(&self, profile: &str, c: &Capture) {
        let dir = self.captures_dir(profile);
        if std::fs::create_dir_all(&dir).is_err() {
            return;
        }
        let path = dir.join(format!("{}.json", c.at_ms));
        if let Ok(bytes) = serde_json::to_vec(c) {
            if let Err(e) = super::write_atomic(&path, &bytes) {
                tracing::warn!(profile, "capture not stored: {e}");
            }
        }
        let mut names = capture_files(&dir);
        while names.len() > KEEP {
            let (_, oldest) = names.remove(0);
            let _ = std::fs::remove_file(oldest);
        }
    }

    /// The newest capture of `profile` made within the last `within_ms`.
    pub fn latest_capture(&self, profile: &str, within_ms: i64) -> Option<Capture> {
        let (at, path) = capture_files(&self.captures_dir(profile)).pop()?;
        if crate::clock::now_ms() - at > within_ms {
            return None;
        }
        // Our own file, but read bounded like any other.
        let meta = std::fs::metadata(&path).ok()?;
        if meta.len() > 4 << 20 {
            return None;
        }
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }
}

/// The capture files of a directory, oldest first, by the time in their names.
fn capture_files(dir: &std::path::Path) -> Vec<(i64, PathBuf)> {
    let mut out: Vec<(i64, PathBuf)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    let at: i64 = name.strip_suffix(".json")?.parse().ok()?;
                    Some((at, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Resident memory from `/proc/PID/status` (`VmRSS: N kB`).
fn rss_kib(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// `py-spy dump --nonblocking --pid PID`, bounded in time and size (argv, never a shell).
async fn dump(exe: &std::path::Path, pid: i32) -> Option<String> {
    let child = tokio::process::Command::new(exe)
        .args(["dump", "--nonblocking", "--pid", &pid.to_string()])
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = match tokio::time::timeout(DUMP_TIMEOUT, child).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Some(format!("py-spy: {e}")),
        Err(_) => return Some(format!("py-spy: no dump within {} s", DUMP_TIMEOUT.as_secs())),
    };
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        text.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let cut = app::domain::text::cut(&mut text, STACK_BYTES);
    if cut > 0 {
        text.push_str(&format!("\n… ({cut} bytes cut)"));
    }
    Some(text)
}
