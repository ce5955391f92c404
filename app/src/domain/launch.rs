//! What a profile may not do: choose what runs or what code is loaded. Which executables run
//! and what they may load is host configuration; a profile (written by anyone with the
//! operator role, reviewed by a person who may miss a word in `EXTRA_ARGS`) only sets the
//! engine's serving knobs. The checks are pure, so the editor shows them as you type; the
//! server applies them with the host's policy on import, on a proposed change and before every
//! start.
//!
//! - `ENV_*`: an allowlist (host config can extend it). `LD_*`, `PATH`, `PYTHON*` and any name
//!   that names a file, directory, library, module, plugin or hook are never allowed.
//! - `EXTRA_ARGS`: deny by default, decided from the installed engine's own `--help`. No flag
//!   the profile already renders (model, name, TP, host, port, …), in any spelling
//!   (`--host=…`, `--tensor_parallel_size`, an abbreviation, `-tp`); no flag that loads code
//!   unless the installation allows it; `--load-format` only formats without pickle. Then a
//!   switch, a listed choice or a number is data; a free value (a path, an address, a name,
//!   JSON) passes only when `flag_grammar` knows how the engine reads that flag and the value
//!   fits; every other flag is refused, naming it, until the host allows it
//!   (`[engines.NAME] allow_flags`). A flag the next release adds is refused until then.
//! - Every path a profile names (in `EXTRA_ARGS`, in `SPECULATIVE_CONFIG`) is absolute and lies
//!   inside the models root (the server resolves symlinks too: `Classified::paths`).

use super::argparse::{self, Resolved};
use super::engine::EngineKind;
use super::flag_grammar::{self, Grammar, Misfit, Places, Reaches};
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
    /// Addresses beyond loopback an engine may bind or reach through a flag's value (a
    /// tracing collector, a KV-event subscriber), each exactly (`[launch] allow_endpoints`).
    pub allow_endpoints: Vec<String>,
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
        // vLLM 0.33's short speculative flags set the draft model and its token count
        // (`EngineArgs.add_cli_args`: `--spec-model`, `--spec-tokens` → `speculative_config`).
        EngineKind::Vllm => out.extend([
            ("--model", "MODEL"),
            ("--spec-model", "SPECULATIVE_CONFIG"),
            ("--spec-tokens", "SPECULATIVE_CONFIG"),
        ]),
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

/// Whether a value names a filesystem path (the browser's check, which knows no grammar).
fn looks_like_path(v: &str) -> bool {
    v.starts_with('/') || v.starts_with("./") || v.starts_with("../") || v.starts_with('~') || v.contains("/..")
}

pub use super::flag_grammar::inside_root;

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
    /// The values the installed help lists (`{auto,fp8}`), when it lists them.
    choices: Option<Vec<String>>,
    /// Whether argparse refuses any other value itself (`HelpFlag::choices_enforced`).
    enforced: bool,
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
                choices: None,
                enforced: false,
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
            choices: flag.choices(),
            enforced: flag.choices_enforced(),
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

/// vLLM's dotted key (`--kv-events-config.endpoint=tcp://*:1`) as the JSON object its
/// `FlexibleArgumentParser` builds from it: `{"endpoint": "tcp://*:1"}` (the value read as
/// JSON when it is JSON, else as a string). `None` for a word without a dotted key.
fn dotted_json(kind: EngineKind, word: &str, value: &str) -> Option<String> {
    if kind != EngineKind::Vllm {
        return None;
    }
    let key = word.split_once('=').map_or(word, |(k, _)| k);
    let (_, path) = key.split_once('.')?;
    let mut v: serde_json::Value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
    for part in path.rsplit('.') {
        let mut m = serde_json::Map::new();
        m.insert(part.to_string(), v);
        v = serde_json::Value::Object(m);
    }
    Some(v.to_string())
}

