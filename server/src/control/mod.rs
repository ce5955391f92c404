//! Engine control: profiles become child processes, and files in the state directory say
//! which process belongs to which profile, so engines outlive the console and the CLI.
//!
//! Layout per profile (`<state>/<profile>/`): `engine.json` (pid, start time, argv, port),
//! `engine.pid` (the bare pid, as the toolbox wrote it), `engine.log` (+ `engine.log.1`, the
//! previous run), `failure.json` (the last failed start), `ready` (health seen once), `lock`.

pub mod actions;
pub mod capture;
mod command;
pub mod container;
pub mod flags;
pub mod logs;
pub mod pins;
pub mod procfs;
pub mod startups;
pub mod upgrade;
pub mod verdicts;

use crate::config::{confined, DataDir};
use app::domain::engine::{EngineKind, EngineState, EngineStatus};
use app::domain::flagmap::render_argv;
use app::domain::phases::StartupPhase;
use app::domain::profile::{Profile, AIR_GAP_ENV};
use app::domain::startup_failure::{classify, FailureMatch};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How many log lines a failed start reports (built around the root cause).
pub const FAILURE_LINES: usize = 40;
/// How far back in a failed start's log the root cause is looked for: a vLLM start that fails
/// prints its cause, then hundreds of lines of tracebacks and shutdown from other processes.
pub const DIAGNOSIS_LINES: usize = 4000;

/// The startup-failure row of a log and the lines that show its root cause. Lines the console
/// wrote itself (`roofline: …`, the model check) are not the engine's and decide nothing.
pub fn diagnose_log(path: &Path) -> (Option<FailureMatch>, Vec<String>) {
    let lines: Vec<String> = logs::tail(path, DIAGNOSIS_LINES)
        .unwrap_or_default()
        .into_iter()
        .filter(|l| !l.starts_with("roofline: "))
        .collect();
    let failure = classify(lines.iter().map(String::as_str));
    let excerpt = app::domain::startup_failure::excerpt(&lines, failure.as_ref(), FAILURE_LINES);
    (failure, excerpt)
}

/// What the state directory remembers about a launched engine.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EngineRecord {
    pub profile: String,
    pub pid: i32,
    /// Start time in ticks since boot: proves the pid is still our process.
    pub start_ticks: u64,
    pub argv: Vec<String>,
    pub host: String,
    pub port: u16,
    pub started_at: u64,
    /// Set when the engine runs in a container (`pid` is then its init process on the host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<container::ContainerRecord>,
}

/// Errors of engine control, each naming what the operator must look at.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("no profile named {0}")]
    NoSuchProfile(String),
    #[error("profile {profile} names engine installation {engine}, which {config} does not define")]
    NoSuchEngine {
        profile: String,
        engine: String,
        config: &'static str,
    },
    #[error("profile {profile}: MODEL {source}")]
    ModelPath {
        profile: String,
        source: crate::config::PathError,
    },
    /// The launch policy refuses the profile (it would choose what runs or load code).
    #[error("profile {profile} is refused: {issues}")]
    Refused { profile: String, issues: String },
    /// The host requires verified model directories and this one is not.
    #[error("profile {profile}: the model directory is not verified: {reason} (`roofline model verify`)")]
    ModelUnverified { profile: String, reason: String },
    /// Processes of the profile's previous engine outlived its leader (and hold its memory).
    #[error(
        "{profile}: processes of its previous engine still run ({}): a new engine beside them would fight them for memory; `roofline stop --profile {profile}` ends them (or set [launch] reap_survivors = true)",
        describe_processes(survivors)
    )]
    Survivors { profile: String, survivors: Vec<Survivor> },
    #[error("port {port} is in use by {owner}")]
    PortBusy { port: u16, owner: String },
    #[error("a serve or stop of {0} is already in progress")]
    Busy(String),
    #[error("a change's gate holds {0}: serve, stop and restart wait until the gate ends")]
    Gated(String),
    #[error("{0} is being served, stopped or gated right now; its gate can start once that ends")]
    GateBlocked(String),
    #[error("{profile} exited before it became healthy (exit: {exit})")]
    StartupFailed {
        profile: String,
        exit: String,
        failure: Option<FailureMatch>,
        last_lines: Vec<String>,
    },
    #[error("{profile} did not become healthy within {timeout_s} s; it was stopped")]
    Timeout {
        profile: String,
        timeout_s: u64,
        last_lines: Vec<String>,
    },
    /// The container CLI refused or failed a step (its own message follows).
    #[error("profile {profile}: container: {source}")]
    Container {
        profile: String,
        source: container::ContainerError,
    },
    /// A running container has the profile's name but is not the console's to adopt.
    #[error("profile {profile}: a container named {container} runs, but it is not this console's engine ({why}); it is left running and not adopted: inspect it, remove it (`podman rm -f`), then serve again")]
    ForeignContainer {
        profile: String,
        container: String,
        why: String,
    },
    #[error("starting {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("state directory: {0}")]
    Io(#[from] std::io::Error),
    #[error("profile store: {0}")]
    Store(#[from] crate::profile_store::StoreError),
}

/// What a serve did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServeOutcome {
    Started { pid: i32 },
    AlreadyRunning { pid: i32 },
}

/// What a stop did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopOutcome {
    Stopped {
        /// The engine's recorded pid (its process group's id).
        pid: i32,
        /// SIGKILL was needed after the grace period.
        killed: bool,
        /// The recorded process had already exited: what was stopped were its survivors.
        leader_gone: bool,
        /// Every process of the engine's tree the stop found and ended.
        processes: Vec<Survivor>,
        /// What NVML says of those processes afterwards ("proof of stop").
        gpu: GpuRelease,
    },
    NotRunning,
}

/// One process of an engine's tree, as a stop or a refusal names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Survivor {
    pub pid: i32,
    pub name: String,
    pub start_ticks: u64,
}

/// Whether the GPUs still show a stopped engine's processes holding memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum GpuRelease {
    /// NVML lists none of them.
    Released,
    /// NVML still lists these pids with memory (bytes, when NVML says).
    StillHeld { pids: Vec<(i32, Option<u64>)> },
    /// No NVIDIA driver here (or NVML failed): nothing to prove.
    Unchecked { reason: String },
}

