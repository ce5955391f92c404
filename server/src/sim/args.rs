//! The engines' command lines, as the simulator accepts them: the same flag names, the same
//! `--help` formats (vLLM's grouped `--help=all`, SGLang's flat argparse help) and the same
//! argparse errors for unknown flags, so engine control and `roofline flags` treat the
//! simulator exactly like a real installation.

use super::faults::Fault;
use app::domain::engine::EngineKind;

/// Version strings the simulator reports (the versions the engine reference was checked on).
pub const VLLM_VERSION: &str = "0.33.0";
pub const SGLANG_VERSION: &str = "0.5.23";

/// A flag the simulator knows: names, metavar (`None` for booleans), default, group, help.
struct FlagDef {
    names: &'static [&'static str],
    metavar: Option<&'static str>,
    default: &'static str,
    group: &'static str,
    help: &'static str,
}

macro_rules! f {
    ($names:expr, $meta:expr, $def:expr, $group:expr, $help:expr) => {
        FlagDef {
            names: $names,
            metavar: $meta,
            default: $def,
            group: $group,
            help: $help,
        }
    };
}

const VLLM_FLAGS: &[FlagDef] = &[
    f!(&["--model"], Some("MODEL"), "Qwen/Qwen3-0.6B", "ModelConfig", "Name or path of the Hugging Face model to use. Deprecated for serve: pass the model as the positional argument."),
    f!(&["--served-model-name"], Some("SERVED_MODEL_NAME [SERVED_MODEL_NAME ...]"), "None", "ModelConfig", "The model name(s) used in the API."),
    f!(&["--max-model-len"], Some("MAX_MODEL_LEN"), "None", "ModelConfig", "Model context length (prompt and output). If unspecified, will be automatically derived from the model config."),
    f!(&["--dtype"], Some("{auto,bfloat16,float,float16,float32,half}"), "auto", "ModelConfig", "Data type for model weights and activations."),
    f!(&["--quantization", "-q"], Some("QUANTIZATION"), "None", "ModelConfig", "Method used to quantize the weights."),
    f!(&["--enforce-eager", "--no-enforce-eager"], None, "False", "ModelConfig", "Whether to always use eager-mode PyTorch."),
    f!(&["--trust-remote-code", "--no-trust-remote-code"], None, "False", "ModelConfig", "Trust remote code (e.g., from HuggingFace) when downloading the model and tokenizer."),
    f!(&["--tokenizer"], Some("TOKENIZER"), "None", "ModelConfig", "Name or path of the Hugging Face tokenizer to use."),
    f!(&["--generation-config"], Some("GENERATION_CONFIG"), "auto", "ModelConfig", "The folder path to the generation config."),
    f!(&["--tensor-parallel-size", "-tp"], Some("TENSOR_PARALLEL_SIZE"), "1", "ParallelConfig", "Number of tensor parallel groups."),
    f!(&["--pipeline-parallel-size", "-pp"], Some("PIPELINE_PARALLEL_SIZE"), "1", "ParallelConfig", "Number of pipeline parallel groups."),
    f!(&["--data-parallel-size", "-dp"], Some("DATA_PARALLEL_SIZE"), "1", "ParallelConfig", "Number of data parallel groups."),
    f!(&["--gpu-memory-utilization"], Some("GPU_MEMORY_UTILIZATION"), "0.92", "CacheConfig", "The fraction of GPU memory to be used for the model executor."),
    f!(&["--kv-cache-dtype"], Some("{auto,bfloat16,fp8,fp8_ds_mla,fp8_e4m3,fp8_e5m2,fp8_inc}"), "auto", "CacheConfig", "Data type for kv cache storage."),
    f!(&["--block-size"], Some("{1,8,16,32,64,128,256}"), "None", "CacheConfig", "Size of a contiguous cache block in number of tokens."),
    f!(&["--enable-prefix-caching", "--no-enable-prefix-caching"], None, "None", "CacheConfig", "Whether to enable prefix caching."),
    f!(&["--kv-cache-metrics", "--no-kv-cache-metrics"], None, "False", "CacheConfig", "Enable KV cache residency metrics."),
    f!(&["--max-num-seqs"], Some("MAX_NUM_SEQS"), "None", "SchedulerConfig", "Maximum number of sequences to be processed in a single iteration."),
    f!(&["--max-num-batched-tokens"], Some("MAX_NUM_BATCHED_TOKENS"), "None", "SchedulerConfig", "Maximum number of tokens to be processed in a single iteration."),
    f!(&["--enable-chunked-prefill", "--no-enable-chunked-prefill"], None, "None", "SchedulerConfig", "If True, prefill requests can be chunked based on the remaining max_num_batched_tokens."),
    f!(&["--speculative-config", "-sc"], Some("SPECULATIVE_CONFIG"), "None", "VllmConfig", "Speculative decoding configuration."),
    f!(&["--host"], Some("HOST"), "None", "Frontend", "Host name."),
    f!(&["--port"], Some("PORT"), "8000", "Frontend", "Port number."),
    f!(&["--api-key"], Some("API_KEY [API_KEY ...]"), "None", "Frontend", "If provided, the server will require one of these keys to be presented in the header."),
    f!(&["--enable-auto-tool-choice", "--no-enable-auto-tool-choice"], None, "False", "Frontend", "Enable auto tool choice for supported models. Use --tool-call-parser to specify which parser to use."),
    f!(&["--tool-call-parser"], Some("TOOL_CALL_PARSER"), "None", "Frontend", "Select the tool call parser depending on the model that you're using."),
    f!(&["--reasoning-parser"], Some("REASONING_PARSER"), "None", "StructuredOutputsConfig", "Select the reasoning parser depending on the model that you're using."),
    f!(&["--chat-template"], Some("CHAT_TEMPLATE"), "None", "Frontend", "The file path to the chat template, or the template in single-line form for the specified model."),
    f!(&["--disable-log-stats", "--no-disable-log-stats"], None, "False", "EngineArgs", "Disable logging statistics."),
    f!(&["--show-hidden-metrics-for-version"], Some("SHOW_HIDDEN_METRICS_FOR_VERSION"), "None", "ObservabilityConfig", "Enable deprecated Prometheus metrics that have been hidden since the specified version."),
    f!(&["--sim-fault"], Some("FAULT"), "None", "Roofline simulator", "Roofline simulator only: inject a fault (repeatable)."),
    f!(&["--sim-startup-delay"], Some("SECONDS"), "2", "Roofline simulator", "Roofline simulator only: seconds the simulated startup takes."),
];