/// What the policy decided a flag of `EXTRA_ARGS` is: what the reviewer reads beside each.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, crate::decode::FromWire)]
pub struct FlagClass {
    /// As written, with its values.
    pub shown: String,
    /// The flag it resolves to.
    pub flag: String,
    /// `switch`, `number`, `choice`, `checked` (a value the console knows the grammar of:
    /// paths inside the root, loopback addresses, known JSON keys) or `allowed` (by host
    /// configuration, `[engines.NAME] allow_flags`); `unverified` in the browser, which
    /// does not know the installed help.
    pub class: String,
}

/// The policy's whole reading of a profile: what it refuses, what each flag is, and the
/// paths its values reach (the server resolves them on disk: a symlink inside the root may
/// point out of it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Classified {
    pub issues: Vec<Issue>,
    pub flags: Vec<FlagClass>,
    pub paths: Vec<String>,
}

/// How a value the console has no grammar for is read. Only `Refuse` is the policy; the
/// other exists so the property test can show that it catches the mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fallback {
    Refuse,
    #[cfg(test)]
    Data,
}

/// Everything the policy refuses in a profile for an engine of `kind`, each naming its field.
pub fn check(profile: &Profile, kind: EngineKind, policy: &Policy) -> Vec<Issue> {
    classify(profile, kind, policy).issues
}

/// The launch policy's reading of a profile (deny by default): see [`Classified`].
pub fn classify(profile: &Profile, kind: EngineKind, policy: &Policy) -> Classified {
    classify_with(profile, kind, policy, Fallback::Refuse)
}

