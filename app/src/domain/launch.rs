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

use super::engine::EngineKind;
use super::flagmap::FLAG_MAP;
use super::profile::{Issue, IssueKind, Profile, Severity, ENV_PREFIX};

/// The host's additions to the defaults (from `roofline.toml`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    /// More environment names (`NAME`, or `PREFIX_*`) a profile may set. The never-allowed
    /// names stay never allowed.
    pub allow_env: Vec<String>,
    /// Code-loading flags this installation may take from a profile (`--trust-remote-code`).
    pub allow_flags: Vec<String>,
    /// The models root, absolute; paths a profile names must lie inside it. `None` skips the
    /// path check (the browser, which does not know the host's root).
    pub models_root: Option<String>,
}

/// Environment names a profile may set without host configuration.
const ALLOWED_ENV: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "TOKENIZERS_PARALLELISM",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_*",
    "VLLM_*",
    "SGLANG_*",
    "SGL_*",
    "ROOFLINE_SIM_*",
];

/// Engine variables that hold a size, a count or a switch although their names carry a part
/// of [`NEVER_ENV_PARTS`] (`CACHE` in a KV-cache size): allowed by their exact name. The CPU
/// backend's KV size in GiB is how a CPU vLLM is given its cache.
const SIZE_ENV: &[&str] = &[
    "VLLM_CPU_KVCACHE_SPACE",
    "VLLM_CPU_OMP_THREADS_BIND",
    "VLLM_CPU_NUM_OF_RESERVED_CPU",
    "VLLM_ENGINE_ITERATION_TIMEOUT_S",
    "SGLANG_CPU_OMP_THREADS_BIND",
];

/// Parts of a name that mean "this names something to load or run": never allowed.
const NEVER_ENV_PARTS: &[&str] = &[
    "PRELOAD",
    "PLUGIN",
    "MODULE",
    "LIBRARY",
    "PATH",
    "FILE",
    "DIR",
    "HOME",
    "ROOT",
    "CACHE",
    "CONFIG",
    "SCRIPT",
    "HOOK",
    "CLASS",
    "CLS",
    "EXTENSION",
    "LOADER",
    "EXEC",
    "COMMAND",
    "CMD",
    "LORA",
    "URL",
    "ENDPOINT",
];

/// Why an environment name is never allowed (a reason code), or `None`.
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
    let parts: Vec<&str> = name.split('_').collect();
    NEVER_ENV_PARTS
        .iter()
        .any(|p| parts.contains(p) || (p.len() >= 5 && name.contains(p)))
        .then_some("loads")
}

fn pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// Whether a profile may set this environment variable (without the `ENV_` prefix); the
/// error is a reason code (`linker`, `python`, `runs`, `loads`, `not-listed`).
pub fn env_allowed(name: &str, policy: &Policy) -> Result<(), &'static str> {
    // A size by its exact name, or one the host lists by its exact name (host configuration is
    // trusted with a name-part false alarm; never with a linker, Python or shell variable,
    // and never through a wildcard).
    let exact = SIZE_ENV.contains(&name) || policy.allow_env.iter().any(|p| !p.ends_with('*') && p == name);
    match never_env(name) {
        Some("loads") if exact => {}
        Some(why) => return Err(why),
        None => {}
    }
    let allowed = ALLOWED_ENV.iter().any(|p| pattern_matches(p, name))
        || policy.allow_env.iter().any(|p| pattern_matches(p, name));
    if allowed {
        Ok(())
    } else {
        Err("not-listed")
    }
}

/// Flags that make the engine load code (or take its arguments from a file), by name part.
/// A flag is refused when its name contains one of these, unless the installation allows it.
const CODE_FLAG_PARTS: &[&str] = &[
    "remote-code",
    "plugin",
    "-cls",
    "class",
    "logits-processor",
    "logit-processor",
    "middleware",
    "extension",
    "module-path",
    "weight-loader",
    "loader-extra-config",
    "transfer-config",
    "executor-backend",
    "hook",
];

/// Flags refused outright (whole names): they replace our arguments with a file's.
const CODE_FLAGS: &[&str] = &["--config", "--json-arg"];

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

