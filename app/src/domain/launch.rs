//! What a profile may not do: choose what runs or what code is loaded. Which executables run
//! and what they may load is host configuration; a profile (written by anyone with the
//! operator role, reviewed by a person who may miss a word in `EXTRA_ARGS`) only sets the
//! engine's serving knobs. The checks are pure, so the editor shows them as you type; the
//! server applies them with the host's policy on import, on a proposed change and before every
//! start.
//!
//! - `ENV_*`: an allowlist (host config can extend it). `LD_*`, `PATH`, `PYTHON*` and any name
//!   that names a file, directory, library, module, plugin or hook are never allowed.
//! - `EXTRA_ARGS`: no flag the profile already renders (model, name, TP, host, port, …), in any
//!   spelling (`--host=…`, `--tensor_parallel_size`, an abbreviation, `-tp`); no flag that loads
//!   code unless the installation allows it; `--load-format` only formats without pickle.
//! - Every path a profile names (in `EXTRA_ARGS`, in `SPECULATIVE_CONFIG`) lies inside the
//!   models root.

use super::argparse::{self, Resolved};
use super::engine::EngineKind;
use super::flagmap::FLAG_MAP;
use super::help_flags::FlagSet;
use super::profile::{Issue, IssueKind, Profile, Severity, ENV_PREFIX};

/// What the console knows of the installed engine's flags when it checks a profile.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Help {
    /// Not known here (the browser): flags are checked by their spelling against the
    /// console's own lists, and a prefix of a code-loading or rendered flag is refused.
    #[default]
    Static,
    /// The installed engine's own parsed `--help`: every flag resolves as argparse would.
    Installed(FlagSet),
    /// The server could not read it (the detail says why): no `EXTRA_ARGS` flag can be
    /// verified, so each is refused.
    Unavailable(String),
}

/// The host's additions to the defaults (from `roofline.toml`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    /// More environment names a profile may set, each an exact name (host configuration
    /// refuses wildcards). Linker, Python and shell variables stay never allowed.
    pub allow_env: Vec<String>,
    /// Code-loading flags this installation may take from a profile (`--trust-remote-code`).
    pub allow_flags: Vec<String>,
    /// The models root, absolute; paths a profile names must lie inside it. `None` skips the
    /// path check (the browser, which does not know the host's root).
    pub models_root: Option<String>,
    /// The installed engine's flags.
    pub help: Help,
    /// The installation is the console's simulator, which also reads `ROOFLINE_SIM_*`.
    pub simulator: bool,
}

/// Environment names any engine's profile may set: devices, thread counts, allocator and
/// collective-library tuning and log levels. Each by its exact name: a wildcard (`VLLM_*`)
/// let through the engines' development and insecure-deserialisation switches.
const COMMON_ENV: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "TOKENIZERS_PARALLELISM",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_DEBUG",
    "NCCL_P2P_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_SOCKET_IFNAME",
    "NCCL_CUMEM_ENABLE",
    "NCCL_NVLS_ENABLE",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
];

/// vLLM's sizes, counts, timeouts and logging switches (`vllm/envs.py`; a few older releases'
/// names kept for their profiles).
const VLLM_ENV: &[&str] = &[
    "VLLM_LOGGING_LEVEL",
    "VLLM_LOGGING_PREFIX",
    "VLLM_CONFIGURE_LOGGING",
    "VLLM_LOG_STATS_INTERVAL",
    "VLLM_LOG_BATCHSIZE_INTERVAL",
    "VLLM_CPU_KVCACHE_SPACE",
    "VLLM_CPU_OMP_THREADS_BIND",
    "VLLM_CPU_NUM_OF_RESERVED_CPU",
    "VLLM_CPU_MOE_PREPACK",
    "VLLM_ENGINE_READY_TIMEOUT_S",
    "VLLM_ENGINE_ITERATION_TIMEOUT_S",
    "VLLM_RPC_TIMEOUT",
    "VLLM_HTTP_TIMEOUT_KEEP_ALIVE",
    "VLLM_KEEP_ALIVE_ON_ENGINE_DEATH",
    "VLLM_WORKER_MULTIPROC_METHOD",
    "VLLM_ENABLE_V1_MULTIPROCESSING",
    "VLLM_USE_V1",
    "VLLM_ATTENTION_BACKEND",
    "VLLM_USE_DEEP_GEMM",
    "VLLM_USE_FLASHINFER_SAMPLER",
    "VLLM_MARLIN_USE_ATOMIC_ADD",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    "VLLM_MAX_AUDIO_CLIP_FILESIZE_MB",
    "VLLM_DISABLE_COMPILE_CACHE",
    "VLLM_NO_USAGE_STATS",
    "VLLM_DO_NOT_TRACK",
];

