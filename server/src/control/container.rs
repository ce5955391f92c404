//! Engines in containers (the official vLLM and SGLang images): a container installation
//! runs its engine through the container CLI (podman or docker), always as an argv, never a
//! shell.
//!
//! The container is detached (`run -d`), so it belongs to the container runtime, not to the
//! console: like a process engine it outlives console restarts. Its init process's host pid
//! and start time go into the same state record a process engine has, so "is it still the
//! one we started" stays one cheap `/proc` read; everything else (start, stop, exit code,
//! image digest, logs) goes through the CLI. The log reaches `engine.log` through a
//! `logs --follow` child in its own process group, so the startup phases, the failure rows
//! and the investigator read a container's log exactly as a process's.
//!
//! What a profile can reach here is what it reaches for a process: the engine's own argv
//! after the image (the CLI stops reading its options at the image, so nothing a profile
//! writes becomes a container option) and its `ENV_*` (passed as `-e NAME=VALUE`). The image,
//! GPUs, mounts, network and extra run options are host configuration.

use crate::config::{ContainerNetwork, ContainerRuntime, EngineInstall};
use app::domain::profile::{Profile, AIR_GAP_ENV};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Label on every container the console starts: the profile it runs.
pub const LABEL_PROFILE: &str = "io.roofline.profile";
/// Label naming the installation (host configuration) it was started from.
pub const LABEL_INSTALL: &str = "io.roofline.installation";
/// Label naming the console (its data directory's identity) that started it: a container
/// someone else started with the profile's name and label is not ours to adopt.
pub const LABEL_CONSOLE: &str = "io.roofline.console";

/// The container name of a profile's engine (profile names are `[a-z0-9_-]`).
pub fn name(profile: &str) -> String {
    format!("roofline-{profile}")
}

/// What the state record keeps about a containerised engine, so stop and status work from
/// the record alone (even after the installation left host configuration).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContainerRecord {
    /// The container's full id, as `run -d` printed it.
    pub id: String,
    /// The container CLI and its global arguments, from host configuration at the start.
    pub cli: Vec<String>,
    /// The image as configured (`name@sha256:…`).
    pub image: String,
    /// The manifest digest the runtime resolved the image to, when it says.
    #[serde(default)]
    pub image_digest: Option<String>,
    /// The `logs --follow` child that copies the container's output into `engine.log`.
    #[serde(default)]
    pub follower_pid: i32,
    #[serde(default)]
    pub follower_ticks: u64,
}

/// A container installation, resolved from host configuration.
#[derive(Clone, Debug)]
pub struct Container<'a> {
    pub install: &'a EngineInstall,
    pub runtime: ContainerRuntime,
    pub image: &'a str,
}

impl<'a> Container<'a> {
    /// The installation as a container, when it is one.
    pub fn of(install: &'a EngineInstall) -> Option<Self> {
        Some(Self {
            install,
            runtime: install.runtime?,
            image: install.image.as_deref()?,
        })
    }

    /// The container CLI with its global arguments.
    pub fn cli(&self) -> Vec<String> {
        if self.install.command.is_empty() {
            vec![self.runtime.as_str().to_string()]
        } else {
            self.install.command.clone()
        }
    }

    /// Whether the engine binds inside the container's own network (then it must listen on
    /// every address there, and the port is published on the profile's address).
    pub fn publishes_ports(&self) -> bool {
        self.install.network == Some(ContainerNetwork::Ports)
    }

    /// The GPU options: CDI devices under podman, `--gpus` under docker.
    fn gpu_args(&self) -> Vec<String> {
        let text = self
            .install
            .gpus
            .clone()
            .unwrap_or_else(|| if self.install.simulator { "none" } else { "all" }.into());
        let Ok(Some(devices)) = crate::config::parse_gpus(&text) else {
            return Vec::new();
        };
        match self.runtime {
            ContainerRuntime::Podman if devices.is_empty() => {
                vec!["--device".into(), "nvidia.com/gpu=all".into()]
            }
            ContainerRuntime::Podman => devices
                .iter()
                .flat_map(|d| ["--device".to_string(), format!("nvidia.com/gpu={d}")])
                .collect(),
            ContainerRuntime::Docker if devices.is_empty() => vec!["--gpus".into(), "all".into()],
            // docker reads the value as CSV: the device list is one quoted field.
            ContainerRuntime::Docker => vec![
                "--gpus".into(),
                format!(
                    "\"device={}\"",
                    devices.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
                ),
            ],
        }
    }