/// Everything the policy refuses in a profile for an engine of `kind`, each naming its field.
pub fn check(profile: &Profile, kind: EngineKind, policy: &Policy) -> Vec<Issue> {
    let mut out = Vec::new();
    for name in profile.env.keys() {
        if let Err(why) = env_allowed(name, policy) {
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
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        if !word.starts_with('-') || word == "-" {
            // A value: checked with its flag below, or a stray positional.
            if let Some(root) = &policy.models_root {
                let v = word.rsplit('=').next().unwrap_or(word);
                if looks_like_path(v) && !inside_root(v, root) {
                    out.push(issue(
                        "EXTRA_ARGS",
                        IssueKind::PathOutsideModels { value: v.to_string() },
                    ));
                }
            }
            continue;
        }
        let (raw, inline) = match word.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (word.as_str(), None),
        };
        // argparse reads `--a_b` as `--a-b` (vLLM's parser does) and accepts unique prefixes.
        let name = if raw.starts_with("--") {
            raw.replace('_', "-").to_ascii_lowercase()
        } else {
            raw.to_ascii_lowercase()
        };
        let name = alias(kind, &name).map(str::to_string).unwrap_or(name);
        let value = inline.or_else(|| {
            args.get(i)
                .filter(|v| !v.starts_with("--"))
                .inspect(|_| i += 1)
                .cloned()
        });
        // As written, with its value: what the operator looks for in the file.
        let shown = match (&value, word.contains('=')) {
            (Some(v), false) => format!("{word} {v}"),
            _ => word.clone(),
        };
        if let Some((flag, field)) = rendered.iter().find(|(f, _)| *f == name) {
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
        if name.len() >= 3 && name.starts_with("--") {
            if let Some((flag, _)) = rendered.iter().find(|(f, _)| f.starts_with(&name)) {
                out.push(issue(
                    "EXTRA_ARGS",
                    IssueKind::FlagNotAllowed {
                        value: shown,
                        reason: "abbreviation".into(),
                        flag: (*flag).to_string(),
                    },
                ));
                continue;
            }
        }
        let loads_code = CODE_FLAGS.contains(&name.as_str()) || CODE_FLAG_PARTS.iter().any(|p| name.contains(p));
        if loads_code && !policy.allow_flags.contains(&name) {
            out.push(issue(
                "EXTRA_ARGS",
                IssueKind::FlagNotAllowed {
                    value: shown,
                    reason: "code".into(),
                    flag: name.clone(),
                },
            ));
            continue;
        }
        if name == "--load-format" {
            if let Some(v) = &value {
                if !SAFE_LOAD_FORMATS.contains(&v.as_str()) {
                    out.push(issue(
                        "EXTRA_ARGS",
                        IssueKind::FlagNotAllowed {
                            value: format!("{name} {v}"),
                            reason: "load-format".into(),
                            flag: SAFE_LOAD_FORMATS.join(", "),
                        },
                    ));
                }
            }
        }
        if let (Some(root), Some(v)) = (&policy.models_root, &value) {
            // `name=/path` (LoRA modules) and plain paths alike.
            for part in v.split(',').map(|p| p.rsplit('=').next().unwrap_or(p)) {
                if looks_like_path(part) && !inside_root(part, root) {
                    out.push(issue(
                        "EXTRA_ARGS",
                        IssueKind::PathOutsideModels {
                            value: part.to_string(),
                        },
                    ));
                }
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

    fn policy() -> Policy {
        Policy {
            models_root: Some("/models".into()),
            ..Default::default()
        }
    }

    fn codes(extra: &str, kind: EngineKind) -> Vec<(String, String)> {
        check(&profile(extra), kind, &policy())
            .into_iter()
            .map(|i| (i.field, i.kind.code().to_string()))
            .collect()
    }

    #[test]
    fn the_measured_attack_is_refused_field_by_field() {
        let got = codes(
            "ENV_LD_PRELOAD=/tmp/x.so\nENV_PATH=/tmp\nEXTRA_ARGS='--tool-parser-plugin /tmp/p.py --trust-remote-code --host 0.0.0.0'\n",
            EngineKind::Vllm,
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

    #[test]
    fn every_spelling_of_a_rendered_flag_is_a_repeat() {
        for extra in [
            "--host=0.0.0.0",
            "--HOST 0.0.0.0",
            "--port 9",
            "--tensor_parallel_size 8",
            "-tp 8",
            "--model /models/other",
            "--served-model-name x",
        ] {
            let got = codes(&format!("EXTRA_ARGS='{extra}'\n"), EngineKind::Vllm);
            assert!(got.iter().any(|(_, c)| c == "flag-repeats-field"), "{extra}: {got:?}");
        }
        let got = codes("EXTRA_ARGS='--ho 0.0.0.0'\n", EngineKind::Vllm);
        assert!(
            got.iter().any(|(_, c)| c == "flag-not-allowed"),
            "abbreviation: {got:?}"
        );
        for extra in ["--model /models/x", "--tp 4", "--mem-fraction-static 0.99"] {
            let got = codes(&format!("EXTRA_ARGS='{extra}'\n"), EngineKind::Sglang);
            assert!(
                got.iter().any(|(_, c)| c == "flag-repeats-field"),
                "sglang {extra}: {got:?}"
            );
        }
    }

    #[test]
    fn code_loading_flags_need_the_installation() {
        for flag in [
            "--trust-remote-code",
            "--trust_remote_code",
            "--worker-extension-cls a.B",
            "--logits-processors a.b",
            "--middleware m",
            "--config /models/args.yaml",
            "--kv-transfer-config {}",
            "--distributed-executor-backend x.Y",
            "--enable-custom-logit-processor",
            "--load-format pt",
        ] {
            let got = codes(&format!("EXTRA_ARGS='{flag}'\n"), EngineKind::Vllm);
            assert!(got.iter().any(|(_, c)| c == "flag-not-allowed"), "{flag}: {got:?}");
        }
        let allowing = Policy {
            allow_flags: vec!["--trust-remote-code".into()],
            ..policy()
        };
        assert!(check(
            &profile("EXTRA_ARGS=--trust-remote-code\n"),
            EngineKind::Vllm,
            &allowing
        )
        .is_empty());
        for ok in [
            "--enable-prefix-caching",
            "--enable-chunked-prefill",
            "--lora-modules a=/models/lora",
            "--load-format safetensors",
            "--chat-template /models/t.jinja",
            "--tokenizer-mode auto",
        ] {
            assert!(
                codes(&format!("EXTRA_ARGS='{ok}'\n"), EngineKind::Vllm).is_empty(),
                "{ok}"
            );
        }
    }

    #[test]
    fn paths_stay_inside_the_models_root() {
        for (extra, field) in [
            ("EXTRA_ARGS='--chat-template /etc/passwd'\n", "EXTRA_ARGS"),
            ("EXTRA_ARGS='--tokenizer=/home/x/tok'\n", "EXTRA_ARGS"),
            ("EXTRA_ARGS='--lora-modules a=/tmp/lora'\n", "EXTRA_ARGS"),
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
    fn environment_allowlist_with_host_additions_but_never_loaders() {
        let p = Policy {
            allow_env: vec!["MY_*".into(), "LD_PRELOAD".into(), "PYTHONPATH".into()],
            ..policy()
        };
        assert!(env_allowed("CUDA_VISIBLE_DEVICES", &p).is_ok());
        assert!(env_allowed("VLLM_USE_V1", &p).is_ok());
        assert!(env_allowed("ROOFLINE_SIM_FAULT", &p).is_ok());
        assert!(env_allowed("MY_KNOB", &p).is_ok());
        assert!(env_allowed("FOO", &p).is_err());
        for never in [
            "LD_PRELOAD",
            "PYTHONPATH",
            "PATH",
            "VLLM_PLUGINS",
            "VLLM_LOGGING_CONFIG_PATH",
            "NCCL_NET_PLUGIN",
            "NCCL_TOPO_FILE",
            "VLLM_CACHE_ROOT",
            "MY_PRELOADER",
            "VLLM_ALLOW_RUNTIME_LORA_UPDATING",
        ] {
            assert!(env_allowed(never, &p).is_err(), "{never}");
        }
        // A size whose name has CACHE in it: allowed by name; another by the host's exact name,
        // never by a host wildcard, and never a linker or Python name however listed.
        assert!(env_allowed("VLLM_CPU_KVCACHE_SPACE", &policy()).is_ok());
        let host = Policy {
            allow_env: vec!["MY_CACHE_SIZE_GB".into(), "NCCL_*".into(), "LD_PRELOAD".into()],
            ..policy()
        };
        assert!(env_allowed("MY_CACHE_SIZE_GB", &host).is_ok());
        assert!(env_allowed("NCCL_TOPO_FILE", &host).is_err());
        assert!(env_allowed("LD_PRELOAD", &host).is_err());
    }
}