const SGLANG_FLAGS: &[FlagDef] = &[
    f!(&["--model-path", "--model"], Some("MODEL_PATH"), "", "", "The path of the model weights. This can be a local folder or a Hugging Face repo ID."),
    f!(&["--served-model-name"], Some("SERVED_MODEL_NAME"), "", "", "Override the model name returned by the v1/models endpoint in OpenAI API server."),
    f!(&["--tp-size", "--tensor-parallel-size"], Some("TP_SIZE"), "", "", "The tensor parallelism size."),
    f!(&["--dp-size", "--data-parallel-size"], Some("DP_SIZE"), "", "", "The data parallelism size."),
    f!(&["--context-length"], Some("CONTEXT_LENGTH"), "", "", "The model's maximum context length. Defaults to None (will use the value from the model's config.json instead)."),
    f!(&["--mem-fraction-static"], Some("MEM_FRACTION_STATIC"), "", "", "The fraction of the memory used for static allocation (model weights and KV cache memory pool)."),
    f!(&["--dtype"], Some("{auto,half,float16,bfloat16,float,float32}"), "", "", "Data type for model weights and activations."),
    f!(&["--quantization"], Some("{awq,fp8,gptq,marlin,gptq_marlin,awq_marlin,bitsandbytes,gguf,modelopt,w8a8_int8,w8a8_fp8}"), "", "", "The quantization method."),
    f!(&["--kv-cache-dtype"], Some("{auto,fp8_e5m2,fp8_e4m3,bf16,bfloat16,fp4_e2m1}"), "", "", "Data type for kv cache storage."),
    f!(&["--max-running-requests"], Some("MAX_RUNNING_REQUESTS"), "", "", "The maximum number of running requests."),
    f!(&["--chunked-prefill-size"], Some("CHUNKED_PREFILL_SIZE"), "", "", "The maximum number of tokens in a chunk for the chunked prefill. Setting this to -1 means disabling chunked prefill."),
    f!(&["--max-prefill-tokens"], Some("MAX_PREFILL_TOKENS"), "", "", "The maximum number of tokens in a prefill batch."),
    f!(&["--tool-call-parser"], Some("TOOL_CALL_PARSER"), "", "", "Specify the parser for handling tool-call interactions."),
    f!(&["--reasoning-parser"], Some("REASONING_PARSER"), "", "", "Specify the parser for reasoning models."),
    f!(&["--speculative-algorithm"], Some("{EAGLE,EAGLE3,NEXTN,STANDALONE,NGRAM}"), "", "", "Speculative algorithm."),
    f!(&["--speculative-draft-model-path", "--speculative-draft-model"], Some("SPECULATIVE_DRAFT_MODEL_PATH"), "", "", "The path of the draft model weights."),
    f!(&["--speculative-num-steps"], Some("SPECULATIVE_NUM_STEPS"), "", "", "The number of steps sampled from draft model in Speculative Decoding."),
    f!(&["--speculative-eagle-topk"], Some("SPECULATIVE_EAGLE_TOPK"), "", "", "The number of tokens sampled from the draft model in eagle2 each step."),
    f!(&["--speculative-num-draft-tokens"], Some("SPECULATIVE_NUM_DRAFT_TOKENS"), "", "", "The number of tokens sampled from the draft model in Speculative Decoding."),
    f!(&["--host"], Some("HOST"), "", "", "The host of the HTTP server."),
    f!(&["--port"], Some("PORT"), "", "", "The port of the HTTP server."),
    f!(&["--api-key"], Some("API_KEY"), "", "", "Set API key of the server."),
    f!(&["--enable-metrics"], None, "", "", "Enable log prometheus metrics."),
    f!(&["--trust-remote-code"], None, "", "", "Whether or not to allow for custom models defined on the Hub in their own modeling files."),
    f!(&["--disable-radix-cache"], None, "", "", "Disable RadixAttention for prefix caching."),
    f!(&["--chat-template"], Some("CHAT_TEMPLATE"), "", "", "The buliltin chat template name or the path of the chat template file."),
    f!(&["--disable-cuda-graph"], None, "", "", "Deprecated. Use --cuda-graph-backend-decode disabled --cuda-graph-backend-prefill disabled."),
    f!(&["--sim-fault"], Some("FAULT"), "", "", "Roofline simulator only: inject a fault (repeatable)."),
    f!(&["--sim-startup-delay"], Some("SECONDS"), "", "", "Roofline simulator only: seconds the simulated startup takes."),
];