    /// `run -d` for a profile's engine: `engine_argv` is the engine's own command line inside
    /// the image (entrypoint first). The models root is mounted read-only at the same path,
    /// so every path a profile names means the same inside; nothing is pulled.
    pub fn run_argv(
        &self,
        profile: &Profile,
        console: &str,
        install_name: &str,
        engine_argv: &[String],
        models_root: &Path,
        port: u16,
    ) -> Result<Vec<String>, ContainerError> {
        let root = models_root.to_string_lossy();
        // `--mount` is comma-separated key=value: a root with a comma would add options.
        if root.contains(',') || root.contains('=') {
            return Err(ContainerError::MountRoot(root.into_owned()));
        }
        let Some((program, args)) = engine_argv.split_first() else {
            return Err(ContainerError::EmptyCommand);
        };
        let mut argv = self.cli();
        argv.extend(
            [
                "run",
                "--detach",
                "--pull",
                "never",
                "--name",
                &name(&profile.name),
                "--label",
                &format!("{LABEL_PROFILE}={}", profile.name),
                "--label",
                &format!("{LABEL_INSTALL}={install_name}"),
                "--label",
                &format!("{LABEL_CONSOLE}={console}"),
                "--mount",
                &format!("type=bind,source={root},target={root},readonly"),
                "--ipc",
                "host",
            ]
            .map(String::from),
        );
        if self.publishes_ports() {
            let host = crate::engine::reachable_host(&profile.host);
            let host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.to_string()
            };
            argv.extend(["--publish".into(), format!("{host}:{port}:{port}")]);
        } else {
            argv.extend(["--network".into(), "host".into()]);
        }
        argv.extend(self.gpu_args());
        for (k, v) in AIR_GAP_ENV {
            argv.extend(["--env".into(), format!("{k}={v}")]);
        }
        for (k, v) in &profile.env {
            argv.extend(["--env".into(), format!("{k}={v}")]);
        }
        argv.extend(self.install.run_args.iter().cloned());
        argv.extend(["--entrypoint".into(), program.clone(), self.image.to_string()]);
        argv.extend(args.iter().cloned());
        Ok(argv)
    }

    /// A one-off run of a command inside the image (help, version, environment report):
    /// removed when it ends, no network, the given environment; GPUs only when asked. It
    /// carries the console's label like an engine container, so one left behind by a killed
    /// console is known as that console's.
    pub fn oneshot_argv(
        &self,
        command: &[String],
        env: &[(String, String)],
        gpus: bool,
        label: &str,
        console: &str,
    ) -> Vec<String> {
        let mut argv = self.cli();
        argv.extend(
            [
                "run",
                "--rm",
                "--pull",
                "never",
                "--network",
                "none",
                "--name",
                label,
                "--label",
                &format!("{LABEL_INSTALL}=oneshot"),
                "--label",
                &format!("{LABEL_CONSOLE}={console}"),
            ]
            .map(String::from),
        );
        if gpus {
            argv.extend(self.gpu_args());
        }
        for (k, v) in env {
            argv.extend(["--env".into(), format!("{k}={v}")]);
        }
        if let Some((program, args)) = command.split_first() {
            argv.extend(["--entrypoint".into(), program.clone(), self.image.to_string()]);
            argv.extend(args.iter().cloned());
        }
        argv
    }
}

/// `CLI ARGS…` for a recorded container.
pub fn cli_argv(cli: &[String], args: &[&str]) -> Vec<String> {
    let mut argv = cli.to_vec();
    argv.extend(args.iter().map(|s| s.to_string()));
    argv
}

