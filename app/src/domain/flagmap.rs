//! The one flag map between vLLM and SGLang, and the rendering of a profile to an argv.
//!
//! Every place that needs a flag name (argv rendering, the flag check against the installed
//! engine, the profile view) reads it from [`FLAG_MAP`], so the two engines can never drift
//! apart in one place and not the other. Rendering produces an argv, never a shell string.

use super::engine::EngineKind;
use super::profile::Profile;
use serde::{Deserialize, Serialize};

/// A profile setting that becomes one or more engine flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum Setting {
    Model,
    ServedModelName,
    TensorParallel,
    ContextLength,
    MemFraction,
    AutoToolChoice,
    ToolCallParser,
    ReasoningParser,
    Quantization,
    KvCacheDtype,
    MaxRunningRequests,
    MaxBatchedTokens,
    Speculative,
    Host,
    Port,
    Metrics,
}

/// One row of the map: the runbook step it belongs to and each engine's flag.
#[derive(Clone, Copy, Debug)]
pub struct FlagRow {
    pub setting: Setting,
    /// The profile key that sets it (`None` for flags the console adds itself).
    pub key: Option<&'static str>,
    /// Step of the runbook's flag order (1 model and name … 8 speculation; 9 network).
    pub step: u8,
    pub vllm: Option<&'static str>,
    pub sglang: Option<&'static str>,
}

impl FlagRow {
    pub fn flag(&self, kind: EngineKind) -> Option<&'static str> {
        match kind {
            EngineKind::Vllm => self.vllm,
            EngineKind::Sglang => self.sglang,
        }
    }
}

/// The map itself, in the runbook's flag order. `None` means the engine has no such flag:
/// vLLM takes the model positionally and always exposes metrics; SGLang implies auto tool
/// choice from `--tool-call-parser`.
pub const FLAG_MAP: &[FlagRow] = &[
    FlagRow {
        setting: Setting::Model,
        key: Some("MODEL"),
        step: 1,
        vllm: None,
        sglang: Some("--model-path"),
    },
    FlagRow {
        setting: Setting::ServedModelName,
        key: Some("SERVED_MODEL_NAME"),
        step: 1,
        vllm: Some("--served-model-name"),
        sglang: Some("--served-model-name"),
    },
    FlagRow {
        setting: Setting::TensorParallel,
        key: Some("TENSOR_PARALLEL"),
        step: 2,
        vllm: Some("--tensor-parallel-size"),
        sglang: Some("--tp-size"),
    },
    FlagRow {
        setting: Setting::ContextLength,
        key: Some("CONTEXT_LENGTH"),
        step: 3,
        vllm: Some("--max-model-len"),
        sglang: Some("--context-length"),
    },
    FlagRow {
        setting: Setting::MemFraction,
        key: Some("MEM_FRACTION"),
        step: 4,
        vllm: Some("--gpu-memory-utilization"),
        sglang: Some("--mem-fraction-static"),
    },
    FlagRow {
        setting: Setting::AutoToolChoice,
        key: None,
        step: 5,
        vllm: Some("--enable-auto-tool-choice"),
        sglang: None,
    },
    FlagRow {
        setting: Setting::ToolCallParser,
        key: Some("TOOL_CALL_PARSER"),
        step: 5,
        vllm: Some("--tool-call-parser"),
        sglang: Some("--tool-call-parser"),
    },
    FlagRow {
        setting: Setting::ReasoningParser,
        key: Some("REASONING_PARSER"),
        step: 5,
        vllm: Some("--reasoning-parser"),
        sglang: Some("--reasoning-parser"),
    },
    FlagRow {
        setting: Setting::Quantization,
        key: Some("QUANTIZATION"),
        step: 6,
        vllm: Some("--quantization"),
        sglang: Some("--quantization"),
    },
    FlagRow {
        setting: Setting::KvCacheDtype,
        key: Some("KV_CACHE_DTYPE"),
        step: 6,
        vllm: Some("--kv-cache-dtype"),
        sglang: Some("--kv-cache-dtype"),
    },
    FlagRow {
        setting: Setting::MaxRunningRequests,
        key: Some("MAX_RUNNING_REQUESTS"),
        step: 7,
        vllm: Some("--max-num-seqs"),
        sglang: Some("--max-running-requests"),
    },
    FlagRow {
        setting: Setting::MaxBatchedTokens,
        key: Some("MAX_BATCHED_TOKENS"),
        step: 7,
        vllm: Some("--max-num-batched-tokens"),
        sglang: Some("--chunked-prefill-size"),
    },
    FlagRow {
        setting: Setting::Speculative,
        key: Some("SPECULATIVE_CONFIG"),
        step: 8,
        vllm: Some("--speculative-config"),
        sglang: Some("--speculative-algorithm"),
    },
    FlagRow {
        setting: Setting::Host,
        key: Some("HOST"),
        step: 9,
        vllm: Some("--host"),
        sglang: Some("--host"),
    },
    FlagRow {
        setting: Setting::Port,
        key: Some("PORT"),
        step: 9,
        vllm: Some("--port"),
        sglang: Some("--port"),
    },
    FlagRow {
        setting: Setting::Metrics,
        key: None,
        step: 9,
        vllm: None,
        sglang: Some("--enable-metrics"),
    },
];