/// The simulator's launch settings, from the engine's flags.
#[derive(Clone, Debug, PartialEq)]
pub struct SimArgs {
    pub kind: EngineKind,
    pub model: String,
    pub served_model_name: Option<String>,
    pub tp: u32,
    pub max_model_len: Option<u32>,
    pub mem_fraction: f64,
    pub max_running: u32,
    pub max_batched_tokens: u32,
    pub kv_cache_dtype: String,
    pub tool_call_parser: Option<String>,
    pub auto_tool_choice: bool,
    pub host: String,
    pub port: u16,
    pub metrics_enabled: bool,
    pub prefix_caching: bool,
    pub faults: Vec<Fault>,
    pub startup_delay_s: f64,
}

impl SimArgs {
    pub fn model_name(&self) -> &str {
        self.served_model_name.as_deref().unwrap_or(&self.model)
    }
}

/// What the command line asked for.
#[derive(Debug, PartialEq)]
pub enum Invocation {
    Serve(Box<SimArgs>),
    Help(String),
    Version(String),
}

/// An argparse-style usage error: the message and the exit code 2.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn defs(kind: EngineKind) -> &'static [FlagDef] {
    match kind {
        EngineKind::Vllm => VLLM_FLAGS,
        EngineKind::Sglang => SGLANG_FLAGS,
    }
}