/// What `container inspect` says of one container (podman's and docker's JSON share these).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inspected {
    pub id: String,
    pub running: bool,
    pub status: String,
    pub pid: i32,
    pub exit_code: i64,
    pub oom_killed: bool,
    pub image_digest: Option<String>,
    pub profile_label: Option<String>,
    pub install_label: Option<String>,
    pub console_label: Option<String>,
    /// The command it runs (`Path` and `Args`).
    pub command: Vec<String>,
}

impl Inspected {
    /// How the container ended, in the words the failure report uses for a process.
    pub fn describe_exit(&self) -> String {
        if self.oom_killed {
            format!("code {} (the container was OOM-killed)", self.exit_code)
        } else {
            format!("code {}", self.exit_code)
        }
    }
}

/// Why a container step failed, as the operator reads it after "profile P: container: ".
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// `--mount` is comma-separated key=value: a root with either would add mount options.
    #[error("the models root {0} contains `,` or `=`, which a container mount cannot name")]
    MountRoot(String),
    #[error("the engine's command line is empty")]
    EmptyCommand,
    /// `container inspect` printed something other than one container's JSON.
    #[error("inspect output {0}")]
    Inspect(String),
    #[error("the container CLI printed no container id ({0:?})")]
    NoId(String),
    /// The CLI ran and failed (or printed too much, or could not be started).
    #[error("`{program} {step}`: {source}")]
    Cli {
        program: String,
        step: String,
        source: super::command::CommandError,
    },
    /// The CLI did not finish within its time limit (a hung runtime).
    #[error("`{0}` did not answer")]
    NoAnswer(String),
}

/// Reads `container inspect ID` output: a JSON array with one object. Anything else (an
/// empty array, a wrong shape) is an error naming what was missing.
pub fn parse_inspect(text: &str) -> Result<Inspected, ContainerError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ContainerError::Inspect(format!("is not JSON: {e}")))?;
    let c = v
        .as_array()
        .and_then(|a| a.first())
        .ok_or(ContainerError::Inspect("names no container".into()))?;
    let state = c.get("State").ok_or(ContainerError::Inspect("has no State".into()))?;
    let s = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let pid = state.get("Pid").and_then(|p| p.as_i64()).unwrap_or(0);
    let digest = s(c, "ImageDigest").filter(|d| d.starts_with("sha256:"));
    let label = |name: &str| {
        c.get("Config")
            .and_then(|cfg| cfg.get("Labels"))
            .and_then(|l| l.get(name))
            .and_then(|p| p.as_str())
            .map(str::to_string)
    };
    Ok(Inspected {
        id: s(c, "Id").ok_or(ContainerError::Inspect("has no Id".into()))?,
        running: state.get("Running").and_then(|r| r.as_bool()).unwrap_or(false),
        status: s(state, "Status").unwrap_or_default(),
        pid: i32::try_from(pid).unwrap_or(0),
        exit_code: state.get("ExitCode").and_then(|x| x.as_i64()).unwrap_or(0),
        oom_killed: state.get("OOMKilled").and_then(|x| x.as_bool()).unwrap_or(false),
        image_digest: digest,
        profile_label: label(LABEL_PROFILE),
        install_label: label(LABEL_INSTALL),
        console_label: label(LABEL_CONSOLE),
        command: s(c, "Path")
            .into_iter()
            .chain(
                c.get("Args")
                    .and_then(|a| a.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str().map(str::to_string)),
            )
            .collect(),
    })
}