/// SGLang spells speculative decoding as separate flags; vLLM's JSON keys map onto them.
pub const SGLANG_SPECULATIVE_KEYS: &[(&str, &str)] = &[
    ("model", "--speculative-draft-model-path"),
    ("num_speculative_tokens", "--speculative-num-steps"),
    ("num_steps", "--speculative-num-steps"),
    ("eagle_topk", "--speculative-eagle-topk"),
    ("num_draft_tokens", "--speculative-num-draft-tokens"),
];

#[expect(
    clippy::expect_used,
    reason = "FLAG_MAP has a row for every Setting (the test every_setting_has_a_row)"
)]
fn row(setting: Setting) -> &'static FlagRow {
    FLAG_MAP
        .iter()
        .find(|r| r.setting == setting)
        .expect("every setting has a row")
}

fn flag(kind: EngineKind, setting: Setting) -> Option<&'static str> {
    row(setting).flag(kind)
}

/// Renders a profile into the full argv: `command` (the installation's executable and its
/// fixed arguments, from host configuration) followed by the engine's own arguments.
///
/// vLLM: `vllm serve MODEL --flag …`; SGLang: `python -m sglang.launch_server --model-path
/// MODEL …`. Profile extra arguments come last so an operator can override a default.
pub fn render_argv(kind: EngineKind, command: &[String], profile: &Profile) -> Vec<String> {
    let mut argv: Vec<String> = command.to_vec();
    let push = |setting: Setting, value: Option<String>, argv: &mut Vec<String>| {
        if let (Some(f), Some(v)) = (flag(kind, setting), value) {
            argv.push(f.to_string());
            argv.push(v);
        }
    };
    match kind {
        EngineKind::Vllm => {
            argv.push("serve".into());
            argv.push(profile.model.clone());
        }
        EngineKind::Sglang => push(Setting::Model, Some(profile.model.clone()), &mut argv),
    }
    push(Setting::ServedModelName, profile.served_model_name.clone(), &mut argv);
    push(
        Setting::TensorParallel,
        Some(profile.tensor_parallel.to_string()),
        &mut argv,
    );
    push(
        Setting::ContextLength,
        profile.context_length.map(|v| v.to_string()),
        &mut argv,
    );
    push(
        Setting::MemFraction,
        profile.mem_fraction.map(|v| v.to_string()),
        &mut argv,
    );
    if profile.tool_call_parser.is_some() {
        if let Some(f) = flag(kind, Setting::AutoToolChoice) {
            argv.push(f.into());
        }
    }
    push(Setting::ToolCallParser, profile.tool_call_parser.clone(), &mut argv);
    push(Setting::ReasoningParser, profile.reasoning_parser.clone(), &mut argv);
    push(Setting::Quantization, profile.quantization.clone(), &mut argv);
    push(
        Setting::KvCacheDtype,
        profile.kv_cache_dtype.as_deref().map(|v| kv_dtype_value(kind, v)),
        &mut argv,
    );
    push(
        Setting::MaxRunningRequests,
        profile.max_running_requests.map(|v| v.to_string()),
        &mut argv,
    );
    push(
        Setting::MaxBatchedTokens,
        profile.max_batched_tokens.map(|v| v.to_string()),
        &mut argv,
    );
    if let Some(spec) = &profile.speculative_config {
        match kind {
            EngineKind::Vllm => push(Setting::Speculative, Some(spec.clone()), &mut argv),
            EngineKind::Sglang => argv.extend(sglang_speculative(spec)),
        }
    }
    push(Setting::Host, Some(profile.host.clone()), &mut argv);
    push(
        Setting::Port,
        Some(profile.port.unwrap_or(kind.default_port()).to_string()),
        &mut argv,
    );
    if let Some(f) = flag(kind, Setting::Metrics) {
        if !profile.extra_args.iter().any(|a| a == f) {
            argv.push(f.into());
        }
    }
    argv.extend(profile.extra_args.iter().cloned());
    argv
}