/// SGLang's.
const SGLANG_ENV: &[&str] = &[
    "SGLANG_HEALTH_CHECK_TIMEOUT",
    "SGLANG_CPU_OMP_THREADS_BIND",
    "SGLANG_SET_CPU_AFFINITY",
    "SGLANG_ENABLE_JIT_DEEPGEMM",
    "SGL_ENABLE_JIT_DEEPGEMM",
    "SGLANG_DISABLE_REQUEST_LOGGING",
    "SGLANG_LOG_LEVEL",
];

/// What the simulator reads (timings, faults, sizes), for simulated installations only.
pub const SIMULATOR_ENV: &[&str] = &[
    "ROOFLINE_SIM_DRIVER",
    "ROOFLINE_SIM_FAULT",
    "ROOFLINE_SIM_GPU_GIB",
    "ROOFLINE_SIM_IGNORE_SIGTERM",
    "ROOFLINE_SIM_INSTANT",
    "ROOFLINE_SIM_ITL_MS",
    "ROOFLINE_SIM_PREFILL_S",
    "ROOFLINE_SIM_STALL_S",
    "ROOFLINE_SIM_STARTUP_S",
    "ROOFLINE_SIM_TORCH",
    "ROOFLINE_SIM_TTFT_MS",
    "ROOFLINE_SIM_WARMUP_S",
    "ROOFLINE_SIM_WEIGHT_BYTES",
    "ROOFLINE_SIM_WORKERS_IGNORE_SIGTERM",
];

/// Why an environment name is never allowed, however listed (a reason code), or `None`.
fn never_env(name: &str) -> Option<&'static str> {
    if name.starts_with("LD_") || name.starts_with("DYLD_") {
        return Some("linker");
    }
    if name.starts_with("PYTHON") {
        return Some("python");
    }
    if matches!(
        name,
        "PATH" | "SHELL" | "BASH_ENV" | "ENV" | "IFS" | "GCONV_PATH" | "NODE_OPTIONS" | "PERL5OPT"
    ) {
        return Some("runs");
    }
    None
}

/// Whether a host configuration entry of `[launch] allow_env` is acceptable: an exact name,
/// never a wildcard and never a linker, Python or shell variable. The error says why.
pub fn host_env_entry(name: &str) -> Result<(), &'static str> {
    if name.contains('*') || name.contains('?') {
        return Err("wildcard");
    }
    never_env(name).map_or(Ok(()), Err)
}

/// Whether a profile of an engine of `kind` may set this environment variable (without the
/// `ENV_` prefix); the error is a reason code (`linker`, `python`, `runs`, `not-listed`).
pub fn env_allowed(name: &str, kind: EngineKind, policy: &Policy) -> Result<(), &'static str> {
    if let Some(why) = never_env(name) {
        return Err(why);
    }
    let engine = match kind {
        EngineKind::Vllm => VLLM_ENV,
        EngineKind::Sglang => SGLANG_ENV,
    };
    let listed = COMMON_ENV.contains(&name)
        || engine.contains(&name)
        || (policy.simulator && SIMULATOR_ENV.contains(&name))
        || policy.allow_env.iter().any(|p| p == name);
    if listed {
        Ok(())
    } else {
        Err("not-listed")
    }
}