/// Why a running container under a profile's name is not the console's engine: each way it
/// differs from what the console would have started (empty: it is ours).
pub fn not_ours(
    found: &Inspected,
    pin: Option<&str>,
    profile: &str,
    install_name: &str,
    console: &str,
    expected: &[String],
) -> Vec<String> {
    let mut wrong = Vec::new();
    if pin.is_none() || found.image_digest.as_deref() != pin {
        wrong.push(format!(
            "its image is {}, not the pinned {}",
            found.image_digest.as_deref().unwrap_or("unknown"),
            pin.unwrap_or("(no pin)")
        ));
    }
    for (label, got, want) in [
        (LABEL_PROFILE, &found.profile_label, profile),
        (LABEL_INSTALL, &found.install_label, install_name),
        (LABEL_CONSOLE, &found.console_label, console),
    ] {
        if got.as_deref() != Some(want) {
            wrong.push(format!("its label {label} is {}", got.as_deref().unwrap_or("missing")));
        }
    }
    if found.command != expected {
        wrong.push("it runs another command than this profile renders".into());
    }
    wrong
}

/// The digest part of a pinned image reference.
pub fn pinned_digest(image: &str) -> Option<&str> {
    image.split_once('@').map(|(_, d)| d)
}

/// A container id as `run -d` prints it: the last line, hex only (a warning the CLI prints
/// first is not the id).
pub fn parse_id(stdout: &str) -> Result<String, ContainerError> {
    let id = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    if id.len() >= 12 && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id.to_string())
    } else {
        Err(ContainerError::NoId(id.chars().take(80).collect()))
    }
}

/// How long a container CLI call may take (a stop adds its grace period).
const CLI_TIMEOUT_S: u64 = 60;

/// Runs the container CLI (argv, capped output, time limit), its error naming the step.
async fn cli(argv: &[String]) -> Result<String, ContainerError> {
    let step = argv
        .iter()
        .find(|a| !a.starts_with('-') && a.as_str() != argv[0])
        .cloned();
    match tokio::time::timeout(
        std::time::Duration::from_secs(CLI_TIMEOUT_S + 30),
        super::command::run(argv, super::command::Target::Cli),
    )
    .await
    {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(source)) => Err(ContainerError::Cli {
            program: argv[0].clone(),
            step: step.unwrap_or_default(),
            source,
        }),
        Err(_) => Err(ContainerError::NoAnswer(argv.join(" "))),
    }
}

/// `container inspect` of one container.
pub async fn inspect(cli_args: &[String], id: &str) -> Result<Inspected, ContainerError> {
    parse_inspect(&cli(&cli_argv(cli_args, &["container", "inspect", id])).await?)
}

impl super::EngineControl {
    /// A running container named for the profile, without a live record (its state dir was
    /// lost, or an earlier console's record was removed): adopted, so a second engine is not
    /// started on the same port, but only when it is ours in every way that matters: the
    /// image digest is the installation's pin, its labels name this profile, installation and
    /// console, and it runs the command this profile renders. Anything else is refused naming
    /// the container (anyone who can start containers in this runtime could have started it,
    /// from any image); the caller opens an incident.
    pub(super) async fn adopt_container(
        &self,
        profile: &str,
        install_name: &str,
        c: &Container<'_>,
        expected: &[String],
    ) -> Result<(), super::ControlError> {
        if matches!(self.running(profile), Some(super::Running::Alive(_))) {
            return Ok(());
        }
        let cli_args = c.cli();
        let Ok(found) = inspect(&cli_args, &name(profile)).await else {
            return Ok(());
        };
        if !found.running || found.pid <= 0 {
            return Ok(());
        }
        let console = self.data.console_id();
        let wrong = not_ours(
            &found,
            pinned_digest(c.image),
            profile,
            install_name,
            &console,
            expected,
        );
        if !wrong.is_empty() {
            tracing::error!(profile, container = %found.id, why = %wrong.join("; "), "refusing to adopt a foreign container");
            return Err(super::ControlError::ForeignContainer {
                profile: profile.to_string(),
                container: format!("{} ({})", name(profile), found.id.chars().take(12).collect::<String>()),
                why: wrong.join("; "),
            });
        }
        let Some(stat) = super::procfs::stat(found.pid) else {
            return Ok(());
        };
        let Ok(stored) = self.stored_profile(profile).await else {
            return Ok(());
        };
        let kind = self
            .data
            .engine(&stored.engine)
            .map(|i| i.kind)
            .unwrap_or(app::domain::engine::EngineKind::Vllm);
        let record = super::EngineRecord {
            profile: profile.to_string(),
            pid: found.pid,
            start_ticks: stat.start_ticks,
            argv: Vec::new(),
            host: stored.host.clone(),
            port: stored.port.unwrap_or(kind.default_port()),
            started_at: super::now_unix(),
            container: Some(ContainerRecord {
                id: found.id.clone(),
                cli: cli_args,
                image: c.image.to_string(),
                image_digest: found.image_digest.clone(),
                follower_pid: 0,
                follower_ticks: 0,
            }),
        };
        tracing::warn!(profile, container = %found.id, "adopting a running container of ours that had no record");
        if super::write_atomic(
            &self.record_path(profile),
            &serde_json::to_vec_pretty(&record).unwrap_or_default(),
        )
        .is_ok()
        {
            self.ensure_follower(profile, &record);
        }
        Ok(())
    }