fn prog(kind: EngineKind) -> &'static str {
    match kind {
        EngineKind::Vllm => "vllm serve",
        EngineKind::Sglang => "launch_server.py",
    }
}

/// The help text in the engine's own format.
pub fn help_text(kind: EngineKind) -> String {
    let mut out = String::new();
    match kind {
        EngineKind::Vllm => {
            out.push_str("usage: vllm serve [model_tag] [options]\n\nStart the vLLM OpenAI Compatible API server.\n\npositional arguments:\n  model_tag             The model tag to serve (optional if specified in config) (default: None)\n\noptions:\n  -h, --help            show this help message and exit\n");
            let mut group = "";
            for d in VLLM_FLAGS {
                if d.group != group {
                    group = d.group;
                    out.push_str(&format!("\n{group}:\n  Configuration for {group}.\n\n"));
                }
                let spec = d.names.iter().map(|n| match d.metavar {
                    Some(m) if n.starts_with("--") || n.starts_with('-') => format!("{n} {m}"),
                    _ => n.to_string(),
                });
                out.push_str(&format!(
                    "  {}\n                        {} (default: {})\n",
                    spec.collect::<Vec<_>>().join(", "),
                    d.help,
                    d.default
                ));
            }
        }
        EngineKind::Sglang => {
            out.push_str("usage: sglang serve [-h] --model-path MODEL_PATH [options]\n\noptions:\n  -h, --help            show this help message and exit\n");
            for d in SGLANG_FLAGS {
                let spec = d.names.iter().map(|n| match d.metavar {
                    Some(m) => format!("{n} {m}"),
                    None => n.to_string(),
                });
                out.push_str(&format!(
                    "  {}\n                        {}\n",
                    spec.collect::<Vec<_>>().join(", "),
                    d.help
                ));
            }
        }
    }
    out
}

fn find(kind: EngineKind, name: &str) -> Option<&'static FlagDef> {
    let want = name.replace('_', "-");
    defs(kind).iter().find(|d| d.names.iter().any(|n| *n == want))
}