/// KV-cache dtype names differ: vLLM's `fp8` (e4m3 on CUDA) is SGLang's `fp8_e4m3`.
pub fn kv_dtype_value(kind: EngineKind, value: &str) -> String {
    match (kind, value) {
        (EngineKind::Sglang, "fp8") => "fp8_e4m3".to_string(),
        _ => value.to_string(),
    }
}

/// vLLM's speculative JSON as SGLang flags; unknown keys are left out (the profile view says so
/// through [`untranslatable_speculative_keys`]).
fn sglang_speculative(spec: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(spec) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(method) = map.get("method").and_then(|m| m.as_str()) {
        out.push("--speculative-algorithm".to_string());
        out.push(method.to_ascii_uppercase());
    }
    let mut used = Vec::new();
    for (key, flag) in SGLANG_SPECULATIVE_KEYS {
        if used.contains(flag) {
            continue;
        }
        if let Some(v) = map.get(*key) {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push((*flag).to_string());
            out.push(text);
            used.push(flag);
        }
    }
    out
}

/// Keys of a speculative config that SGLang has no flag for.
pub fn untranslatable_speculative_keys(spec: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(spec) else {
        return Vec::new();
    };
    map.keys()
        .filter(|k| k.as_str() != "method" && !SGLANG_SPECULATIVE_KEYS.iter().any(|(s, _)| s == k))
        .cloned()
        .collect()
}

/// Every flag name an argv uses (`--x` and `--x=v` alike), for checking against `--help`.
pub fn flags_in(argv: &[String]) -> Vec<String> {
    argv.iter()
        .filter(|a| a.starts_with("--") && a.len() > 2)
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect()
}

/// An argv cut where each flag starts (`--max-num-seqs 48`), each piece displayed as
/// [`display_argv`] would: the units a reviewer compares between two command lines. Words
/// before the first flag (the program and positionals) are one piece.
pub fn argv_groups(argv: &[String]) -> Vec<String> {
    let mut groups: Vec<Vec<String>> = Vec::new();
    for word in argv {
        if groups.is_empty() || (word.starts_with("--") && word.len() > 2) {
            groups.push(Vec::new());
        }
        if let Some(g) = groups.last_mut() {
            g.push(word.clone());
        }
    }
    groups.iter().map(|g| display_argv(g)).collect()
}

