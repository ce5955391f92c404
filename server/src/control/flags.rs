//! `roofline flags`: the profile's flags against the installed engine's own `--help`.
//!
//! The help is produced by running the installation (argv, no shell) with a timeout, and is
//! cached per installation and engine version, since `vllm serve --help=all` takes seconds
//! (it imports torch) and only changes with the version.

use super::command::{run, CommandError, Target};
use super::EngineControl;
use crate::config::EngineInstall;
use app::domain::engine::EngineKind;
use app::domain::flagmap::{flags_in, render_argv};
use app::domain::help_flags::{parse_help, BadValue, FlagSet, UnknownFlag};
use serde::{Deserialize, Serialize};

/// Errors of the flag check.
#[derive(Debug, thiserror::Error)]
pub enum FlagsError {
    #[error("{0}")]
    Control(#[from] super::ControlError),
    #[error("running `{command}`: {detail}")]
    Help { command: String, detail: String },
    #[error("no engine installation `{0}` in this host's configuration")]
    NoSuchInstall(String),
    #[error("`{from}` runs {from_kind} and `{to}` runs {to_kind}: moving a profile between engines is a new profile, not an upgrade")]
    OtherEngine {
        from: String,
        from_kind: String,
        to: String,
        to_kind: String,
    },
}

/// The installed engine's flags, as cached.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InstalledFlags {
    pub install: String,
    pub version: String,
    pub flags: FlagSet,
}

/// The result of checking a profile.
#[derive(Clone, Debug, Serialize)]
pub struct FlagReport {
    pub profile: String,
    pub install: String,
    pub version: String,
    pub known: usize,
    pub unknown: Vec<UnknownFlag>,
    /// Values outside the choices the installed engine lists (a parser name it lacks, …).
    pub bad_values: Vec<BadValue>,
}

/// The identity of an executable file (found on PATH when the name has no slash): its path,
/// inode, size and modification time. `None` when it cannot be read.
fn executable_key(program: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = if program.contains('/') {
        std::path::PathBuf::from(program)
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(program))
            .find(|p| p.is_file())?
    };
    let m = std::fs::metadata(&path).ok()?;
    Some(format!(
        "{}:{}:{}:{}.{}",
        path.display(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec()
    ))
}

/// The installed versions of the Python package a `python -m PACKAGE.module` command runs:
/// the names of its `*.dist-info` directories beside the interpreter (a virtual environment's
/// `lib/python3.*/site-packages`, the system's `dist-packages`). An upgrade in place keeps the
/// interpreter file as it was, so [`executable_key`] alone kept the old version's help; pip
/// renames the dist-info. `None` when the command names no module.
fn package_key(argv: &[String]) -> Option<String> {
    let module = argv.iter().position(|a| a == "-m").and_then(|i| argv.get(i + 1))?;
    let package = module.split('.').next()?.to_ascii_lowercase().replace('-', "_");
    let exe = std::path::Path::new(argv.first()?);
    let exe = if exe.is_absolute() {
        exe.to_path_buf()
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(exe))
            .find(|p| p.is_file())?
    };
    // `…/bin/python3` → `…`: the prefix whose `lib` holds the packages (not the symlink's
    // target: a virtual environment's interpreter links to the system one).
    let prefix = exe.parent()?.parent()?;
    let mut found = Vec::new();
    for lib in ["lib", "local/lib", "lib64"] {
        let Ok(pythons) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        for py in pythons
            .flatten()
            .filter(|d| d.file_name().to_string_lossy().starts_with("python3"))
        {
            for packages in ["site-packages", "dist-packages"] {
                let Ok(entries) = std::fs::read_dir(py.path().join(packages)) else {
                    continue;
                };
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().to_ascii_lowercase().replace('-', "_");
                    if name.ends_with(".dist_info") && name.starts_with(&package) {
                        found.push(name);
                    }
                }
            }
        }
    }
    found.sort();
    Some(found.join(","))
}