impl std::fmt::Display for GpuRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Released => write!(f, "no process of it holds GPU memory"),
            Self::StillHeld { pids } => {
                let list: Vec<String> = pids
                    .iter()
                    .map(|(p, b)| match b {
                        Some(b) => format!("{p} ({:.2} GiB)", *b as f64 / (1u64 << 30) as f64),
                        None => p.to_string(),
                    })
                    .collect();
                write!(f, "GPU memory still held by pid {}", list.join(", "))
            }
            Self::Unchecked { reason } => write!(f, "GPU memory not checked: {reason}"),
        }
    }
}

fn describe_processes(ps: &[Survivor]) -> String {
    ps.iter()
        .map(|p| format!("{} {}", p.pid, p.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Progress of a serve, for the CLI's progress line and the UI's phase steps.
#[derive(Clone, Debug)]
pub struct Progress {
    pub phase: StartupPhase,
    pub elapsed: Duration,
    pub last_line: Option<String>,
    /// The current phase has run far past its median in this profile's earlier starts.
    pub stall: Option<app::domain::phases::Stall>,
}

/// A start in progress as the status reads it: when it began, the phases so far, and a stall.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StartupState {
    pub started_at_ms: i64,
    pub marks: Vec<app::domain::phases::PhaseMark>,
    pub stall: Option<app::domain::phases::Stall>,
}

/// A profile with everything needed to launch it: the engine kind and whether the
/// installation is the simulator (from host configuration), and the rendered argv.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub profile: Profile,
    pub kind: EngineKind,
    pub simulated: bool,
    /// The engine's own command line (inside the image, for a container installation).
    pub argv: Vec<String>,
    /// What the console executes: `argv` itself, or the container CLI's `run` around it.
    pub launch: Vec<String>,
}

impl Resolved {
    /// Where this profile's engine answers.
    pub fn base_url(&self) -> String {
        crate::engine::profile_base(&self.profile, self.kind)
    }

    /// HTTP to this profile's engine.
    pub fn engine(&self) -> crate::engine::Engine {
        crate::engine::Engine::at(&self.base_url())
    }
}

/// Whether a profile's engine is ours and alive, from its state files.
#[derive(Clone, Debug, PartialEq)]
pub enum Running {
    /// The recorded process is alive and is the one we launched.
    Alive(EngineRecord),
    /// The recorded process is gone but processes of its tree still run: vLLM's EngineCore and
    /// workers outlive a killed API server and keep their (GPU) memory. Dead to a client, not
    /// stopped to the host.
    Orphaned(EngineRecord, Vec<Survivor>),
    /// The record names a process that is gone (or whose pid was reused).
    Gone(EngineRecord),
}

/// A change's gate's hold on a profile ([`EngineControl::hold_for_gate`]); released on drop.
pub struct GateHold {
    profile: String,
    _lock: nix::fcntl::Flock<std::fs::File>,
}

/// Engine control over one data directory.
#[derive(Clone)]
pub struct EngineControl {
    data: DataDir,
    store: crate::profile_store::ProfileStore,
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl EngineControl {
    pub fn new(data: DataDir, store: crate::profile_store::ProfileStore) -> Self {
        Self { data, store }
    }

    /// The data directory and host configuration it was opened on (what
    /// [`crate::context::Context`] hands the features; nothing else reaches through here).
    pub fn data(&self) -> &DataDir {
        &self.data
    }

    /// The profile store it resolves profiles from.
    pub fn store(&self) -> &crate::profile_store::ProfileStore {
        &self.store
    }

    /// The model directory against the runbook's air-gap rules before a start: the
    /// structure always; the hashes in full under `verify = "require"`, from the hash cache
    /// under `warn` (a start never waits minutes for hashes it would not refuse on). `Err`
    /// when the directory cannot be read at all. `simulated`: the installation is the
    /// simulator (host configuration), which loads no weights.
    pub async fn check_model(
        &self,
        dir: &Path,
        simulated: bool,
    ) -> Result<app::domain::modelcheck::VerifyReport, crate::models::VerifyError> {
        let mode = match self.data.config.verify {
            crate::config::VerifyMode::Warn => crate::models::HashMode::CachedOnly,
            crate::config::VerifyMode::Require => crate::models::HashMode::Full,
        };
        self.check_model_with(dir, mode, simulated).await
    }

    /// [`Self::check_model`] with the hashing chosen by the caller (a gate hashes in full).
    pub async fn check_model_with(
        &self,
        dir: &Path,
        mode: crate::models::HashMode,
        simulated: bool,
    ) -> Result<app::domain::modelcheck::VerifyReport, crate::models::VerifyError> {
        let cache = crate::models::hashcache::HashCache::new(self.store.pool());
        let root = self.data.models_root();
        let mut report = crate::models::verify(Some(&cache), dir, &root, mode, std::sync::Arc::new(|_| {}))
            .await
            .inspect_err(|e| tracing::warn!(dir = %dir.display(), error = %e, "model check could not run"))?;
        if simulated {
            report.weights_simulated();
        }
        Ok(report)
    }

    /// The change journal in this data dir's database.
    pub fn journal(&self) -> crate::journal::Journal {
        crate::journal::Journal::new(self.store.pool())
            .with_anchor(self.data.root.join("journal.head"))
            .with_key(self.data.journal_key())
    }

    pub fn dir(&self, profile: &str) -> PathBuf {
        self.data.state_dir().join(profile)
    }
    /// The engine's working directory: empty and its own, never the console's (the data
    /// directory under the packaged unit, where `roofline.toml` lies). Whatever a relative
    /// path reaches, it reaches here.
    pub fn work_dir(&self, profile: &str) -> Result<PathBuf, ControlError> {
        use std::os::unix::fs::DirBuilderExt;
        let work = self.dir(profile).join("work");
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&work)?;
        Ok(work)
    }
    pub fn log_path(&self, profile: &str) -> PathBuf {
        self.dir(profile).join("engine.log")
    }
    fn record_path(&self, profile: &str) -> PathBuf {
        self.dir(profile).join("engine.json")
    }
    fn failure_path(&self, profile: &str) -> PathBuf {
        self.dir(profile).join("failure.json")
    }
    fn ready_path(&self, profile: &str) -> PathBuf {
        self.dir(profile).join("ready")
    }
    fn version_path(&self, profile: &str) -> PathBuf {
        self.dir(profile).join("version")
    }

    /// The engine's version as it answered once it became healthy, kept in the state dir so
    /// the journal and the pages never ask an engine for it on a request path (a hung engine
    /// would stall them). `None` until it has answered, or if it never did.
    pub fn cached_version(&self, profile: &str) -> Option<String> {
        let v = std::fs::read_to_string(self.version_path(profile)).ok()?;
        let v = v.trim();
        (!v.is_empty()).then(|| v.to_string())
    }

    /// Asks a freshly healthy engine for its version once and caches the answer (an empty
    /// file when it does not say, so it is not asked again until the next start).
    async fn remember_version(&self, name: &str, record: &EngineRecord) {
        let _ = std::fs::write(self.version_path(name), b"");
        let engine = crate::engine::Engine::at(&crate::engine::base_url(&record.host, record.port));
        if let Some(v) = engine.version().await {
            let _ = write_atomic(&self.version_path(name), v.as_bytes());
        }
    }

    /// What the launch policy (`app::domain::launch`, with this host's additions) refuses in
    /// a profile for its installation; empty when it may run (or names no installation).
    pub async fn policy_issues(&self, profile: &Profile) -> Vec<app::domain::profile::Issue> {
        self.policy_reading(profile).await.issues
    }

    /// The launch policy's whole reading of a profile: what it refuses and what each flag of
    /// `EXTRA_ARGS` is (the review shows it). `EXTRA_ARGS` is read against the installed
    /// engine's own `--help` (cached per version), as its argparse will read it; when that
    /// help cannot be had, no extra flag passes. The paths the values reach are resolved on
    /// disk here: a symlink inside the models root may point out of it.
    pub async fn policy_reading(&self, profile: &Profile) -> app::domain::launch::Classified {
        use app::domain::launch::Help;
        let Some(install) = self.data.engine(&profile.engine) else {
            return app::domain::launch::Classified::default();
        };
        let help = if profile.extra_args.is_empty() {
            Help::Static
        } else {
            match self.installed_flags(&profile.engine, install).await {
                Ok(installed) => Help::Installed(installed.flags),
                Err(e) => Help::Unavailable(e.to_string()),
            }
        };
        let mut read = app::domain::launch::classify(profile, install.kind, &self.data.launch_policy(install, help));
        let root = self.data.models_root();
        for path in std::mem::take(&mut read.paths) {
            if confined(&root, Path::new(&path)).is_err() {
                read.issues.push(app::domain::profile::Issue {
                    field: "EXTRA_ARGS".into(),
                    line: None,
                    severity: app::domain::profile::Severity::Error,
                    kind: app::domain::profile::IssueKind::PathOutsideModels { value: path.clone() },
                });
            }
            read.paths.push(path);
        }
        read
    }

    /// Loads a profile and everything needed to launch it.
    pub async fn resolve(&self, name: &str) -> Result<Resolved, ControlError> {
        self.resolve_as(name, None).await
    }

    /// A stored profile, or `NoSuchProfile`.
    pub async fn stored_profile(&self, name: &str) -> Result<Profile, ControlError> {
        Ok(self
            .store
            .get(name)
            .await?
            .ok_or_else(|| ControlError::NoSuchProfile(name.to_string()))?
            .profile)
    }

    /// Like [`Self::resolve`], for a candidate body of the profile when given (a change under
    /// its gate), else the stored one.
    pub async fn resolve_as(&self, name: &str, candidate: Option<Profile>) -> Result<Resolved, ControlError> {
        let profile = match candidate {
            Some(p) => p,
            None => self.stored_profile(name).await?,
        };
        let install = self
            .data
            .engine(&profile.engine)
            .ok_or_else(|| ControlError::NoSuchEngine {
                profile: name.to_string(),
                engine: profile.engine.clone(),
                config: crate::config::CONFIG_FILE,
            })?;
        let (argv, launch) = self.launch_argv(&profile.engine, install, &profile)?;
        Ok(Resolved {
            profile,
            kind: install.kind,
            simulated: install.simulator,
            argv,
            launch,
        })
    }

    /// The profile with `MODEL` as the engine must be given it: resolved on disk (no symbolic
    /// link left below the models root), so a link swapped after the check cannot point the
    /// engine out of the root. Written under the configured root (the path a container
    /// mounts). The served name stays the path as written, so clients see no change. A path
    /// that does not resolve inside the root is left as written: serve refuses it.
    fn with_resolved_model(&self, profile: &Profile) -> Profile {
        let root = self.data.models_root();
        let Ok(canonical) = confined(&root, Path::new(&profile.model)) else {
            return profile.clone();
        };
        let real_root = root.canonicalize().unwrap_or_else(|_| root.clone());
        let Ok(rel) = canonical.strip_prefix(&real_root) else {
            return profile.clone();
        };
        let model = root.join(rel).to_string_lossy().into_owned();
        if model == profile.model {
            return profile.clone();
        }
        Profile {
            served_model_name: Some(profile.model_name().to_string()),
            model,
            ..profile.clone()
        }
    }

    /// The engine's command line and what the console executes for it: the same argv for a
    /// process, the container CLI's `run` around it for a container installation (whose
    /// engine binds every address inside its own network when the port is published).
    pub fn launch_argv(
        &self,
        install_name: &str,
        install: &crate::config::EngineInstall,
        profile: &Profile,
    ) -> Result<(Vec<String>, Vec<String>), ControlError> {
        let command = self.data.command_for(install).map_err(|e| ControlError::Spawn {
            program: "roofline".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let resolved = self.with_resolved_model(profile);
        let profile = &resolved;
        let Some(c) = container::Container::of(install) else {
            let argv = render_argv(install.kind, &command, profile);
            return Ok((argv.clone(), argv));
        };
        let argv = if c.publishes_ports() {
            let inside = Profile {
                host: "0.0.0.0".into(),
                ..profile.clone()
            };
            render_argv(install.kind, &command, &inside)
        } else {
            render_argv(install.kind, &command, profile)
        };
        let port = profile.port.unwrap_or(install.kind.default_port());
        let launch = c
            .run_argv(
                profile,
                &self.data.console_id(),
                install_name,
                &argv,
                &self.data.models_root(),
                port,
            )
            .map_err(|source| ControlError::Container {
                profile: profile.name.clone(),
                source,
            })?;
        Ok((argv, launch))
    }

    /// The record of a running engine, verified to be the same process we launched; a stale
    /// record (pid gone or reused) yields `Err(record)` so callers can report it as dead.
    pub fn running(&self, profile: &str) -> Option<Running> {
        let text = std::fs::read_to_string(self.record_path(profile)).ok()?;
        let record: EngineRecord = serde_json::from_str(&text).ok()?;
        let same = procfs::stat(record.pid)
            .is_some_and(|s| s.start_ticks == record.start_ticks && s.state != 'Z' && s.state != 'X');
        Some(if same {
            Running::Alive(record)
        } else {
            let survivors = self.survivors(&record);
            if survivors.is_empty() {
                Running::Gone(record)
            } else {
                Running::Orphaned(record, survivors)
            }
        })
    }

    fn tree_path(&self, profile: &str) -> PathBuf {
        self.dir(profile).join("tree.json")
    }

    /// The engine's process tree now (its group and the leader's descendants), as
    /// [`procfs::tree_in`] finds it, with names. Containers are their runtime's business.
    fn tree(&self, record: &EngineRecord) -> Vec<Survivor> {
        if record.container.is_some() {
            return Vec::new();
        }
        let table = procfs::processes();
        let mut found = procfs::tree_in(&table, record.pid, record.start_ticks);
        // Processes seen in the tree earlier that left the group (a worker that called
        // setsid): still alive with the same start time, they and theirs are still the engine's.
        let seen: Vec<Survivor> = std::fs::read(self.tree_path(&record.profile))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        for s in seen {
            if table.iter().any(|p| p.pid == s.pid && p.start_ticks == s.start_ticks) {
                found.extend(procfs::tree_in(&table, s.pid, s.start_ticks));
            }
        }
        found.sort_by_key(|p| p.pid);
        found.dedup_by_key(|p| p.pid);
        found
            .into_iter()
            .map(|p| Survivor {
                pid: p.pid,
                name: procfs::comm(p.pid).unwrap_or_else(|| "?".into()),
                start_ticks: p.start_ticks,
            })
            .collect()
    }

    /// The processes of a dead leader's tree that still run.
    fn survivors(&self, record: &EngineRecord) -> Vec<Survivor> {
        self.tree(record).into_iter().filter(|p| p.pid != record.pid).collect()
    }

    /// Remembers the descendants that left the engine's process group, so they are still
    /// found once the leader (their link to the tree) is gone.
    fn remember_tree(&self, record: &EngineRecord) {
        let outside: Vec<Survivor> = self
            .tree(record)
            .into_iter()
            .filter(|p| p.pid != record.pid && crate::gpu::process_group(p.pid) != Some(record.pid))
            .collect();
        let path = self.tree_path(&record.profile);
        let known: Vec<Survivor> = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if outside != known {
            let _ = write_atomic(&path, &serde_json::to_vec(&outside).unwrap_or_default());
        }
    }

    /// Whether the profile's engine is ours and alive.
    pub fn is_running(&self, profile: &str) -> bool {
        matches!(self.running(profile), Some(Running::Alive(_)))
    }

    /// Every profile that has a running record, for port-owner lookups.
    fn running_records(&self) -> Vec<EngineRecord> {
        let Ok(entries) = std::fs::read_dir(self.data.state_dir()) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| match self.running(&e.file_name().to_string_lossy()) {
                Some(Running::Alive(r)) => Some(r),
                _ => None,
            })
            .collect()
    }

    /// Who holds a port: one of our profiles, or a foreign process.
    pub fn port_owner(&self, host: &str, port: u16) -> Option<String> {
        let probe_host = if host == "0.0.0.0" || host == "::" {
            "127.0.0.1"
        } else {
            host
        };
        if std::net::TcpListener::bind((probe_host, port)).is_ok() {
            return None;
        }
        if let Some(r) = self.running_records().into_iter().find(|r| r.port == port) {
            return Some(format!("profile {} (pid {})", r.profile, r.pid));
        }
        match procfs::port_owner(port) {
            Some((pid, name)) => Some(format!("a foreign process {name} (pid {pid})")),
            // A listener we cannot attribute (another user's process, another namespace).
            None if procfs::has_listener(port) => Some("a foreign process (not visible to this user)".to_string()),
            // No listener: only closing connections hold the port; the engine can still bind.
            None => None,
        }
    }

    /// Takes the per-profile lock so two serves or a serve and a stop never interleave.
    fn lock(&self, profile: &str) -> Result<nix::fcntl::Flock<std::fs::File>, ControlError> {
        std::fs::create_dir_all(self.dir(profile))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir(profile).join("lock"))?;
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|_| ControlError::Busy(profile.to_string()))
    }

    /// Starts a profile's engine and waits until `/health` answers 200, reporting progress.
    /// Serving a running profile restarts nothing. If the process exits first, the error
    /// carries its last log lines and the matching startup-failure row.
    pub async fn serve(
        &self,
        name: &str,
        progress: impl FnMut(&Progress) + Send,
    ) -> Result<ServeOutcome, ControlError> {
        self.serve_as(name, None, progress).await
    }

    /// The profile's gate lock file (in its state dir, so the CLI and every console on the
    /// host see it), locked as asked or not at all.
    fn gate_lock(
        &self,
        profile: &str,
        how: nix::fcntl::FlockArg,
    ) -> Result<Option<nix::fcntl::Flock<std::fs::File>>, ControlError> {
        std::fs::create_dir_all(self.dir(profile))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir(profile).join("gate.lock"))?;
        Ok(nix::fcntl::Flock::lock(file, how).ok())
    }

    /// Holds a profile for a change's gate (the gate lock, exclusive): until the hold is
    /// dropped, serve, stop and restart of the profile are refused, and a second gate cannot
    /// start. It cannot be taken while a serve, stop or restart is under way either.
    pub fn hold_for_gate(&self, profile: &str) -> Result<GateHold, ControlError> {
        let lock = self
            .gate_lock(profile, nix::fcntl::FlockArg::LockExclusiveNonblock)?
            .ok_or_else(|| ControlError::GateBlocked(profile.to_string()))?;
        Ok(GateHold {
            profile: profile.to_string(),
            _lock: lock,
        })
    }

    /// Whether a gate holds the profile now (for a quick answer to the UI; the operations
    /// themselves hold [`Self::outside_gate`] for their whole run).
    pub fn gate_held(&self, profile: &str) -> bool {
        self.outside_gate(profile).is_err()
    }

    /// A serve, stop or restart outside a gate holds the gate lock shared for its whole run:
    /// checked and held in one step, so a gate cannot start halfway through it.
    fn outside_gate(&self, profile: &str) -> Result<nix::fcntl::Flock<std::fs::File>, ControlError> {
        self.gate_lock(profile, nix::fcntl::FlockArg::LockSharedNonblock)?
            .ok_or_else(|| ControlError::Gated(profile.to_string()))
    }

    /// Serves a profile from a candidate body instead of the stored one (the gate of a
    /// change: same name, state dir and port, so the candidate runs where the active did).
    pub async fn serve_as(
        &self,
        name: &str,
        candidate: Option<Profile>,
        progress: impl FnMut(&Progress) + Send,
    ) -> Result<ServeOutcome, ControlError> {
        let _outside = self.outside_gate(name)?;
        self.serve_inner(name, candidate, progress).await
    }

    /// Serves under a gate's hold (the candidate, or the previous profile when restoring).
    pub async fn serve_held(
        &self,
        hold: &GateHold,
        candidate: Option<Profile>,
        progress: impl FnMut(&Progress) + Send,
    ) -> Result<ServeOutcome, ControlError> {
        self.serve_inner(&hold.profile, candidate, progress).await
    }

    /// Stops under a gate's hold.
    pub async fn stop_held(&self, hold: &GateHold) -> Result<StopOutcome, ControlError> {
        self.stop_inner(&hold.profile).await
    }

    async fn serve_inner(
        &self,
        name: &str,
        candidate: Option<Profile>,
        mut progress: impl FnMut(&Progress) + Send,
    ) -> Result<ServeOutcome, ControlError> {
        let Resolved {
            profile,
            kind,
            launch,
            argv: engine_argv,
            ..
        } = self.resolve_as(name, candidate).await?;
        // Checked at every start, not only on import: a profile stored before the policy (or
        // under a laxer host configuration) does not run either.
        let refused = self.policy_issues(&profile).await;
        if !refused.is_empty() {
            return Err(ControlError::Refused {
                profile: name.into(),
                issues: refused.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; "),
            });
        }
        let lock = self.lock(name)?;
        let install = self.data.engine(&profile.engine).cloned();
        if let Some(c) = install.as_ref().and_then(container::Container::of) {
            // A container of ours that runs without a record (its state dir was lost): adopted;
            // one that is not ours: refused.
            self.adopt_container(name, &profile.engine, &c, &engine_argv).await?;
        }
        match self.running(name) {
            Some(Running::Alive(record)) => {
                drop(lock);
                self.wait_ready(name, &record, &mut progress).await?;
                return Ok(ServeOutcome::AlreadyRunning { pid: record.pid });
            }
            // A second engine beside the first one's survivors would find its memory taken
            // (on a GPU: an OOM that names nothing). Refused, naming them, unless the host
            // says to end them first.
            Some(Running::Orphaned(record, survivors)) => {
                if !self.data.config.launch.reap_survivors {
                    return Err(ControlError::Survivors {
                        profile: name.into(),
                        survivors,
                    });
                }
                let outcome = self.end_tree(&record, true).await;
                tracing::warn!(profile = %name, ?outcome, "ended the survivors of the previous engine before serving");
                self.journal()
                    .record(
                        "roofline",
                        "reap-survivors",
                        name,
                        "[launch] reap_survivors: processes of the previous engine outlived it",
                        serde_json::json!({"ok": true, "outcome": format!("{outcome:?}")}),
                    )
                    .await;
            }
            _ => {}
        }
        let model = Path::new(&profile.model);
        let model_dir = confined(&self.data.models_root(), model).map_err(|source| ControlError::ModelPath {
            profile: name.into(),
            source,
        })?;
        let model_check = self
            .check_model(&model_dir, install.as_ref().is_some_and(|i| i.simulator))
            .await;
        let refusal = match (&model_check, self.data.config.verify) {
            (Ok(r), mode) => crate::models::refusal(mode, r),
            (Err(e), crate::config::VerifyMode::Require) => Some(e.to_string()),
            (Err(_), crate::config::VerifyMode::Warn) => None,
        };
        if let Some(reason) = refusal {
            return Err(ControlError::ModelUnverified {
                profile: name.into(),
                reason,
            });
        }
        // The draft model too, resolved on disk (a symlink inside the root may point out).
        if let Some(draft) = profile
            .speculative_config
            .as_deref()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
            .and_then(|v| v.get("model").and_then(|m| m.as_str()).map(str::to_string))
            .filter(|m| m.starts_with('/'))
        {
            confined(&self.data.models_root(), Path::new(&draft)).map_err(|reason| ControlError::Refused {
                profile: name.into(),
                issues: format!("SPECULATIVE_CONFIG: {reason}"),
            })?;
        }
        let port = profile.port.unwrap_or(kind.default_port());
        if let Some(owner) = self.port_owner(&profile.host, port) {
            return Err(ControlError::PortBusy { port, owner });
        }
        let dir = self.dir(name);
        let _ = std::fs::remove_file(self.failure_path(name));
        let _ = std::fs::remove_file(self.ready_path(name));
        let _ = std::fs::remove_file(self.record_path(name));
        let log_path = self.log_path(name);
        logs::rotate(&log_path)?;
        let mut log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path)?;
        // What the model check found heads the engine's log, where the operator reads on.
        // File names come from the directory: escaped, so a name with a newline cannot write
        // a line the investigator would take for the engine's.
        if let Ok(r) = &model_check {
            use std::io::Write;
            for f in &r.findings {
                let _ = writeln!(
                    log,
                    "roofline: model check: {:?}: {}: {} [{}]",
                    f.level,
                    f.file.escape_debug(),
                    f.detail.escape_debug(),
                    f.code
                );
            }
        }
        let started = match install.as_ref().and_then(container::Container::of) {
            Some(c) => self.start_container(name, &c, &launch, log).await,
            None => spawn(&launch, &profile, log, dir.join("exit"), &self.work_dir(name)?),
        };
        let record = match started {
            Ok(r) => r,
            Err(e) => {
                // The UI shows why the engine is not running, not just that it is not.
                let report = FailureReport {
                    failure: None,
                    last_lines: vec![e.to_string()],
                    exit: "not started".into(),
                    at: now_unix(),
                };
                write_atomic(
                    &self.failure_path(name),
                    &serde_json::to_vec_pretty(&report).unwrap_or_default(),
                )?;
                return Err(e);
            }
        };
        let record = EngineRecord {
            profile: name.into(),
            host: profile.host.clone(),
            port,
            ..record
        };
        write_atomic(
            &self.record_path(name),
            &serde_json::to_vec_pretty(&record).unwrap_or_default(),
        )?;
        write_atomic(&dir.join("engine.pid"), format!("{}\n", record.pid).as_bytes())?;
        drop(lock);
        self.wait_ready(name, &record, &mut progress).await?;
        Ok(ServeOutcome::Started { pid: record.pid })
    }

    async fn wait_ready(
        &self,
        name: &str,
        record: &EngineRecord,
        progress: &mut (impl FnMut(&Progress) + Send),
    ) -> Result<(), ControlError> {
        let started = Instant::now();
        let started_at_ms = crate::clock::now_ms();
        let timeout = Duration::from_secs(self.data.config.serve_timeout_s);
        let log_path = self.log_path(name);
        let startups = startups::StartupStore::new(self.store.pool());
        let history = startups.ready_history(name).await;
        let mut timeline = app::domain::phases::Timeline::default();
        timeline.reach(StartupPhase::Launched, 0.0);
        let state_path = self.dir(name).join("startup.json");
        let mut written: Option<(usize, bool)> = None;
        let mut offset = 0u64;
        let mut phase = StartupPhase::Launched;
        let mut last_line = None;
        // Each start's phases are kept, however it ends: the history of successful ones is the
        // yardstick for the next.
        let keep = |timeline: &app::domain::phases::Timeline, outcome: &str| {
            let run = startups::StartupRun {
                started_at_ms,
                outcome: outcome.to_string(),
                phases: timeline.marks.clone(),
            };
            let (store, name) = (startups.clone(), name.to_string());
            async move {
                if let Err(e) = store.record(&name, &run).await {
                    tracing::warn!(profile = %name, "startup history not recorded: {e}");
                }
            }
        };
        loop {
            let elapsed = started.elapsed().as_secs_f64();
            if let Ok((lines, off, _)) = logs::read_since(&log_path, offset) {
                offset = off;
                for line in lines {
                    if let Some(p) = StartupPhase::from_log_line(&line) {
                        phase = phase.max(p);
                        if p != StartupPhase::Ready {
                            timeline.reach(phase, elapsed);
                        }
                    }
                    if !line.trim().is_empty() {
                        last_line = Some(line);
                    }
                }
            }
            if self.probe_health(&record.host, record.port).await == Some(200) {
                std::fs::write(self.ready_path(name), b"")?;
                timeline.reach(StartupPhase::Ready, started.elapsed().as_secs_f64());
                keep(&timeline, "ready").await;
                let _ = std::fs::remove_file(&state_path);
                self.remember_version(name, record).await;
                progress(&Progress {
                    phase: StartupPhase::Ready,
                    elapsed: started.elapsed(),
                    last_line,
                    stall: None,
                });
                return Ok(());
            }
            let stall = app::domain::phases::stalled(&timeline.marks, elapsed, &history);
            if written != Some((timeline.marks.len(), stall.is_some())) {
                let state = StartupState {
                    started_at_ms,
                    marks: timeline.marks.clone(),
                    stall,
                };
                if let Err(e) = write_atomic(&state_path, &serde_json::to_vec(&state).unwrap_or_default()) {
                    tracing::warn!(profile = name, error = %e, "the start's phase record is not written");
                }
                written = Some((timeline.marks.len(), stall.is_some()));
            }
            progress(&Progress {
                phase,
                elapsed: started.elapsed(),
                last_line: last_line.clone(),
                stall,
            });
            if !procfs::alive(record.pid) {
                // Give the reaper a moment to record the exit status.
                tokio::time::sleep(Duration::from_millis(100)).await;
                if let Some(c) = &record.container {
                    // The container's last lines come through its follower.
                    self.drain_follower(c).await;
                }
                keep(&timeline, "failed").await;
                let _ = std::fs::remove_file(&state_path);
                let (failure, last_lines) = diagnose_log(&log_path);
                let exit = match &record.container {
                    Some(c) => {
                        let exit = self.container_exit(name, c).await;
                        // Its log and exit code are kept here: the container is not needed.
                        self.remove_container(name, c).await;
                        exit
                    }
                    None => std::fs::read_to_string(self.dir(name).join("exit")).unwrap_or_else(|_| "unknown".into()),
                };
                let report = FailureReport {
                    failure: failure.clone(),
                    last_lines: last_lines.clone(),
                    exit: exit.trim().to_string(),
                    at: now_unix(),
                };
                write_atomic(
                    &self.failure_path(name),
                    &serde_json::to_vec_pretty(&report).unwrap_or_default(),
                )?;
                let _ = std::fs::remove_file(self.record_path(name));
                return Err(ControlError::StartupFailed {
                    profile: name.into(),
                    exit: report.exit,
                    failure,
                    last_lines,
                });
            }
            if started.elapsed() > timeout {
                keep(&timeline, "timeout").await;
                let _ = std::fs::remove_file(&state_path);
                let last_lines = logs::tail(&log_path, FAILURE_LINES).unwrap_or_default();
                if let Err(e) = self.stop_inner(name).await {
                    tracing::error!(profile = name, error = %e, "the engine that timed out starting is not stopped");
                }
                return Err(ControlError::Timeout {
                    profile: name.into(),
                    timeout_s: timeout.as_secs(),
                    last_lines,
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// When the engine's process last exited (the reaper's exit file), Unix ms.
    pub fn exited_at_ms(&self, name: &str) -> Option<i64> {
        let modified = std::fs::metadata(self.dir(name).join("exit")).ok()?.modified().ok()?;
        let d = modified.duration_since(UNIX_EPOCH).ok()?;
        i64::try_from(d.as_millis()).ok()
    }

    /// The start in progress, as the serve loop last wrote it (phases, stall).
    pub fn startup_state(&self, name: &str) -> Option<StartupState> {
        let bytes = std::fs::read(self.dir(name).join("startup.json")).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Stop, then serve the stored profile (which may have changed since the engine started).
    pub async fn restart(&self, name: &str) -> Result<ServeOutcome, ControlError> {
        let _outside = self.outside_gate(name)?;
        self.stop(name).await?;
        self.serve(name, |_| {}).await
    }

    /// SIGTERM to the engine's process group, SIGKILL after the grace period.
    pub async fn stop(&self, name: &str) -> Result<StopOutcome, ControlError> {
        let _outside = self.outside_gate(name)?;
        self.stop_inner(name).await
    }

    async fn stop_inner(&self, name: &str) -> Result<StopOutcome, ControlError> {
        let (record, leader_gone) = match self.running(name) {
            Some(Running::Alive(r)) => (r, false),
            Some(Running::Orphaned(r, _)) => (r, true),
            Some(Running::Gone(r)) => {
                if let Some(c) = &r.container {
                    // The exited container still holds its name until removed (its pid may
                    // belong to another process by now: nothing is signalled).
                    let _ = self.container_exit(name, c).await;
                    self.remove_container(name, c).await;
                }
                self.clear(name);
                return Ok(StopOutcome::NotRunning);
            }
            None => {
                self.clear(name);
                return Ok(StopOutcome::NotRunning);
            }
        };
        if let Some(c) = &record.container {
            let killed = self.stop_container(name, &record, c).await;
            self.clear(name);
            return Ok(StopOutcome::Stopped {
                pid: record.pid,
                killed,
                leader_gone,
                processes: Vec::new(),
                gpu: GpuRelease::Unchecked {
                    reason: "a container's processes are its runtime's".into(),
                },
            });
        }
        let outcome = self.end_tree(&record, leader_gone).await;
        self.clear(name);
        Ok(outcome)
    }

    /// Ends an engine's whole tree: SIGTERM to its process group and to descendants that left
    /// it, SIGKILL to whatever remains after the grace period, then asks NVML whether any of
    /// them still holds GPU memory. A TP engine's workers hold GPU memory (and may hold the
    /// port) after the leader exits, and a worker stuck in a CUDA call ignores SIGTERM.
    async fn end_tree(&self, record: &EngineRecord, leader_gone: bool) -> StopOutcome {
        let processes = self.tree(record);
        let signal_all = |sig: Signal| {
            let _ = killpg(Pid::from_raw(record.pid), sig);
            for p in &processes {
                // Only the same process (start time), never a pid reused since.
                if procfs::stat(p.pid).is_some_and(|s| s.start_ticks == p.start_ticks) {
                    let _ = nix::sys::signal::kill(Pid::from_raw(p.pid), sig);
                }
            }
        };
        let remaining = || {
            procfs::alive(record.pid)
                || !procfs::group_members(record.pid).is_empty()
                || processes
                    .iter()
                    .any(|p| procfs::stat(p.pid).is_some_and(|s| s.start_ticks == p.start_ticks && s.state != 'Z'))
        };
        signal_all(Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(self.data.config.stop_grace_s);
        let mut killed = false;
        while remaining() {
            if Instant::now() > deadline {
                signal_all(Signal::SIGKILL);
                killed = true;
                // SIGKILL cannot be ignored; the kernel still needs a moment to release them.
                let hard = Instant::now() + Duration::from_secs(10);
                while remaining() && Instant::now() < hard {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = std::fs::remove_file(self.tree_path(&record.profile));
        let gpu = gpu_release(&crate::gpu::read().await, record.pid, &processes);
        StopOutcome::Stopped {
            pid: record.pid,
            killed,
            leader_gone,
            processes,
            gpu,
        }
    }

    fn clear(&self, name: &str) {
        for p in [
            self.record_path(name),
            self.failure_path(name),
            self.version_path(name),
            self.ready_path(name),
            self.dir(name).join("engine.pid"),
        ] {
            let _ = std::fs::remove_file(p);
        }
    }

    /// `/health` status code, or `None` when nothing answers.
    pub async fn probe_health(&self, host: &str, port: u16) -> Option<u16> {
        crate::engine::Engine::at(&crate::engine::base_url(host, port))
            .health(crate::engine::HEALTH_TIMEOUT)
            .await
            .ok()
    }

    /// The status of every stored profile.
    pub async fn statuses(&self) -> Vec<EngineStatus> {
        let profiles = match self.store.list().await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "listing profiles");
                return Vec::new();
            }
        };
        // In a fleet sharing one database the profiles are the fleet's, the engines each
        // host's own: a host lists the profiles it has run (their state directory exists
        // here) or starts by itself, not every other host's as "stopped".
        let shared = crate::db::Backend::of(&self.store.pool()) == crate::db::Backend::Postgres;
        let mine =
            |name: &str| !shared || self.data.config.autostart.iter().any(|a| a == name) || self.dir(name).exists();
        futures::future::join_all(
            profiles
                .iter()
                .filter(|p| mine(&p.profile.name))
                .map(|p| self.status(&p.profile)),
        )
        .await
    }

    /// The state of one profile, from its state files and a health probe.
    pub async fn status(&self, profile: &Profile) -> EngineStatus {
        let install = self.data.engine(&profile.engine);
        let kind = install.map(|i| i.kind).unwrap_or(EngineKind::Vllm);
        let name = profile.name.as_str();
        let mut status = EngineStatus {
            engine: profile.engine.clone(),
            simulated: install.is_some_and(|i| i.simulator),
            demo_traffic: self.data.config.demo_load && install.is_some_and(|i| i.simulator),
            host: profile.host.clone(),
            port: profile.port.unwrap_or(kind.default_port()),
            model_name: profile.model_name().to_string(),
            ..EngineStatus::blank(name, kind, EngineState::Stopped)
        };
        if install.is_none() {
            status.note = Some(format!(
                "engine installation {} is not in {}",
                profile.engine,
                crate::config::CONFIG_FILE
            ));
        }
        match self.running(name) {
            Some(Running::Alive(record)) => {
                // A container's log reaches engine.log through its follower: kept running.
                self.ensure_follower(name, &record);
                self.remember_tree(&record);
                status.pid = Some(record.pid);
                status.port = record.port;
                status.uptime_s = procfs::process_uptime_s(record.start_ticks);
                status.health_code = self.probe_health(&record.host, record.port).await;
                let mismatch = match &record.container {
                    Some(c) => self.container_mismatch(c).await,
                    None => None,
                };
                if let Some(why) = mismatch {
                    // Not the engine that was started: never called healthy, whatever answers.
                    status.state = EngineState::Unhealthy;
                    status.note = Some(why);
                    return status;
                }
                let healthy = status.health_code == Some(200);
                let was_ready = self.ready_path(name).exists();
                status.state = if healthy {
                    if !was_ready {
                        let _ = std::fs::write(self.ready_path(name), b"");
                    }
                    if !self.version_path(name).exists() {
                        // An engine adopted from an earlier console: ask once, off this path.
                        let _ = std::fs::write(self.version_path(name), b"");
                        let (control, name, record) = (self.clone(), name.to_string(), record.clone());
                        tokio::spawn(async move { control.remember_version(&name, &record).await });
                    }
                    EngineState::Healthy
                } else if was_ready {
                    status.note = Some(match status.health_code {
                        Some(code) => format!("/health answered {code}"),
                        None => format!("/health got no answer in {} s", crate::engine::HEALTH_TIMEOUT.as_secs()),
                    });
                    EngineState::Unhealthy
                } else {
                    status.phase = Some(self.phase_from_log(name));
                    status.stall = self.startup_state(name).and_then(|s| s.stall);
                    EngineState::Starting
                };
            }
            Some(Running::Orphaned(record, survivors)) => {
                status.state = EngineState::Dead;
                status.pid = Some(record.pid);
                status.failure = diagnose_log(&self.log_path(name)).0;
                status.note = Some(format!(
                    "process {} is gone, but {} of its processes still run and hold their memory ({}); `roofline stop` ends them",
                    record.pid,
                    survivors.len(),
                    describe_processes(&survivors)
                ));
            }
            Some(Running::Gone(record)) => {
                status.state = EngineState::Dead;
                status.failure = diagnose_log(&self.log_path(name)).0;
                status.note = Some(match &record.container {
                    Some(c) => format!(
                        "container {} exited ({}); it was not stopped by Roofline",
                        container::name(name),
                        self.container_exit(name, c).await
                    ),
                    None => format!("process {} is gone; it was not stopped by Roofline", record.pid),
                });
            }
            None => {
                if let Ok(text) = std::fs::read_to_string(self.failure_path(name)) {
                    if let Ok(report) = serde_json::from_str::<FailureReport>(&text) {
                        status.state = EngineState::Dead;
                        status.failure = report.failure;
                        status.note = Some(format!(
                            "the last start exited before it became healthy (exit: {})",
                            report.exit
                        ));
                    }
                }
            }
        }
        status
    }

    fn phase_from_log(&self, name: &str) -> StartupPhase {
        logs::tail(&self.log_path(name), 400)
            .unwrap_or_default()
            .iter()
            .filter_map(|l| StartupPhase::from_log_line(l))
            .max()
            .unwrap_or(StartupPhase::Launched)
    }
}

/// What NVML says of a stopped engine's processes: none of them (nor any process still in
/// its group) may be listed on a GPU.
fn gpu_release(state: &app::domain::gpu::GpuState, pgid: i32, processes: &[Survivor]) -> GpuRelease {
    match state {
        app::domain::gpu::GpuState::NoDriver { reason } => GpuRelease::Unchecked { reason: reason.clone() },
        app::domain::gpu::GpuState::Available { gpus, .. } => {
            let mut held: Vec<(i32, Option<u64>)> = gpus
                .iter()
                .flat_map(|g| g.processes.iter())
                .filter(|p| processes.iter().any(|s| s.pid == p.pid) || crate::gpu::process_group(p.pid) == Some(pgid))
                .map(|p| (p.pid, p.used_bytes))
                .collect();
            held.sort();
            held.dedup();
            if held.is_empty() {
                GpuRelease::Released
            } else {
                GpuRelease::StillHeld { pids: held }
            }
        }
    }
}

/// The saved diagnosis of a failed start.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FailureReport {
    pub failure: Option<FailureMatch>,
    pub last_lines: Vec<String>,
    pub exit: String,
    pub at: u64,
}

/// Launches the argv in its own process group with the air-gap environment, output to the
/// log, in the engine's own working directory (`work`). A thread reaps the child and writes
/// its exit status to `exit_path`, so a crash is never a zombie and its exit code is known.
/// Never a shell.
fn spawn(
    argv: &[String],
    profile: &Profile,
    log: std::fs::File,
    exit_path: PathBuf,
    work: &Path,
) -> Result<EngineRecord, ControlError> {
    use std::os::unix::process::CommandExt;
    let program = argv.first().cloned().unwrap_or_default();
    let mut cmd = Command::new(&program);
    cmd.args(&argv[1..])
        .envs(profile.env.iter())
        .envs(AIR_GAP_ENV.iter().copied())
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log))
        .process_group(0);
    let _ = std::fs::remove_file(&exit_path);
    let mut child = cmd.spawn().map_err(|source| ControlError::Spawn {
        program: program.clone(),
        source,
    })?;
    let pid = child.id() as i32;
    let start_ticks = procfs::stat(pid).map(|s| s.start_ticks).unwrap_or(0);
    std::thread::spawn(move || {
        if let Ok(status) = child.wait() {
            let _ = std::fs::write(exit_path, describe_exit(status));
        }
    });
    Ok(EngineRecord {
        profile: profile.name.clone(),
        pid,
        start_ticks,
        argv: argv.to_vec(),
        host: String::new(),
        port: 0,
        started_at: now_unix(),
        container: None,
    })
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "unknown".into(),
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}