/// Renders an argv for display, quoting words a reader would otherwise misread.
pub fn display_argv(argv: &[String]) -> String {
    super::envfile::join_words(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_has_a_row() {
        use Setting::*;
        let all = [
            Model,
            ServedModelName,
            TensorParallel,
            ContextLength,
            MemFraction,
            AutoToolChoice,
            ToolCallParser,
            ReasoningParser,
            Quantization,
            KvCacheDtype,
            MaxRunningRequests,
            MaxBatchedTokens,
            Speculative,
            Host,
            Port,
            Metrics,
        ];
        // A new setting stops this match from compiling until it is listed above.
        for s in all {
            match s {
                Model | ServedModelName | TensorParallel | ContextLength | MemFraction | AutoToolChoice
                | ToolCallParser | ReasoningParser | Quantization | KvCacheDtype | MaxRunningRequests
                | MaxBatchedTokens | Speculative | Host | Port | Metrics => {}
            }
            assert!(FLAG_MAP.iter().any(|r| r.setting == s), "{s:?} has no row");
        }
    }

    fn full(engine: &str) -> Profile {
        let text = format!(
            "ENGINE={engine}\nMODEL=/models/qwen3-8b\nSERVED_MODEL_NAME=qwen3-8b\nTENSOR_PARALLEL=2\nCONTEXT_LENGTH=32768\nMEM_FRACTION=0.9\nTOOL_CALL_PARSER=hermes\nREASONING_PARSER=qwen3\nQUANTIZATION=fp8\nKV_CACHE_DTYPE=fp8\nMAX_RUNNING_REQUESTS=128\nMAX_BATCHED_TOKENS=8192\nSPECULATIVE_CONFIG='{{\"method\":\"eagle3\",\"model\":\"/models/eagle\",\"num_speculative_tokens\":3}}'\nHOST=0.0.0.0\nEXTRA_ARGS=--trust-remote-code\n"
        );
        Profile::from_env("qwen3", &text).unwrap().0
    }

    #[test]
    fn argv_groups_cut_at_flags() {
        let argv: Vec<String> = [
            "vllm",
            "serve",
            "/models/a b",
            "--max-num-seqs",
            "48",
            "--enforce-eager",
            "--x",
            "1",
            "2",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            argv_groups(&argv),
            [
                "vllm serve \"/models/a b\"",
                "--max-num-seqs 48",
                "--enforce-eager",
                "--x 1 2"
            ]
        );
        assert!(argv_groups(&[]).is_empty());
    }

    #[test]
    fn vllm_golden() {
        let argv = render_argv(EngineKind::Vllm, &["vllm".into()], &full("vllm-0-33"));
        assert_eq!(
            display_argv(&argv),
            "vllm serve /models/qwen3-8b --served-model-name qwen3-8b --tensor-parallel-size 2 \
--max-model-len 32768 --gpu-memory-utilization 0.9 --enable-auto-tool-choice --tool-call-parser hermes \
--reasoning-parser qwen3 --quantization fp8 --kv-cache-dtype fp8 --max-num-seqs 128 \
--max-num-batched-tokens 8192 --speculative-config \"{\\\"method\\\":\\\"eagle3\\\",\\\"model\\\":\\\"/models/eagle\\\",\\\"num_speculative_tokens\\\":3}\" \
--host 0.0.0.0 --port 8000 --trust-remote-code"
        );
    }

    #[test]
    fn sglang_golden() {
        let cmd: Vec<String> = ["python", "-m", "sglang.launch_server"].map(String::from).to_vec();
        let argv = render_argv(EngineKind::Sglang, &cmd, &full("sglang-0-5"));
        assert_eq!(
            display_argv(&argv),
            "python -m sglang.launch_server --model-path /models/qwen3-8b --served-model-name qwen3-8b \
--tp-size 2 --context-length 32768 --mem-fraction-static 0.9 --tool-call-parser hermes \
--reasoning-parser qwen3 --quantization fp8 --kv-cache-dtype fp8_e4m3 --max-running-requests 128 \
--chunked-prefill-size 8192 --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/eagle \
--speculative-num-steps 3 --host 0.0.0.0 --port 30000 --enable-metrics --trust-remote-code"
        );
    }

    #[test]
    fn minimal_profiles_render_defaults_only() {
        let p = Profile::new("p", "e", "/models/m");
        assert_eq!(
            render_argv(EngineKind::Vllm, &["vllm".into()], &p),
            [
                "vllm",
                "serve",
                "/models/m",
                "--tensor-parallel-size",
                "1",
                "--host",
                "127.0.0.1",
                "--port",
                "8000"
            ]
        );
        let mut p = p;
        p.extra_args = vec!["--enable-metrics".into()];
        let argv = render_argv(EngineKind::Sglang, &["sglang".into()], &p);
        assert_eq!(argv.iter().filter(|a| *a == "--enable-metrics").count(), 1);
    }

    #[test]
    fn speculative_keys_without_sglang_flag_are_reported() {
        assert_eq!(
            untranslatable_speculative_keys(r#"{"method":"ngram","prompt_lookup_max":4}"#),
            vec!["prompt_lookup_max"]
        );
        assert_eq!(
            flags_in(&["x".into(), "--a=1".into(), "--b".into()]),
            vec!["--a", "--b"]
        );
    }
}