    /// What is wrong with the container a live record names, read again from the runtime on
    /// every status read (not only at start): its image digest must still be the pin the
    /// record was started from, and its id the record's. `None` when all is as recorded or
    /// the runtime cannot say (the pid check stands then).
    pub(super) async fn container_mismatch(&self, c: &ContainerRecord) -> Option<String> {
        let found = inspect(&c.cli, &c.id).await.ok()?;
        let pin = pinned_digest(&c.image);
        if found.id != c.id {
            return Some(format!("the container is {}, not the recorded {}", found.id, c.id));
        }
        if pin.is_some() && found.image_digest.as_deref() != pin {
            return Some(format!(
                "the container runs image {}, not the pinned {}",
                found.image_digest.as_deref().unwrap_or("unknown"),
                pin.unwrap_or_default()
            ));
        }
        None
    }

    /// Starts the profile's container (`launch` is the whole `run -d` argv) and the child
    /// that copies its output into the engine log. The record names the container's init
    /// process on the host; an engine that exited at once is a record with no live pid, which
    /// the serve loop reports as a failed start with the container's log and exit code.
    pub(super) async fn start_container(
        &self,
        profile: &str,
        c: &Container<'_>,
        launch: &[String],
        log: std::fs::File,
    ) -> Result<super::EngineRecord, super::ControlError> {
        let failed = |source: ContainerError| super::ControlError::Container {
            profile: profile.to_string(),
            source,
        };
        let cli_args = c.cli();
        // An exited container of an earlier start keeps the name: removed (its log is in
        // engine.log already). A running one was adopted before we got here.
        let _ = cli(&cli_argv(&cli_args, &["rm", "--force", &name(profile)])).await;
        let _ = std::fs::remove_file(self.dir(profile).join("exit"));
        let id = parse_id(&cli(launch).await.map_err(failed)?).map_err(failed)?;
        let found = inspect(&cli_args, &id).await.map_err(failed)?;
        let start_ticks = super::procfs::stat(found.pid).map(|s| s.start_ticks).unwrap_or(0);
        let mut record = super::EngineRecord {
            profile: profile.to_string(),
            pid: if found.running { found.pid } else { 0 },
            start_ticks,
            argv: launch.to_vec(),
            host: String::new(),
            port: 0,
            started_at: super::now_unix(),
            container: Some(ContainerRecord {
                id,
                cli: cli_args,
                image: c.image.to_string(),
                image_digest: found
                    .image_digest
                    .or_else(|| pinned_digest(c.image).map(str::to_string)),
                follower_pid: 0,
                follower_ticks: 0,
            }),
        };
        if let Some(rec) = record.container.as_mut() {
            if let Some((pid, ticks)) = spawn_follower(rec, log, None) {
                rec.follower_pid = pid;
                rec.follower_ticks = ticks;
            }
        }
        Ok(record)
    }