fn help_args(kind: EngineKind) -> &'static [&'static str] {
    match kind {
        EngineKind::Vllm => &["serve", "--help=all"],
        EngineKind::Sglang => &["--help"],
    }
}

/// Runs a command of an installation: directly, or for a container installation inside its
/// image (`run --rm`, no network, the target's environment passed in; GPUs for the host
/// report only). A run that fails or times out has its container removed by name, since
/// killing the CLI client does not stop a container.
pub(super) async fn run_in(
    install: &EngineInstall,
    argv: &[String],
    target: Target,
    console: &str,
) -> Result<String, CommandError> {
    let Some(c) = super::container::Container::of(install) else {
        return run(argv, target).await;
    };
    let mut env: Vec<(String, String)> = app::domain::profile::AIR_GAP_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if target == Target::Cpu {
        env.push(("VLLM_TARGET_DEVICE".into(), "cpu".into()));
    }
    let label = format!("roofline-oneshot-{:016x}", rand::random::<u64>());
    let wrapped = c.oneshot_argv(argv, &env, target == Target::Host, &label, console);
    let out = run(&wrapped, Target::Cli).await;
    if out.is_err() {
        let rm = super::container::cli_argv(&c.cli(), &["rm", "--force", &label]);
        let _ = run(&rm, Target::Cli).await;
    }
    out
}