/// Flags that make the engine load code, take its arguments from a file, or accept a
/// configuration object naming a module, class, hook or plugin, by their full names as each
/// engine's `--help` prints them (read from vLLM 0.32/0.33 and SGLang 0.5.23). A flag counts
/// by what it resolves to, so any spelling or prefix of these is the same flag.
pub fn code_flags(kind: EngineKind) -> &'static [&'static str] {
    match kind {
        EngineKind::Vllm => &[
            "--trust-remote-code",
            "--config",
            "--tool-parser-plugin",
            "--reasoning-parser-plugin",
            "--io-processor-plugin",
            "--logits-processors",
            "--middleware",
            "--worker-cls",
            "--worker-extension-cls",
            "--scheduler-cls",
            "--distributed-executor-backend",
            "--model-class-overrides",
            "--hf-overrides",
            "--model-loader-extra-config",
            "--kv-transfer-config",
            "--ec-transfer-config",
            "--ec-manager-config",
            "--compilation-config",
            "--structured-outputs-config",
            "--profiler-config",
            "--log-config-file",
            "--additional-config",
            "--json-arg",
        ],
        EngineKind::Sglang => &[
            "--trust-remote-code",
            "--config",
            "--enable-custom-logit-processor",
            "--custom-weight-loader",
            "--forward-hooks",
            "--model-loader-extra-config",
            "--json-model-override-args",
            "--hicache-storage-backend-extra-config",
            "--unified-cache-external-linker-config",
            "--model-config-parser",
            "--radix-cache-backend",
        ],
    }
}

/// Flags whose value is a load format: only [`SAFE_LOAD_FORMATS`].
const LOAD_FORMAT_FLAGS: &[&str] = &["--load-format", "--speculative-draft-load-format"];

/// `--load-format` values that never unpickle.
const SAFE_LOAD_FORMATS: &[&str] = &["auto", "safetensors", "dummy", "fastsafetensors"];

/// Short spellings of rendered flags.
fn alias(kind: EngineKind, flag: &str) -> Option<&'static str> {
    match (kind, flag) {
        (EngineKind::Vllm, "-tp") => Some("--tensor-parallel-size"),
        (EngineKind::Vllm, "-q") => Some("--quantization"),
        (EngineKind::Vllm, "--model") => Some("--model"),
        (EngineKind::Sglang, "--model") => Some("--model-path"),
        (EngineKind::Sglang, "--tp") => Some("--tp-size"),
        (EngineKind::Sglang, "--tensor-parallel-size") => Some("--tp-size"),
        _ => None,
    }
}

/// The flags a profile's own fields render for this engine (whatever the profile sets now:
/// a flag for a field left unset is still the field's, so it cannot come in by `EXTRA_ARGS`).
fn rendered_flags(kind: EngineKind) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = FLAG_MAP
        .iter()
        .filter_map(|row| Some((row.flag(kind)?, row.key.unwrap_or("the console"))))
        .collect();
    match kind {
        EngineKind::Vllm => out.push(("--model", "MODEL")),
        EngineKind::Sglang => out.extend([
            ("--speculative-algorithm", "SPECULATIVE_CONFIG"),
            ("--speculative-draft-model-path", "SPECULATIVE_CONFIG"),
            ("--speculative-num-steps", "SPECULATIVE_CONFIG"),
            ("--speculative-eagle-topk", "SPECULATIVE_CONFIG"),
            ("--speculative-num-draft-tokens", "SPECULATIVE_CONFIG"),
        ]),
    }
    out
}

/// Whether a value names a filesystem path.
fn looks_like_path(v: &str) -> bool {
    v.starts_with('/') || v.starts_with("./") || v.starts_with("../") || v.starts_with('~') || v.contains("/..")
}

/// Whether `path` is absolute, has no `..` and lies inside `root`.
pub fn inside_root(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    path.starts_with('/')
        && !path.split('/').any(|c| c == "..")
        && (path == root || path.starts_with(&format!("{root}/")))
}

fn issue(field: &str, kind: IssueKind) -> Issue {
    Issue {
        field: field.to_string(),
        line: None,
        severity: Severity::Error,
        kind,
    }
}

/// Every path-looking string leaf of a JSON value.
fn json_paths(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) if looks_like_path(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| json_paths(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| json_paths(x, out)),
        _ => {}
    }
}