/// Parses `sim vllm serve MODEL …` (after `serve`) or `sim sglang …`.
pub fn parse(kind: EngineKind, args: &[String]) -> Result<Invocation, UsageError> {
    let mut args: Vec<String> = args.to_vec();
    if kind == EngineKind::Vllm {
        if args.first().map(String::as_str) == Some("--version") {
            return Ok(Invocation::Version(VLLM_VERSION.into()));
        }
        if args.first().map(String::as_str) != Some("serve") {
            return Err(UsageError("usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\nvllm: error: the simulator only implements `vllm serve`".into()));
        }
        args.remove(0);
    } else if args.first().map(String::as_str) == Some("--version") {
        return Ok(Invocation::Version(SGLANG_VERSION.into()));
    }
    let mut values: Vec<(&'static FlagDef, String, Option<String>)> = Vec::new();
    let mut positional = Vec::new();
    let mut unknown = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-h" || a == "--help" || a.starts_with("--help=") {
            return Ok(Invocation::Help(help_text(kind)));
        }
        if a.starts_with('-') && a.len() > 1 {
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (a.clone(), None),
            };
            match find(kind, &name) {
                Some(def) if def.metavar.is_none() => values.push((def, name, None)),
                Some(def) => {
                    let v = match inline {
                        Some(v) => v,
                        None => {
                            i += 1;
                            args.get(i).cloned().ok_or_else(|| {
                                UsageError(format!(
                                    "{}: error: argument {}: expected one argument",
                                    prog(kind),
                                    def.names.join("/")
                                ))
                            })?
                        }
                    };
                    values.push((def, name, Some(v)));
                }
                None => unknown.push(a.clone()),
            }
        } else {
            positional.push(a.clone());
        }
        i += 1;
    }
    if !unknown.is_empty() {
        return Err(UsageError(format!(
            "usage: {} [options]\n{}: error: unrecognized arguments: {}",
            prog(kind),
            prog(kind),
            unknown.join(" ")
        )));
    }
    let get = |flag: &str| -> Option<(String, Option<String>)> {
        values
            .iter()
            .rev()
            .find(|(d, _, _)| d.names[0] == flag)
            .map(|(_, n, v)| (n.clone(), v.clone()))
    };
    let num = |flag: &str| -> Result<Option<f64>, UsageError> {
        match get(flag) {
            Some((n, Some(v))) => v
                .parse::<f64>()
                .map(Some)
                .map_err(|_| UsageError(format!("{}: error: argument {n}: invalid value: '{v}'", prog(kind)))),
            _ => Ok(None),
        }
    };
    let text = |flag: &str| get(flag).and_then(|(_, v)| v);
    let flag_on = |flag: &str| get(flag).is_some_and(|(n, _)| !n.starts_with("--no-"));
    let model = match kind {
        EngineKind::Vllm => positional.first().cloned().or_else(|| text("--model")),
        EngineKind::Sglang => text("--model-path"),
    }
    .ok_or_else(|| {
        UsageError(format!(
            "{}: error: the following arguments are required: {}",
            prog(kind),
            if kind == EngineKind::Vllm {
                "model_tag"
            } else {
                "--model-path"
            }
        ))
    })?;
    if kind == EngineKind::Sglang && !positional.is_empty() {
        return Err(UsageError(format!(
            "{}: error: unrecognized arguments: {}",
            prog(kind),
            positional.join(" ")
        )));
    }
    let mut faults = Vec::new();
    for (d, _, v) in &values {
        if d.names[0] == "--sim-fault" {
            let v = v.clone().unwrap_or_default();
            faults.push(
                v.parse::<Fault>()
                    .map_err(|e| UsageError(format!("{}: error: argument --sim-fault: {e}", prog(kind))))?,
            );
        }
    }
    if let Ok(env) = std::env::var("ROOFLINE_SIM_FAULT") {
        for name in env.split(',').filter(|s| !s.trim().is_empty()) {
            faults.push(
                name.trim()
                    .parse::<Fault>()
                    .map_err(|e| UsageError(format!("ROOFLINE_SIM_FAULT: {e}")))?,
            );
        }
    }
    let startup_delay_s = match num("--sim-startup-delay")? {
        Some(v) => v,
        None => std::env::var("ROOFLINE_SIM_STARTUP_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2.0),
    };
    let (tp_flag, len_flag, mem_flag, running_flag, batch_flag) = match kind {
        EngineKind::Vllm => (
            "--tensor-parallel-size",
            "--max-model-len",
            "--gpu-memory-utilization",
            "--max-num-seqs",
            "--max-num-batched-tokens",
        ),
        EngineKind::Sglang => (
            "--tp-size",
            "--context-length",
            "--mem-fraction-static",
            "--max-running-requests",
            "--chunked-prefill-size",
        ),
    };
    let tp = num(tp_flag)?.unwrap_or(1.0);
    if tp < 1.0 || tp.fract() != 0.0 {
        return Err(UsageError(format!(
            "{}: error: argument {tp_flag}: must be a positive integer",
            prog(kind)
        )));
    }
    let port = num("--port")?.unwrap_or(kind.default_port() as f64);
    if !(1.0..=65535.0).contains(&port) {
        return Err(UsageError(format!(
            "{}: error: argument --port: invalid port",
            prog(kind)
        )));
    }
    let mem_fraction = num(mem_flag)?.unwrap_or(match kind {
        EngineKind::Vllm => 0.92,
        EngineKind::Sglang => 0.88,
    });
    if !(mem_fraction > 0.0 && mem_fraction <= 1.0) {
        return Err(UsageError(format!(
            "{}: error: argument {mem_flag}: must be in (0, 1]",
            prog(kind)
        )));
    }
    Ok(Invocation::Serve(Box::new(SimArgs {
        kind,
        model,
        served_model_name: text("--served-model-name"),
        tp: tp as u32,
        max_model_len: num(len_flag)?.map(|v| v as u32),
        mem_fraction,
        max_running: num(running_flag)?.map(|v| v as u32).unwrap_or(256).max(1),
        max_batched_tokens: num(batch_flag)?.filter(|v| *v > 0.0).map(|v| v as u32).unwrap_or(8192),
        kv_cache_dtype: text("--kv-cache-dtype").unwrap_or_else(|| "auto".into()),
        tool_call_parser: text("--tool-call-parser"),
        auto_tool_choice: match kind {
            EngineKind::Vllm => flag_on("--enable-auto-tool-choice"),
            EngineKind::Sglang => text("--tool-call-parser").is_some(),
        },
        host: text("--host").unwrap_or_else(|| match kind {
            EngineKind::Vllm => "0.0.0.0".into(),
            EngineKind::Sglang => "127.0.0.1".into(),
        }),
        port: port as u16,
        metrics_enabled: match kind {
            EngineKind::Vllm => !flag_on("--disable-log-stats"),
            EngineKind::Sglang => flag_on("--enable-metrics"),
        },
        prefix_caching: match kind {
            EngineKind::Vllm => get("--enable-prefix-caching").is_none_or(|(n, _)| !n.starts_with("--no-")),
            EngineKind::Sglang => !flag_on("--disable-radix-cache"),
        },
        faults,
        startup_delay_s,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::help_flags::parse_help;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn vllm_command_line() {
        let Invocation::Serve(a) = parse(
            EngineKind::Vllm,
            &s(&[
                "serve",
                "/models/m",
                "--served-model-name",
                "m",
                "-tp",
                "2",
                "--max-model-len=4096",
                "--enable-auto-tool-choice",
                "--tool-call-parser",
                "hermes",
                "--port",
                "8100",
            ]),
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.model.as_str(), a.tp, a.max_model_len, a.port, a.auto_tool_choice),
            ("/models/m", 2, Some(4096), 8100, true)
        );
        assert_eq!(a.model_name(), "m");
        let err = parse(EngineKind::Vllm, &s(&["serve", "/m", "--max-model-length", "5"])).unwrap_err();
        assert!(
            err.0.ends_with("error: unrecognized arguments: --max-model-length 5")
                || err.0.contains("unrecognized arguments: --max-model-length")
        );
        assert_eq!(
            parse(EngineKind::Vllm, &s(&["--version"])).unwrap(),
            Invocation::Version(VLLM_VERSION.into())
        );
    }

    #[test]
    fn sglang_command_line() {
        let Invocation::Serve(a) = parse(
            EngineKind::Sglang,
            &s(&[
                "--model-path",
                "/models/m",
                "--tp-size",
                "1",
                "--enable-metrics",
                "--tool-call-parser",
                "qwen25",
            ]),
        )
        .unwrap() else {
            panic!()
        };
        assert!(a.metrics_enabled && a.auto_tool_choice);
        assert_eq!(a.port, 30000);
        assert!(parse(EngineKind::Sglang, &s(&["--tp-size", "1"]))
            .unwrap_err()
            .0
            .contains("--model-path"));
    }

    #[test]
    fn own_help_parses_with_the_console_parser() {
        for kind in [EngineKind::Vllm, EngineKind::Sglang] {
            let set = parse_help(&help_text(kind));
            assert!(set.find("--tool-call-parser").is_some(), "{kind:?}");
            assert!(set.find("--port").is_some());
        }
        let v = parse_help(&help_text(EngineKind::Vllm));
        assert_eq!(v.find("-tp").unwrap().group.as_deref(), Some("ParallelConfig"));
        assert!(
            parse_help(&help_text(EngineKind::Sglang))
                .find("--disable-cuda-graph")
                .unwrap()
                .deprecated
        );
    }
}