    /// The follower of a running container, started again if it is gone (killed, or the
    /// host's processes were cleaned up while the container ran on): from the log's last
    /// write on, so what the engine printed meanwhile is not lost.
    pub(super) fn ensure_follower(&self, profile: &str, record: &super::EngineRecord) {
        let Some(c) = &record.container else { return };
        let alive = super::procfs::stat(c.follower_pid)
            .is_some_and(|s| s.start_ticks == c.follower_ticks && s.state != 'Z' && s.state != 'X');
        if alive {
            return;
        }
        let log_path = self.log_path(profile);
        let since = std::fs::metadata(&log_path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs().to_string());
        let Ok(log) = std::fs::OpenOptions::new().create(true).append(true).open(&log_path) else {
            return;
        };
        let mut c = c.clone();
        if let Some((pid, ticks)) = spawn_follower(&c, log, since.as_deref()) {
            c.follower_pid = pid;
            c.follower_ticks = ticks;
            let record = super::EngineRecord {
                container: Some(c),
                ..record.clone()
            };
            let _ = super::write_atomic(
                &self.record_path(profile),
                &serde_json::to_vec_pretty(&record).unwrap_or_default(),
            );
        }
    }

    /// How a container ended (`code N`, with OOM-killed when the runtime says so), from the
    /// exit file once known, else from `inspect` (then written there).
    pub(super) async fn container_exit(&self, profile: &str, c: &ContainerRecord) -> String {
        let path = self.dir(profile).join("exit");
        if let Ok(text) = std::fs::read_to_string(&path) {
            return text.trim().to_string();
        }
        match inspect(&c.cli, &c.id).await {
            Ok(i) if !i.running => {
                let exit = i.describe_exit();
                let _ = std::fs::write(&path, &exit);
                exit
            }
            Ok(_) => "still running".into(),
            Err(e) => format!("unknown ({e})"),
        }
    }