/// A flag word of `EXTRA_ARGS` as the engine will read it.
struct Reading {
    /// Every spelling of the flag it resolves to (aliases, the `--no-` form).
    names: Vec<String>,
    /// The name the console reports (the first long spelling).
    canonical: String,
    /// The spelling argparse matched (`--no-trust-remote-code` turns a switch off).
    matched: String,
    /// A value is written into the word itself.
    attached: bool,
    /// How many following words it takes as values: `None` when the help is not known here
    /// (then the next word is its value if it is not an option).
    takes: Option<Takes>,
}

#[derive(Clone, Copy, PartialEq)]
enum Takes {
    Nothing,
    One,
    Many,
}

/// Why a flag word cannot be read as one flag: a reason code and what to name.
type Unreadable = (&'static str, String);

/// Reads a flag word as the installed engine will (or, without its help, by spelling).
fn read_flag(kind: EngineKind, word: &str, help: &Help, rendered: &[(&str, &str)]) -> Result<Reading, Unreadable> {
    match help {
        Help::Unavailable(detail) => Err(("unverifiable", detail.clone())),
        Help::Installed(set) => read_installed(kind, word, set),
        Help::Static => {
            let (name, attached) = argparse::engine_spelling(kind, word).ok_or(("unknown", String::new()))?;
            let name = alias(kind, &name).map(str::to_string).unwrap_or(name);
            // A prefix of a flag that loads code or that a field renders is that flag to argparse.
            let body = name.trim_start_matches('-');
            if name.starts_with("--") && !body.is_empty() {
                let known = code_flags(kind).iter().copied().chain(rendered.iter().map(|(f, _)| *f));
                if let Some(full) = known.into_iter().find(|f| f.len() > name.len() && f.starts_with(&name)) {
                    return Err(("abbreviation", full.to_string()));
                }
            }
            Ok(Reading {
                names: vec![name.clone()],
                canonical: name.clone(),
                matched: name,
                attached,
                takes: None,
            })
        }
    }
}

fn read_installed(kind: EngineKind, word: &str, set: &FlagSet) -> Result<Reading, Unreadable> {
    match argparse::resolve(kind, word, set) {
        Resolved::Flag {
            flag,
            matched,
            attached,
        } => Ok(Reading {
            names: flag.names.clone(),
            canonical: flag.canonical().to_string(),
            matched,
            attached,
            takes: Some(if !flag.takes_value() {
                Takes::Nothing
            } else if flag.takes_many() {
                Takes::Many
            } else {
                Takes::One
            }),
        }),
        Resolved::Shortened { full } => Err(("abbreviation", full)),
        Resolved::Ambiguous { candidates } => Err(("ambiguous", candidates.join(", "))),
        Resolved::Number => Err(("unknown", String::new())),
        Resolved::Unknown => {
            let name = argparse::engine_spelling(kind, word)
                .map(|(n, _)| n)
                .unwrap_or_else(|| word.to_string());
            let suggestion = super::profile::closest(&name, set.long_names()).unwrap_or("—");
            Err(("unknown", suggestion.to_string()))
        }
    }
}

/// The value written into a flag word (`--a=b`, `-qfp8`, `-O3`).
fn attached_value(word: &str) -> Option<String> {
    if let Some((_, v)) = word.split_once('=') {
        return Some(v.to_string());
    }
    (!word.starts_with("--")).then(|| word.chars().skip(2).collect())
}

/// Everything the policy refuses in a profile for an engine of `kind`, each naming its field.
pub fn check(profile: &Profile, kind: EngineKind, policy: &Policy) -> Vec<Issue> {
    let mut out = Vec::new();
    for name in profile.env.keys() {
        if let Err(why) = env_allowed(name, kind, policy) {
            out.push(issue(
                &format!("{ENV_PREFIX}{name}"),
                IssueKind::EnvNotAllowed {
                    value: name.clone(),
                    reason: why.to_string(),
                },
            ));
        }
    }
    let rendered = rendered_flags(kind);
    let args = &profile.extra_args;
    let outside_root = |v: &str| {
        policy
            .models_root
            .as_deref()
            .is_some_and(|root| looks_like_path(v) && !inside_root(v, root))
    };
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        if argparse::is_value(word) {
            // A stray positional (the engine refuses it); a path in it still counts.
            let v = word.rsplit('=').next().unwrap_or(word);
            if outside_root(v) {
                out.push(issue(
                    "EXTRA_ARGS",
                    IssueKind::PathOutsideModels { value: v.to_string() },
                ));
            }
            continue;
        }
        let reading = read_flag(kind, word, &policy.help, &rendered);
        // The words the flag takes as values, as argparse would hand them to it.
        let mut values: Vec<String> = Vec::new();
        if let Ok(r) = &reading {
            if r.attached {
                values.extend(attached_value(word));
            } else {
                let take = match r.takes {
                    Some(Takes::Nothing) => 0,
                    Some(Takes::Many) => usize::MAX,
                    Some(Takes::One) | None => 1,
                };
                while values.len() < take && args.get(i).is_some_and(|v| argparse::is_value(v)) {
                    values.push(args[i].clone());
                    i += 1;
                }
            }
        }
        // As written, with its value: what the operator looks for in the file.
        let shown = if word.contains('=') || values.is_empty() {
            word.clone()
        } else {
            format!("{word} {}", values.join(" "))
        };
        let refuse = |reason: &str, flag: String| {
            issue(
                "EXTRA_ARGS",
                IssueKind::FlagNotAllowed {
                    value: shown.clone(),
                    reason: reason.into(),
                    flag,
                },
            )
        };
        let r = match reading {
            Ok(r) => r,
            Err((reason, flag)) => {
                out.push(refuse(reason, flag));
                continue;
            }
        };
        if let Some((flag, field)) = rendered.iter().find(|(f, _)| r.names.iter().any(|n| n == f)) {
            out.push(issue(
                "EXTRA_ARGS",
                IssueKind::FlagRepeatsField {
                    value: shown,
                    flag: (*flag).to_string(),
                    field: (*field).to_string(),
                },
            ));
            continue;
        }
        let loads_code =
            r.names.iter().any(|n| code_flags(kind).contains(&n.as_str())) && !r.matched.starts_with("--no-");
        let allowed = policy.allow_flags.iter().any(|a| r.names.contains(a));
        if loads_code && !allowed {
            out.push(refuse("code", r.canonical.clone()));
            continue;
        }
        if LOAD_FORMAT_FLAGS.contains(&r.canonical.as_str()) {
            for v in values.iter().filter(|v| !SAFE_LOAD_FORMATS.contains(&v.as_str())) {
                out.push(issue(
                    "EXTRA_ARGS",
                    IssueKind::FlagNotAllowed {
                        value: format!("{} {v}", r.canonical),
                        reason: "load-format".into(),
                        flag: SAFE_LOAD_FORMATS.join(", "),
                    },
                ));
            }
        }
        // `name=/path` (LoRA modules) and plain paths alike.
        for part in values
            .iter()
            .flat_map(|v| v.split(','))
            .map(|p| p.rsplit('=').next().unwrap_or(p))
        {
            if outside_root(part) {
                out.push(issue(
                    "EXTRA_ARGS",
                    IssueKind::PathOutsideModels {
                        value: part.to_string(),
                    },
                ));
            }
        }
    }
    if let (Some(root), Some(spec)) = (&policy.models_root, &profile.speculative_config) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(spec) {
            let mut paths = Vec::new();
            json_paths(&v, &mut paths);
            if let Some(model) = v.get("model").and_then(|m| m.as_str()) {
                if model.contains('/') && !paths.iter().any(|p| p == model) {
                    paths.push(model.to_string());
                }
            }
            for p in paths {
                if !inside_root(&p, root) {
                    out.push(issue("SPECULATIVE_CONFIG", IssueKind::PathOutsideModels { value: p }));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(extra: &str) -> Profile {
        let text = format!("ENGINE=e\nMODEL=/models/m\nHOST=127.0.0.1\n{extra}");
        Profile::from_env("p", &text).unwrap().0
    }

    fn installed(kind: EngineKind) -> FlagSet {
        crate::domain::help_flags::captured(kind).clone()
    }

    fn policy(kind: EngineKind) -> Policy {
        Policy {
            models_root: Some("/models".into()),
            help: Help::Installed(installed(kind)),
            ..Default::default()
        }
    }

    fn codes_with(extra: &str, kind: EngineKind, policy: &Policy) -> Vec<(String, String)> {
        check(&profile(extra), kind, policy)
            .into_iter()
            .map(|i| (i.field, i.kind.code().to_string()))
            .collect()
    }

    fn codes(extra: &str, kind: EngineKind) -> Vec<(String, String)> {
        codes_with(extra, kind, &policy(kind))
    }

    fn reasons(extra: &str, kind: EngineKind) -> Vec<(String, String)> {
        check(&profile(extra), kind, &policy(kind))
            .into_iter()
            .filter_map(|i| match i.kind {
                IssueKind::FlagNotAllowed { reason, flag, .. } => Some((reason, flag)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_measured_attack_is_refused_field_by_field() {
        for help in [Help::Static, Help::Installed(installed(EngineKind::Vllm))] {
            let p = Policy {
                help,
                ..policy(EngineKind::Vllm)
            };
            let got = codes_with(
                "ENV_LD_PRELOAD=/tmp/x.so\nENV_PATH=/tmp\nEXTRA_ARGS='--tool-parser-plugin /tmp/p.py --trust-remote-code --host 0.0.0.0'\n",
                EngineKind::Vllm,
                &p,
            );
            for want in [
                ("ENV_LD_PRELOAD", "env-not-allowed"),
                ("ENV_PATH", "env-not-allowed"),
                ("EXTRA_ARGS", "flag-not-allowed"),
                ("EXTRA_ARGS", "flag-repeats-field"),
            ] {
                assert!(
                    got.contains(&(want.0.to_string(), want.1.to_string())),
                    "{want:?} in {got:?}"
                );
            }
            assert_eq!(
                got.iter().filter(|(_, c)| c == "flag-not-allowed").count(),
                2,
                "{got:?}"
            );
        }
    }

    #[test]
    fn every_spelling_of_a_rendered_flag_is_a_repeat() {
        for extra in [
            "--host=0.0.0.0",
            "--port 9",
            "--tensor_parallel_size 8",
            "-tp 8",
            "--model /models/other",
            "--served-model-name x",
        ] {
            let got = codes(&format!("EXTRA_ARGS='{extra}'\n"), EngineKind::Vllm);
            assert!(got.iter().any(|(_, c)| c == "flag-repeats-field"), "{extra}: {got:?}");
        }
        for extra in ["--model /models/x", "--tp-size 4", "--mem-fraction-static 0.99"] {
            let got = codes(&format!("EXTRA_ARGS='{extra}'\n"), EngineKind::Sglang);
            assert!(
                got.iter().any(|(_, c)| c == "flag-repeats-field"),
                "sglang {extra}: {got:?}"
            );
        }
        // Not the engine's spelling (argparse is case-sensitive) or a prefix of it: refused.
        for extra in ["--HOST 0.0.0.0", "--ho 0.0.0.0", "--tensor-par 2"] {
            let got = codes(&format!("EXTRA_ARGS='{extra}'\n"), EngineKind::Vllm);
            assert!(got.iter().any(|(_, c)| c == "flag-not-allowed"), "{extra}: {got:?}");
        }
    }

    #[test]
    fn code_loading_is_decided_on_the_flag_a_word_resolves_to() {
        for (kind, flag) in [
            (EngineKind::Vllm, "--trust-remote-code"),
            (EngineKind::Vllm, "--trust_remote_code"),
            (EngineKind::Vllm, "--trust-remote"),
            (EngineKind::Vllm, "--trust-r"),
            (EngineKind::Vllm, "--worker-extension-cls a.B"),
            (EngineKind::Vllm, "--worker-ext a.B"),
            (EngineKind::Vllm, "--logits-processors a.b"),
            (EngineKind::Vllm, "--logits-proc a.b"),
            (EngineKind::Vllm, "--middleware m"),
            (EngineKind::Vllm, "--config /models/args.yaml"),
            (EngineKind::Vllm, "--kv-transfer-config {}"),
            (EngineKind::Vllm, "--kv-transfer-config.kv_connector_module_path=x"),
            (EngineKind::Vllm, "-cc.backend=my.mod.fn"),
            (EngineKind::Vllm, "--scheduler-cls a.B"),
            (EngineKind::Vllm, "--load-format pt"),
            (EngineKind::Vllm, "--load-format=pt"),
            (EngineKind::Vllm, "--enable-custom-logit-processor"),
            (EngineKind::Sglang, "--enable-custom-logit-processor"),
            (EngineKind::Sglang, "--enable-custom-logit"),
            (EngineKind::Sglang, "--custom-weight-loader a.b"),
            (EngineKind::Sglang, "--forward-hooks []"),
        ] {
            let got = codes(&format!("EXTRA_ARGS='{flag}'\n"), kind);
            assert!(got.iter().any(|(_, c)| c == "flag-not-allowed"), "{flag}: {got:?}");
        }
        // A prefix names the flag argparse would take it for; one that fits several names them.
        assert_eq!(
            reasons("EXTRA_ARGS=--trust-remote\n", EngineKind::Vllm),
            vec![("abbreviation".to_string(), "--trust-remote-code".to_string())]
        );
        let ambiguous = reasons("EXTRA_ARGS=--enable\n", EngineKind::Vllm);
        assert_eq!(ambiguous[0].0, "ambiguous", "{ambiguous:?}");
        assert!(ambiguous[0].1.contains("--enable-prefix-caching"), "{ambiguous:?}");
        assert_eq!(
            reasons("EXTRA_ARGS=--max-model-length=5\n", EngineKind::Vllm),
            vec![("unknown".to_string(), "--max-model-len".to_string())]
        );
        let allowing = Policy {
            allow_flags: vec!["--trust-remote-code".into()],
            ..policy(EngineKind::Vllm)
        };
        assert!(codes_with("EXTRA_ARGS=--trust-remote-code\n", EngineKind::Vllm, &allowing).is_empty());
        // The allowance is for the flag, however it is spelled; a prefix stays refused.
        assert!(codes_with("EXTRA_ARGS=--trust_remote_code\n", EngineKind::Vllm, &allowing).is_empty());
        assert!(!codes_with("EXTRA_ARGS=--trust-remote\n", EngineKind::Vllm, &allowing).is_empty());
        for ok in [
            "--enable-prefix-caching",
            "--no-trust-remote-code",
            "--enable-chunked-prefill",
            "--lora-modules a=/models/lora b=/models/lora2",
            "--load-format safetensors",
            "--chat-template /models/t.jinja",
            "--tokenizer-mode auto",
            "-O3",
            "--seed 1",
            "--enforce-eager",
        ] {
            assert!(
                codes(&format!("EXTRA_ARGS='{ok}'\n"), EngineKind::Vllm).is_empty(),
                "{ok}: {:?}",
                codes(&format!("EXTRA_ARGS='{ok}'\n"), EngineKind::Vllm)
            );
        }
    }

    #[test]
    fn a_switch_takes_no_value_so_the_next_word_is_read_as_a_flag() {
        // `--enforce-eager --trust-remote-code`: the second word is a flag of its own.
        let got = codes("EXTRA_ARGS='--enforce-eager --trust-remote'\n", EngineKind::Vllm);
        assert!(got.iter().any(|(_, c)| c == "flag-not-allowed"), "{got:?}");
        // A single-dash value is an option to argparse, never a value.
        let got = codes("EXTRA_ARGS='--max-num-seqs -cc.backend=x'\n", EngineKind::Vllm);
        assert!(got.iter().any(|(_, c)| c == "flag-not-allowed"), "{got:?}");
    }

    #[test]
    fn without_the_installed_help_nothing_in_extra_args_passes() {
        let p = Policy {
            help: Help::Unavailable("exit status 1".into()),
            ..policy(EngineKind::Vllm)
        };
        let got = codes_with("EXTRA_ARGS=--enable-prefix-caching\n", EngineKind::Vllm, &p);
        assert_eq!(got, vec![("EXTRA_ARGS".to_string(), "flag-not-allowed".to_string())]);
        // The browser's check still refuses a prefix of a code-loading flag by spelling.
        let p = Policy {
            help: Help::Static,
            ..policy(EngineKind::Vllm)
        };
        assert!(!codes_with("EXTRA_ARGS=--trust-rem\n", EngineKind::Vllm, &p).is_empty());
        assert!(codes_with("EXTRA_ARGS=--enable-prefix-caching\n", EngineKind::Vllm, &p).is_empty());
    }

    #[test]
    fn paths_stay_inside_the_models_root() {
        for (extra, field) in [
            ("EXTRA_ARGS='--chat-template /etc/passwd'\n", "EXTRA_ARGS"),
            ("EXTRA_ARGS='--tokenizer=/home/x/tok'\n", "EXTRA_ARGS"),
            ("EXTRA_ARGS='--lora-modules a=/tmp/lora'\n", "EXTRA_ARGS"),
            ("EXTRA_ARGS='--lora-modules a=/models/l b=/tmp/lora'\n", "EXTRA_ARGS"),
            ("EXTRA_ARGS='--chat-template /models/../etc/t'\n", "EXTRA_ARGS"),
            (
                "SPECULATIVE_CONFIG='{\"method\":\"eagle3\",\"model\":\"/tmp/draft\"}'\n",
                "SPECULATIVE_CONFIG",
            ),
            (
                "SPECULATIVE_CONFIG='{\"method\":\"eagle3\",\"model\":\"draft/x\"}'\n",
                "SPECULATIVE_CONFIG",
            ),
        ] {
            let got = codes(extra, EngineKind::Vllm);
            assert!(
                got.contains(&(field.to_string(), "path-outside-models".to_string())),
                "{extra}: {got:?}"
            );
        }
        assert!(codes(
            "SPECULATIVE_CONFIG='{\"method\":\"eagle3\",\"model\":\"/models/draft\"}'\n",
            EngineKind::Vllm
        )
        .is_empty());
        assert!(inside_root("/models/a/b", "/models/"));
        assert!(!inside_root("/modelsX/a", "/models"));
    }

    #[test]
    fn environment_names_are_listed_exactly_per_engine() {
        let vllm = EngineKind::Vllm;
        let p = policy(vllm);
        assert!(env_allowed("CUDA_VISIBLE_DEVICES", vllm, &p).is_ok());
        assert!(env_allowed("VLLM_CPU_KVCACHE_SPACE", vllm, &p).is_ok());
        assert!(env_allowed("VLLM_LOGGING_LEVEL", vllm, &p).is_ok());
        // The development and insecure-serialisation switches a wildcard let through.
        for never in [
            "VLLM_SERVER_DEV_MODE",
            "VLLM_ALLOW_INSECURE_SERIALIZATION",
            "VLLM_PLUGINS",
            "VLLM_ALLOW_RUNTIME_LORA_UPDATING",
            "VLLM_CACHE_ROOT",
            "NCCL_NET_PLUGIN",
            "NCCL_TOPO_FILE",
            "LD_PRELOAD",
            "PYTHONPATH",
            "PATH",
            "FOO",
            "SGLANG_HEALTH_CHECK_TIMEOUT",
            "ROOFLINE_SIM_FAULT",
        ] {
            assert!(env_allowed(never, vllm, &p).is_err(), "{never}");
        }
        assert!(env_allowed("SGLANG_HEALTH_CHECK_TIMEOUT", EngineKind::Sglang, &p).is_ok());
        let sim = Policy {
            simulator: true,
            ..policy(vllm)
        };
        assert!(env_allowed("ROOFLINE_SIM_FAULT", vllm, &sim).is_ok());
        // The host adds exact names, even one that loads code (its decision); never a linker,
        // Python or shell name, and its configuration refuses a wildcard.
        let host = Policy {
            allow_env: vec!["MY_CACHE_SIZE_GB".into(), "VLLM_PLUGINS".into(), "LD_PRELOAD".into()],
            ..policy(vllm)
        };
        assert!(env_allowed("MY_CACHE_SIZE_GB", vllm, &host).is_ok());
        assert!(env_allowed("VLLM_PLUGINS", vllm, &host).is_ok());
        assert!(env_allowed("LD_PRELOAD", vllm, &host).is_err());
        assert_eq!(host_env_entry("NCCL_*"), Err("wildcard"));
        assert_eq!(host_env_entry("PYTHONPATH"), Err("python"));
        assert_eq!(host_env_entry("MY_KNOB"), Ok(()));
    }
}