/// One engine process at a time asks an installation for its version or help: concurrent
/// flag checks (a burst of editor requests, every preflight at once) each started an engine
/// process that imports torch. The second asker finds the first one's answer in the cache.
static ASKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl EngineControl {
    /// The version an installation reports (`--version` after its command).
    async fn installed_version(&self, install: &EngineInstall) -> Result<String, FlagsError> {
        let mut argv = self.data.command_for(install).map_err(|e| FlagsError::Help {
            command: "roofline".into(),
            detail: e.to_string(),
        })?;
        // Asking a Python engine its version costs seconds (5–20 s for vLLM on a busy host),
        // and every serve's preflight asks. Remembered per executable file: an upgrade through
        // pip or a new roofline binary rewrites the file, and so changes the key.
        // A `python -m` command also by its package's dist-info: pip upgrades the package
        // in place and leaves the interpreter alone.
        let key = (install.runtime.is_none())
            .then(|| executable_key(argv.first()?))
            .flatten()
            .map(|exe| match package_key(&argv) {
                Some(package) => format!("{exe} {} [{package}]", argv[1..].join(" ")),
                None => format!("{exe} {}", argv[1..].join(" ")),
            });
        let remembered = self.data.cache_dir().join("flags").join("versions.json");
        let read = || -> std::collections::BTreeMap<String, String> {
            std::fs::read(&remembered)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default()
        };
        if let Some(v) = key.as_ref().and_then(|k| read().get(k).cloned()) {
            return Ok(v);
        }
        let _asking = ASKING.lock().await;
        let mut known = read();
        if let Some(v) = key.as_ref().and_then(|k| known.get(k)) {
            return Ok(v.clone());
        }
        if install.kind == EngineKind::Vllm || install.simulator {
            argv.push("--version".into());
        } else {
            // SGLang's launcher has no --version; ask the package next to it.
            argv = vec![
                argv[0].clone(),
                "-c".into(),
                "import sglang; print(sglang.__version__)".into(),
            ];
        }
        let out = run_in(install, &argv, Target::Cpu, &self.data.console_id())
            .await
            .map_err(|detail| FlagsError::Help {
                command: argv.join(" "),
                detail: detail.to_string(),
            })?;
        let version = out.lines().last().unwrap_or("unknown").trim().to_string();
        if let Some(k) = key {
            known.insert(k, version.clone());
            if let Some(parent) = remembered.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = super::write_atomic(&remembered, &serde_json::to_vec(&known).unwrap_or_default());
        }
        Ok(version)
    }

    /// The installed engine's flag set, from the cache or by running its help.
    pub async fn installed_flags(
        &self,
        install_name: &str,
        install: &EngineInstall,
    ) -> Result<InstalledFlags, FlagsError> {
        let version = self.installed_version(install).await?;
        let safe_version: String = version
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' })
            .collect();
        let cache = self
            .data
            .cache_dir()
            .join("flags")
            .join(format!("{install_name}-{safe_version}.json"));
        let cached = || {
            std::fs::read_to_string(&cache)
                .ok()
                .and_then(|text| serde_json::from_str::<InstalledFlags>(&text).ok())
        };
        if let Some(c) = cached() {
            return Ok(c);
        }
        let _asking = ASKING.lock().await;
        if let Some(c) = cached() {
            return Ok(c);
        }
        let mut argv = self.data.command_for(install).map_err(|e| FlagsError::Help {
            command: "roofline".into(),
            detail: e.to_string(),
        })?;
        argv.extend(help_args(install.kind).iter().map(|s| s.to_string()));
        let help = run_in(install, &argv, Target::Cpu, &self.data.console_id())
            .await
            .map_err(|detail| FlagsError::Help {
                command: argv.join(" "),
                detail: detail.to_string(),
            })?;
        let flags = parse_help(&help);
        if flags.flags.is_empty() {
            return Err(FlagsError::Help {
                command: argv.join(" "),
                detail: "the help output lists no options".into(),
            });
        }
        let installed = InstalledFlags {
            install: install_name.to_string(),
            version,
            flags,
        };
        if let Some(parent) = cache.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&cache, serde_json::to_vec(&installed).unwrap_or_default());
        Ok(installed)
    }

    /// Checks every flag the profile renders to against the installed engine.
    pub async fn check_flags(&self, profile: &str) -> Result<(FlagReport, InstalledFlags), FlagsError> {
        let stored = self.stored_profile(profile).await?;
        self.check_profile_flags(&stored).await
    }

    /// The same check for a profile that is not stored yet (the editor's).
    pub async fn check_profile_flags(
        &self,
        p: &app::domain::profile::Profile,
    ) -> Result<(FlagReport, InstalledFlags), FlagsError> {
        let install = self
            .data
            .engine(&p.engine)
            .ok_or_else(|| super::ControlError::NoSuchEngine {
                profile: p.name.clone(),
                engine: p.engine.clone(),
                config: crate::config::CONFIG_FILE,
            })?;
        let installed = self.installed_flags(&p.engine, install).await?;
        let argv = render_argv(install.kind, &[], p);
        let used = flags_in(&argv);
        let unknown = installed.flags.unknown(&used);
        let bad_values = installed.flags.bad_values(&argv);
        let report = FlagReport {
            profile: p.name.clone(),
            install: p.engine.clone(),
            version: installed.version.clone(),
            known: used.len() - unknown.len(),
            unknown,
            bad_values,
        };
        Ok((report, installed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upgrade_in_place_of_a_python_module_changes_its_key() {
        let venv = tempfile::tempdir().unwrap();
        let bin = venv.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("python"), b"#!").unwrap();
        let site = venv.path().join("lib/python3.11/site-packages");
        std::fs::create_dir_all(site.join("sglang-0.5.23.dist-info")).unwrap();
        std::fs::create_dir_all(site.join("torch-2.9.0.dist-info")).unwrap();
        let argv: Vec<String> = [
            bin.join("python").display().to_string(),
            "-m".into(),
            "sglang.launch_server".into(),
        ]
        .to_vec();
        let before = package_key(&argv).unwrap();
        assert_eq!(before, "sglang_0.5.23.dist_info");
        std::fs::rename(
            site.join("sglang-0.5.23.dist-info"),
            site.join("sglang-0.5.24.dist-info"),
        )
        .unwrap();
        assert_ne!(
            package_key(&argv).unwrap(),
            before,
            "the interpreter is the same file; the package is not"
        );
        assert_eq!(package_key(&["/usr/bin/vllm".to_string(), "serve".into()]), None);
    }
}