pub(crate) fn classify_with(profile: &Profile, kind: EngineKind, policy: &Policy, fallback: Fallback) -> Classified {
    let mut out = Classified::default();
    env_issues(profile, kind, policy, &mut out.issues);
    let rendered = rendered_flags(kind);
    let args = &profile.extra_args;
    let root = policy.models_root.as_deref();
    let outside_root = |v: &str| root.is_some_and(|root| looks_like_path(v) && !inside_root(v, root));
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        if argparse::is_value(word) {
            // A word no flag takes: a second model tag or a value the flag before it does not
            // take (`--enforce-eager roofline.toml`). Never data the console has checked.
            let v = word.rsplit('=').next().unwrap_or(word);
            if outside_root(v) {
                out.issues.push(issue(
                    "EXTRA_ARGS",
                    IssueKind::PathOutsideModels { value: v.to_string() },
                ));
            } else if matches!(policy.help, Help::Installed(_)) {
                out.issues.push(issue(
                    "EXTRA_ARGS",
                    IssueKind::FlagNotAllowed {
                        value: word.clone(),
                        reason: "positional".into(),
                        flag: String::new(),
                    },
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
                out.issues.push(refuse(reason, flag));
                continue;
            }
        };
        if let Some((flag, field)) = rendered.iter().find(|(f, _)| r.names.iter().any(|n| n == f)) {
            out.issues.push(issue(
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
        if allowed {
            out.flags.push(FlagClass {
                shown,
                flag: r.canonical,
                class: "allowed".into(),
            });
            continue;
        }
        if loads_code {
            out.issues.push(refuse("code", r.canonical.clone()));
            continue;
        }
        if LOAD_FORMAT_FLAGS.contains(&r.canonical.as_str()) {
            let bad: Vec<&String> = values
                .iter()
                .filter(|v| !SAFE_LOAD_FORMATS.contains(&v.as_str()))
                .collect();
            for v in &bad {
                out.issues.push(issue(
                    "EXTRA_ARGS",
                    IssueKind::FlagNotAllowed {
                        value: format!("{} {v}", r.canonical),
                        reason: "load-format".into(),
                        flag: SAFE_LOAD_FORMATS.join(", "),
                    },
                ));
            }
            if bad.is_empty() {
                out.flags.push(FlagClass {
                    shown,
                    flag: r.canonical,
                    class: "choice".into(),
                });
            }
            continue;
        }
        let decided = match &policy.help {
            Help::Installed(_) => decide(kind, word, &r, &values, policy, fallback, &mut out.paths),
            _ => decide_static(kind, &r, &values, root, &mut out.paths),
        };
        match decided {
            Ok(class) => out.flags.push(FlagClass {
                shown,
                flag: r.canonical,
                class: class.into(),
            }),
            Err(m) if m.reason == "outside-root" => out
                .issues
                .push(issue("EXTRA_ARGS", IssueKind::PathOutsideModels { value: m.detail })),
            Err(m) => {
                let detail = if m.detail.is_empty() {
                    r.canonical.clone()
                } else {
                    format!("{}: {}", r.canonical, m.detail)
                };
                out.issues.push(refuse(m.reason, detail));
            }
        }
    }
    speculative_issues(profile, policy, &mut out.issues);
    out
}

/// The environment names the policy refuses.
fn env_issues(profile: &Profile, kind: EngineKind, policy: &Policy, out: &mut Vec<Issue>) {
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
}

/// The paths `SPECULATIVE_CONFIG` names (its draft model among them) outside the root.
fn speculative_issues(profile: &Profile, policy: &Policy, out: &mut Vec<Issue>) {
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
}

/// Deny by default, from the installed help: a switch, a listed choice or a number is data; a
/// free value passes only through the grammar the console knows for that flag
/// (`flag_grammar`); any other is refused, naming the flag.
fn decide(
    kind: EngineKind,
    word: &str,
    r: &Reading,
    values: &[String],
    policy: &Policy,
    fallback: Fallback,
    paths: &mut Vec<String>,
) -> Result<&'static str, Misfit> {
    if r.takes == Some(Takes::Nothing) {
        // `--switch=x` or `--switch.key=x`: argparse refuses a value for a switch; never data.
        return match values.first() {
            None => Ok("switch"),
            Some(v) => Err(Misfit {
                reason: "positional",
                detail: v.clone(),
            }),
        };
    }
    let places = Places {
        root: policy.models_root.as_deref(),
        hosts: &policy.allow_endpoints,
    };
    let grammar = flag_grammar::grammar(kind, &r.canonical).or_else(|| simulator_grammar(policy, &r.canonical));
    let mut reaches = Reaches::default();
    let mut class = "number";
    for v in values {
        if let Some(json) = dotted_json(kind, word, v) {
            // A dotted key sets one field of a JSON-valued flag: checked as that object.
            match grammar {
                Some(g @ (Grammar::Json(_) | Grammar::JsonData)) => {
                    flag_grammar::check(g, &json, &places, &mut reaches)?;
                    class = "checked";
                }
                _ if fallback == Fallback::Refuse => return Err(misfit_unclassified()),
                _ => {}
            }
            continue;
        }
        if let Some(choices) = &r.choices {
            // A value argparse refuses never reaches the engine (the flag check names it).
            if !choices.contains(v) && !r.enforced {
                return Err(Misfit {
                    reason: "not-a-choice",
                    detail: choices.join(", "),
                });
            }
            class = "choice";
            continue;
        }
        match grammar {
            Some(g) => {
                flag_grammar::check(g, v, &places, &mut reaches)?;
                class = "checked";
            }
            None if flag_grammar::is_number(v) || flag_grammar::is_number_list(v) => {}
            None if fallback == Fallback::Refuse => return Err(misfit_unclassified()),
            None => {}
        }
    }
    paths.extend(reaches.paths);
    Ok(class)
}

/// The simulator's own knobs (`sim::args`), for simulated installations only.
fn simulator_grammar(policy: &Policy, flag: &str) -> Option<Grammar> {
    match flag {
        "--sim-fault" if policy.simulator => Some(Grammar::Word),
        "--sim-startup-delay" if policy.simulator => Some(Grammar::Number),
        _ => None,
    }
}

fn misfit_unclassified() -> Misfit {
    Misfit {
        reason: "unclassified",
        detail: String::new(),
    }
}

/// The browser's check, without the installed help: the grammar where the console knows the
/// flag (a relative chat template shows as the operator types), else paths by their look.
/// The server decides with the help on import, review and start.
fn decide_static(
    kind: EngineKind,
    r: &Reading,
    values: &[String],
    root: Option<&str>,
    paths: &mut Vec<String>,
) -> Result<&'static str, Misfit> {
    let mut reaches = Reaches::default();
    if let Some(g) = flag_grammar::grammar(kind, &r.canonical) {
        for v in values {
            let places = Places { root, hosts: &[] };
            flag_grammar::check(g, v, &places, &mut reaches)?;
        }
        paths.extend(reaches.paths);
        return Ok("checked");
    }
    // Not known here: the server decides.
    // `name=/path` (LoRA modules) and plain paths alike.
    for part in values
        .iter()
        .flat_map(|v| v.split(','))
        .map(|p| p.rsplit('=').next().unwrap_or(p))
    {
        if root.is_some_and(|root| looks_like_path(part) && !inside_root(part, root)) {
            return Err(Misfit {
                reason: "outside-root",
                detail: part.to_string(),
            });
        }
    }
    Ok("unverified")
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

    /// A profile whose `EXTRA_ARGS` are these words, as the profile parser splits them.
    fn words(extra: &[&str]) -> Profile {
        Profile {
            extra_args: extra.iter().map(|w| (*w).to_string()).collect(),
            ..profile("")
        }
    }

    fn word_reasons(extra: &[&str], kind: EngineKind) -> Vec<(String, String)> {
        check(&words(extra), kind, &policy(kind))
            .into_iter()
            .map(|i| match i.kind {
                IssueKind::FlagNotAllowed { reason, flag, .. } => (reason, flag),
                other => (other.code().to_string(), String::new()),
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

    /// The third audit's findings, each refused by deny-by-default (they were accepted).
    #[test]
    fn flags_nobody_listed_are_refused_until_the_host_allows_them() {
        for (kind, extra, reason) in [
            // A named Python module run with arguments the profile chooses.
            (
                EngineKind::Sglang,
                &["--sidecar", "mymod", "--sidecar-args", r#"["x"]"#][..],
                "unclassified",
            ),
            // A Python logging configuration can instantiate any class.
            (
                EngineKind::Vllm,
                &["--logging-config", r#"{"pylogging_config_file":"/models/l.json"}"#],
                "unclassified",
            ),
            (
                EngineKind::Vllm,
                &["--logging-config.pylogging_config_file=/models/l.json"],
                "unclassified",
            ),
            // The built-in tool server runs model-written code.
            (EngineKind::Vllm, &["--tool-server", "demo"], "endpoint"),
            (EngineKind::Sglang, &["--tool-server", "demo"], "endpoint"),
            // A cache connector's configuration file.
            (
                EngineKind::Sglang,
                &["--lmcache-config-file", "/models/c.yaml"],
                "unclassified",
            ),
            // Relative paths resolve in the engine's working directory.
            (EngineKind::Vllm, &["--chat-template", "roofline.toml"], "relative-path"),
            (
                EngineKind::Vllm,
                &["--chat-template", "../roofline.toml"],
                "relative-path",
            ),
            (EngineKind::Vllm, &["--lora-modules", "a=lora"], "relative-path"),
            (EngineKind::Sglang, &["--crash-dump-folder", "dumps"], "relative-path"),
            (
                EngineKind::Sglang,
                &["--chat-template", "./roofline.toml"],
                "relative-path",
            ),
            // Paths and endpoints inside JSON values.
            (
                EngineKind::Vllm,
                &["--lora-modules", r#"{"name":"a","path":"lora"}"#],
                "relative-path",
            ),
            (
                EngineKind::Vllm,
                &["--kv-events-config", r#"{"publisher":"zmq","endpoint":"tcp://*:5557"}"#],
                "endpoint",
            ),
            (
                EngineKind::Vllm,
                &["--kv-events-config.endpoint=tcp://0.0.0.0:5557"],
                "endpoint",
            ),
            (
                EngineKind::Vllm,
                &["--otlp-traces-endpoint", "http://collector.example:4317"],
                "endpoint",
            ),
            (
                EngineKind::Vllm,
                &["--limit-mm-per-prompt", r#"{"image":{"cache_dir":"/tmp"}}"#],
                "json-key",
            ),
            (
                EngineKind::Sglang,
                &["--kv-events-config", r#"{"endpoint":"tcp://*:5557"}"#],
                "endpoint",
            ),
            (
                EngineKind::Sglang,
                &["--decoupled-spec-bind-endpoint", "tcp://0.0.0.0:1"],
                "unclassified",
            ),
            (EngineKind::Sglang, &["--dist-init-addr", "10.0.0.1:5000"], "endpoint"),
            // A word after a switch is no flag's value.
            (EngineKind::Vllm, &["--enforce-eager", "roofline.toml"], "positional"),
            (EngineKind::Vllm, &["--enforce-eager=roofline.toml"], "positional"),
        ] {
            let got = word_reasons(extra, kind);
            assert!(got.iter().any(|(r, _)| r == reason), "{kind:?} {extra:?}: {got:?}");
        }
        // A value outside argparse's own choices never reaches the engine: argparse refuses
        // it (the flag check names it); the policy has nothing to add.
        assert!(word_reasons(&["--dtype", "bf17"], EngineKind::Vllm).is_empty());
        // vLLM 0.33's short speculative flags set the draft model around SPECULATIVE_CONFIG.
        let v033 = Policy {
            help: Help::Installed(super::super::help_flags::parse_help(include_str!(
                "../../../testdata/help/vllm-0.33.0-serve-help-all.txt"
            ))),
            ..policy(EngineKind::Vllm)
        };
        for extra in [
            "--spec-model /tmp/draft",
            "--spec-tokens 4",
            "--speculative-config.model=/tmp/d",
        ] {
            let got = codes_with(&format!("EXTRA_ARGS='{extra}'\n"), EngineKind::Vllm, &v033);
            assert!(got.iter().any(|(_, c)| c == "flag-repeats-field"), "{extra}: {got:?}");
        }
        // The host allows a flag by name: then it passes, named as allowed for the reviewer.
        let allowing = Policy {
            allow_flags: vec!["--logging-config".into()],
            ..policy(EngineKind::Vllm)
        };
        let c = classify(
            &profile("EXTRA_ARGS='--logging-config {}'\n"),
            EngineKind::Vllm,
            &allowing,
        );
        assert!(c.issues.is_empty(), "{:?}", c.issues);
        assert_eq!(c.flags[0].class, "allowed");
    }

    #[test]
    fn what_operators_set_every_day_still_passes_with_its_class() {
        for (kind, extra) in [
            (
                EngineKind::Vllm,
                &[
                    "--long-prefill-token-threshold",
                    "2k",
                    "--kv-cache-memory-bytes",
                    "4GiB",
                    "--seed",
                    "1",
                ][..],
            ),
            (
                EngineKind::Vllm,
                &["--revision", "v1.0", "--tokenizer-revision", "main", "--dtype", "half"],
            ),
            (
                EngineKind::Vllm,
                &[
                    "--generation-config",
                    "auto",
                    "--api-key",
                    "k1",
                    "k2",
                    "--root-path",
                    "/v1",
                ],
            ),
            (
                EngineKind::Vllm,
                &[
                    "--limit-mm-per-prompt",
                    r#"{"image":2}"#,
                    "--override-generation-config",
                    r#"{"temperature":0.6}"#,
                ],
            ),
            (
                EngineKind::Vllm,
                &[
                    "--kv-events-config",
                    r#"{"enable_kv_cache_events":true,"endpoint":"tcp://127.0.0.1:5557"}"#,
                ],
            ),
            (
                EngineKind::Vllm,
                &[
                    "--otlp-traces-endpoint",
                    "http://127.0.0.1:4317",
                    "--cudagraph-capture-sizes",
                    "1",
                    "2",
                    "4",
                ],
            ),
            (
                EngineKind::Vllm,
                &["--lora-modules", r#"{"name":"a","path":"/models/l"}"#, "--enable-lora"],
            ),
            (
                EngineKind::Sglang,
                &[
                    "--chat-template",
                    "chatml",
                    "--log-level",
                    "info",
                    "--max-prefill-tokens",
                    "16k",
                ],
            ),
            (
                EngineKind::Sglang,
                &["--dist-init-addr", "127.0.0.1:5000", "--lora-paths", "a=/models/l"],
            ),
        ] {
            let c = classify(&words(extra), kind, &policy(kind));
            assert!(c.issues.is_empty(), "{kind:?} {extra:?}: {:?}", c.issues);
            assert!(c.flags.iter().all(|f| f.class != "unverified"), "{:?}", c.flags);
        }
        let c = classify(
            &profile("EXTRA_ARGS='--chat-template /models/t.jinja --enforce-eager --dtype half --seed 3'\n"),
            EngineKind::Vllm,
            &policy(EngineKind::Vllm),
        );
        let classes: Vec<&str> = c.flags.iter().map(|f| f.class.as_str()).collect();
        assert_eq!(classes, ["checked", "switch", "choice", "number"]);
        assert_eq!(
            c.paths,
            ["/models/t.jinja"],
            "the server resolves what the values reach"
        );
    }

    /// Values an attacker would hand any flag: paths outside the root, relative paths into the
    /// working directory, module and class names, addresses beyond loopback, JSON naming code.
    const HOSTILE: &[&str] = &[
        "/etc/passwd",
        "roofline.toml",
        "../roofline.toml",
        "data/roofline.toml",
        "os.system",
        "my_pkg.mod:Evil",
        "tcp://0.0.0.0:5557",
        "http://collector.example:4317/v1",
        "10.0.0.1:80",
        "{\"module_path\":\"evil\",\"class_name\":\"X\"}",
        "[\"os.system\"]",
        "/models/../etc/shadow",
    ];

    /// Every flag of every captured help (vLLM-CPU 0.32.0, vLLM 0.33.0, SGLang 0.5.23), with
    /// every hostile value, as `--flag VALUE` and (vLLM) as a dotted key: what is accepted is
    /// either a listed choice or text the engine only compares or prints (`Grammar::Text`).
    /// The violations found under a policy, for the mutation check.
    fn hostile_violations(fallback: Fallback) -> Vec<String> {
        let helps = [
            (EngineKind::Vllm, installed(EngineKind::Vllm)),
            (
                EngineKind::Vllm,
                super::super::help_flags::parse_help(include_str!(
                    "../../../testdata/help/vllm-0.33.0-serve-help-all.txt"
                )),
            ),
            (EngineKind::Sglang, installed(EngineKind::Sglang)),
        ];
        let mut bad = Vec::new();
        for (kind, set) in helps {
            let p = Policy {
                help: Help::Installed(set.clone()),
                ..policy(kind)
            };
            for flag in &set.flags {
                let name = flag.canonical();
                let grammar = flag_grammar::grammar(kind, name);
                // Text the engine only compares or prints; a literal template Jinja renders
                // in its sandbox.
                let text = |v: &str| {
                    grammar == Some(Grammar::Text) || (grammar == Some(Grammar::TemplateOrLiteral) && v.contains('{'))
                };
                for v in HOSTILE {
                    let mut words = vec![vec![name.to_string(), (*v).to_string()]];
                    if kind == EngineKind::Vllm && name.starts_with("--") {
                        words.push(vec![format!("{name}.x={v}")]);
                    }
                    for extra in words {
                        let words: Vec<&str> = extra.iter().map(String::as_str).collect();
                        let c = classify_with(&self::words(&words), kind, &p, fallback);
                        let choice =
                            flag.choices_enforced() || flag.choices().is_some_and(|c| c.iter().any(|x| x == v));
                        if c.issues.is_empty() && !text(v) && !choice {
                            bad.push(format!("{kind:?} {}", extra.join(" ")));
                        }
                    }
                }
            }
        }
        bad
    }

    #[test]
    fn no_flag_of_any_captured_help_accepts_a_hostile_value() {
        let bad = hostile_violations(Fallback::Refuse);
        assert!(
            bad.is_empty(),
            "{} accepted, first: {:?}",
            bad.len(),
            &bad[..bad.len().min(10)]
        );
    }

    #[test]
    fn the_property_catches_an_unknown_flag_read_as_data() {
        // The mutation: a free-valued flag the console has no grammar for taken as data.
        let bad = hostile_violations(Fallback::Data);
        assert!(bad.len() > 100, "the property must catch the mutation: {}", bad.len());
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