    /// Waits (briefly) for the follower to copy the end of an exited container's output.
    pub(super) async fn drain_follower(&self, c: &ContainerRecord) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while super::procfs::alive(c.follower_pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Stops a container: the CLI's `stop` (the image's stop signal, SIGKILL after the
    /// grace period), then `rm`; if the CLI cannot, its init process is killed directly.
    /// Whether it had to be killed.
    pub(super) async fn stop_container(
        &self,
        profile: &str,
        record: &super::EngineRecord,
        c: &ContainerRecord,
    ) -> bool {
        let grace = self.data.config.stop_grace_s;
        let stop = cli_argv(&c.cli, &["stop", "--time", &grace.to_string(), &c.id]);
        if let Err(e) = cli(&stop).await {
            tracing::warn!(profile, container = %c.id, error = %e, "container stop failed; killing its init process");
            // Never pid 0 or 1: kill(0) would signal the console's own group.
            if record.pid > 1 {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(record.pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        let hard = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while super::procfs::alive(record.pid) && std::time::Instant::now() < hard {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let killed = match inspect(&c.cli, &c.id).await {
            Ok(i) => i.exit_code == 137 || i.oom_killed,
            Err(_) => false,
        };
        self.drain_follower(c).await;
        self.remove_container(profile, c).await;
        killed
    }

    /// Removes an ended container and stops its follower (checked to be ours by its start
    /// time, so a reused pid is never signalled).
    pub(super) async fn remove_container(&self, profile: &str, c: &ContainerRecord) {
        if let Err(e) = cli(&cli_argv(&c.cli, &["rm", "--force", &c.id])).await {
            tracing::warn!(profile, container = %c.id, error = %e, "container not removed");
        }
        let ours = super::procfs::stat(c.follower_pid).is_some_and(|s| s.start_ticks == c.follower_ticks);
        if c.follower_pid > 1 && ours {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(c.follower_pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }
}

/// Starts `CLI logs --follow ID` in its own process group (it outlives the console, as the
/// engine does), writing to the engine log; a thread reaps it. Its pid and start ticks.
fn spawn_follower(c: &ContainerRecord, log: std::fs::File, since: Option<&str>) -> Option<(i32, u64)> {
    use std::os::unix::process::CommandExt;
    let mut args = vec!["logs", "--follow"];
    if let Some(s) = since {
        args.extend(["--since", s]);
    }
    args.push(&c.id);
    let argv = cli_argv(&c.cli, &args);
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::from(log.try_clone().ok()?))
        .stderr(std::process::Stdio::from(log))
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(container = %c.id, error = %e, "the container's log follower did not start");
            return None;
        }
    };
    let pid = i32::try_from(child.id()).ok()?;
    let ticks = super::procfs::stat(pid).map(|s| s.start_ticks).unwrap_or(0);
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Some((pid, ticks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::engine::EngineKind;

    fn install(runtime: ContainerRuntime) -> EngineInstall {
        EngineInstall {
            kind: EngineKind::Vllm,
            command: vec!["podman".into(), "--runtime".into(), "runc".into()],
            simulator: false,
            simulator_version: None,
            allow_flags: vec![],
            runtime: Some(runtime),
            image: Some(format!("vllm/vllm-openai@sha256:{}", "a".repeat(64))),
            gpus: None,
            network: None,
            entrypoint: vec![],
            run_args: vec!["--shm-size".into(), "16g".into()],
        }
    }

    fn profile() -> Profile {
        let (mut p, _) = Profile::from_env(
            "p",
            "ENGINE=img\nMODEL=/models/qwen\nPORT=8001\nENV_CUDA_VISIBLE_DEVICES=0,1\n",
        )
        .expect("profile parses");
        p.extra_args = vec!["--", "--rm"].into_iter().map(String::from).collect();
        p
    }

    #[test]
    fn a_profile_reaches_only_the_engine_argv_and_its_env() {
        let i = install(ContainerRuntime::Podman);
        let c = Container::of(&i).unwrap();
        let p = profile();
        let engine: Vec<String> = ["vllm", "serve", "/models/qwen", "--", "--rm"]
            .map(String::from)
            .to_vec();
        let argv = c
            .run_argv(&p, "c0ffee", "img", &engine, Path::new("/models"), 8001)
            .unwrap();
        let image_at = argv.iter().position(|a| a == c.image).unwrap();
        // Everything a profile wrote comes after the image, where the CLI reads no options.
        assert_eq!(&argv[image_at + 1..], &engine[1..]);
        assert_eq!(&argv[..4], &["podman", "--runtime", "runc", "run"]);
        for want in [
            "--detach",
            "never",
            "roofline-p",
            "io.roofline.profile=p",
            "type=bind,source=/models,target=/models,readonly",
            "host",
            "nvidia.com/gpu=all",
            "HF_HUB_OFFLINE=1",
            "CUDA_VISIBLE_DEVICES=0,1",
            "16g",
        ] {
            assert!(argv[..image_at].iter().any(|a| a == want), "{want} in {argv:?}");
        }
        assert_eq!(argv[image_at - 2..image_at], ["--entrypoint", "vllm"]);
        let bad = c.run_argv(&p, "c0ffee", "img", &engine, Path::new("/models,readonly=false"), 8001);
        assert!(bad.unwrap_err().to_string().contains("models root"));
    }

    #[test]
    fn gpus_and_ports_follow_the_runtime() {
        let mut i = install(ContainerRuntime::Docker);
        i.gpus = Some("0,2".into());
        i.network = Some(ContainerNetwork::Ports);
        i.command = vec![];
        let c = Container::of(&i).unwrap();
        let mut p = profile();
        p.host = "127.0.0.1".into();
        let argv = c
            .run_argv(&p, "c0ffee", "img", &["vllm".into()], Path::new("/models"), 8001)
            .unwrap();
        assert_eq!(argv[0], "docker");
        assert!(argv.windows(2).any(|w| w == ["--gpus", "\"device=0,2\""]), "{argv:?}");
        assert!(
            argv.windows(2).any(|w| w == ["--publish", "127.0.0.1:8001:8001"]),
            "{argv:?}"
        );
        assert!(!argv.iter().any(|a| a == "--network"));
        i.runtime = Some(ContainerRuntime::Podman);
        i.gpus = Some("none".into());
        let c = Container::of(&i).unwrap();
        let argv = c.oneshot_argv(&["vllm".into(), "--version".into()], &[], true, "x", "c0ffee");
        assert!(argv.windows(2).any(|w| w == ["--label", "io.roofline.console=c0ffee"]));
        assert!(!argv.iter().any(|a| a.contains("nvidia.com")), "{argv:?}");
        assert!(argv.windows(2).any(|w| w == ["--network", "none"]));
        assert_eq!(argv.last().map(String::as_str), Some("--version"));
    }

    #[test]
    fn simulator_images_run_the_simulator() {
        let mut i = install(ContainerRuntime::Podman);
        i.simulator = true;
        i.simulator_version = Some("0.34.0+synthetic".into());
        let c = Container::of(&i).unwrap();
        assert_eq!(i.image_entrypoint(), ["roofline", "sim", "vllm@0.34.0+synthetic"]);
        assert!(c.gpu_args().is_empty(), "the simulator needs no GPU unless configured");
        i.kind = EngineKind::Sglang;
        i.simulator = false;
        assert_eq!(i.image_entrypoint()[2], "sglang.launch_server");
    }

    #[test]
    fn inspect_output_is_read_defensively() {
        let text = r#"[{"Id":"abc123","State":{"Status":"exited","Running":false,"Pid":0,"ExitCode":137,"OOMKilled":true},"ImageDigest":"sha256:ff","Config":{"Labels":{"io.roofline.profile":"p"}}}]"#;
        let i = parse_inspect(text).unwrap();
        assert_eq!((i.running, i.exit_code, i.oom_killed), (false, 137, true));
        assert_eq!(i.profile_label.as_deref(), Some("p"));
        assert!(i.describe_exit().contains("OOM"));
        for bad in [
            "",
            "[]",
            "{}",
            "[{}]",
            r#"[{"State":{}}]"#,
            "[1]",
            r#"[{"Id":5,"State":{}}]"#,
        ] {
            assert!(parse_inspect(bad).is_err(), "{bad}");
        }
        // A pid beyond i32 is not taken as one.
        let huge = r#"[{"Id":"a","State":{"Pid":99999999999,"Running":true}}]"#;
        assert_eq!(parse_inspect(huge).unwrap().pid, 0);
    }

    #[test]
    fn container_ids_are_hex_only() {
        let id = "0a2393f9b70e39b19a168c184ace6f13a581775a6d16f88fa708327e5f4517c0";
        assert_eq!(parse_id(&format!("WARN[0000] something\n{id}\n")).unwrap(), id);
        assert!(parse_id("").is_err());
        assert!(parse_id("--rm; rm -rf /").is_err());
    }

    #[test]
    fn only_a_container_with_the_pin_the_labels_and_the_command_is_ours() {
        let cmd: Vec<String> = ["vllm", "serve", "/models/m"].map(String::from).to_vec();
        let ours = Inspected {
            id: "abc".into(),
            running: true,
            status: "running".into(),
            pid: 7,
            exit_code: 0,
            oom_killed: false,
            image_digest: Some("sha256:aa".into()),
            profile_label: Some("p".into()),
            install_label: Some("img".into()),
            console_label: Some("c0ffee".into()),
            command: cmd.clone(),
        };
        assert!(not_ours(&ours, Some("sha256:aa"), "p", "img", "c0ffee", &cmd).is_empty());
        let other_image = Inspected {
            image_digest: Some("sha256:bb".into()),
            ..ours.clone()
        };
        let why = not_ours(&other_image, Some("sha256:aa"), "p", "img", "c0ffee", &cmd);
        assert_eq!(why.len(), 1);
        assert!(why[0].contains("sha256:bb"), "{why:?}");
        let other_console = Inspected {
            console_label: None,
            command: vec!["sh".into()],
            ..ours.clone()
        };
        assert_eq!(
            not_ours(&other_console, Some("sha256:aa"), "p", "img", "c0ffee", &cmd).len(),
            2
        );
        assert!(
            !not_ours(&ours, None, "p", "img", "c0ffee", &cmd).is_empty(),
            "no pin: nothing to match"
        );
    }
}
