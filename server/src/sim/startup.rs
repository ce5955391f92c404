//! What the simulated engine prints and computes while it starts: weights, KV budget, and the
//! engines' own log lines (formats from the engine reference, section 5).

use super::args::SimArgs;
use super::faults::Fault;
use app::domain::engine::EngineKind;
use std::io::Write;

/// The model facts the simulator needs, read from the model's `config.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFacts {
    pub architecture: String,
    pub hidden: u64,
    pub intermediate: u64,
    pub vocab: u64,
    pub layers: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    pub params: u64,
    pub max_position: u64,
}

/// Reads `config.json` of a model directory; `Err` carries the line the engine would print.
pub fn read_model(kind: EngineKind, model: &str) -> Result<ModelFacts, String> {
    let path = std::path::Path::new(model).join("config.json");
    let text = std::fs::read_to_string(&path).map_err(|_| match kind {
        EngineKind::Vllm => format!("ValueError: Invalid repository ID or local directory specified: '{model}'. Please verify the following requirements: 1. Provide a valid Hugging Face repository ID. 2. Specify a local directory that contains a recognized configuration file. - For Hugging Face models: ensure the presence of a 'config.json'."),
        EngineKind::Sglang => format!("OSError: {model} does not appear to have a file named config.json."),
    })?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("ValueError: config.json in {model} is not valid JSON: {e}"))?;
    let num = |k: &str| v.get(k).and_then(|x| x.as_u64());
    let hidden = num("hidden_size").unwrap_or(4096);
    let heads = num("num_attention_heads").unwrap_or(32).max(1);
    let kv_heads = num("num_key_value_heads").unwrap_or(heads).max(1);
    let head_dim = num("head_dim").unwrap_or(hidden / heads).max(1);
    let layers = num("num_hidden_layers").unwrap_or(32).max(1);
    let inter = num("intermediate_size").unwrap_or(hidden * 4);
    let vocab = num("vocab_size").unwrap_or(32000);
    let tied = v.get("tie_word_embeddings").and_then(|x| x.as_bool()).unwrap_or(false);
    let attn = hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden;
    let mlp = 3 * hidden * inter;
    let params = layers * (attn + mlp) + vocab * hidden * if tied { 1 } else { 2 };
    let architecture = v
        .get("architectures")
        .and_then(|a| a.get(0))
        .and_then(|a| a.as_str())
        .unwrap_or("LlamaForCausalLM")
        .to_string();
    Ok(ModelFacts {
        architecture,
        hidden,
        intermediate: inter,
        vocab,
        layers,
        kv_heads,
        head_dim,
        params,
        max_position: num("max_position_embeddings").unwrap_or(32768),
    })
}

const GIB: f64 = (1u64 << 30) as f64;

/// The KV budget, computed the way the engines do at startup (see DESIGN.md): vLLM V1
/// measures a profile run (a forward pass over `max_num_batched_tokens`, then a sampler pass
/// over `max_num_seqs` rows of logits), adds non-torch memory (CUDA context, NCCL under TP)
/// and, from 0.14, its CUDA graphs' estimate, and gives the rest of `utilisation × total` to
/// the KV cache; SGLang gives `mem-fraction-static × total` minus what is already in use.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub gpu_gib: f64,
    pub weights_gib: f64,
    /// vLLM's "torch peak memory increase" of the profile run.
    pub activation_gib: f64,
    pub non_torch_gib: f64,
    pub graphs_gib: f64,
    pub kv_gib: f64,
    pub kv_bytes_per_token: u64,
    pub kv_tokens: u64,
    pub max_model_len: u64,
    pub max_running: u32,
    pub max_batched_tokens: u32,
}

/// vLLM's API-server defaults: 8192 batched tokens and 1024 sequences on cards of 70 GiB and
/// more, 2048 and 256 below; SGLang's 256 running requests and 8192-token chunks.
pub fn limits(args: &SimArgs, gpu_gib: f64) -> (u32, u32) {
    let large = args.kind == EngineKind::Vllm && gpu_gib >= 70.0;
    (
        args.max_running.unwrap_or(if large { 1024 } else { 256 }),
        args.max_batched_tokens
            .unwrap_or(if large || args.kind == EngineKind::Sglang {
                8192
            } else {
                2048
            }),
    )
}

pub fn budget(args: &SimArgs, m: &ModelFacts, gpu_gib: f64) -> Budget {
    // Bytes per weight: bf16 unless the operator tells the simulator otherwise (fp8 builds: 1).
    let weight_bytes: f64 = std::env::var("ROOFLINE_SIM_WEIGHT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let tp = args.tp.max(1) as f64;
    let weights_gib = m.params as f64 * weight_bytes / GIB / tp;
    let (max_running, max_batched_tokens) = limits(args, gpu_gib);
    let (activation_gib, non_torch_gib, graphs_gib, mut kv_gib) = match args.kind {
        EngineKind::Vllm => {
            // The forward pass: gate/up and activation output of the MLP (split by TP) and
            // three hidden-state buffers, in bf16, for every batched token.
            let forward = max_batched_tokens as f64 * (3.0 * m.intermediate as f64 / tp + 3.0 * m.hidden as f64) * 2.0;
            // The sampler: full-vocabulary logits for every sequence slot, as bf16, fp32,
            // log-softmax, top-p sort (values and int64 indices), softmax, cumsum, scatter and
            // probabilities at once (38 bytes per logit), on top of the batch's hidden states.
            let sampler = max_running.min(max_batched_tokens) as f64 * m.vocab as f64 * 38.0
                + max_batched_tokens as f64 * m.hidden as f64 * 2.0;
            let activation = forward.max(sampler) / GIB;
            let non_torch = if args.tp > 1 {
                0.55 + 0.1 * (tp / 2.0).log2()
            } else {
                0.14
            };
            let graphs = if args.enforce_eager { 0.0 } else { 0.45 };
            let kv = gpu_gib * args.mem_fraction - weights_gib - activation - non_torch - graphs;
            (activation, non_torch, graphs, kv)
        }
        EngineKind::Sglang => {
            let context = if args.tp > 1 { 1.0 } else { 0.5 };
            (0.0, context, 0.0, gpu_gib * args.mem_fraction - weights_gib - context)
        }
    };
    if args.faults.contains(&Fault::KvTooSmall) {
        kv_gib = kv_gib.min(0.05);
    }
    let dtype_bytes = if args.kv_cache_dtype.starts_with("fp8") { 1 } else { 2 };
    let heads = (m.kv_heads / args.tp as u64).max(1);
    let kv_bytes_per_token = 2 * heads * m.head_dim * dtype_bytes * m.layers;
    let block = args.block_size.max(1) as u64;
    let kv_tokens = if kv_gib > 0.0 {
        ((kv_gib * GIB) as u64 / kv_bytes_per_token) / block * block
    } else {
        0
    };
    let max_model_len = args.max_model_len.map(u64::from).unwrap_or(m.max_position);
    Budget {
        gpu_gib,
        weights_gib,
        activation_gib,
        non_torch_gib,
        graphs_gib,
        kv_gib,
        kv_bytes_per_token,
        kv_tokens,
        max_model_len,
        max_running,
        max_batched_tokens,
    }
}

/// Writes engine-formatted log lines to stdout (which engine control sends to the log file).
pub struct Logger {
    kind: EngineKind,
    pid: u32,
}

impl Logger {
    pub fn new(kind: EngineKind) -> Self {
        Self {
            kind,
            pid: std::process::id(),
        }
    }

    fn stamp(&self) -> String {
        let now = time::OffsetDateTime::now_utc();
        match self.kind {
            EngineKind::Vllm => format!(
                "{:02}-{:02} {:02}:{:02}:{:02}",
                now.month() as u8,
                now.day(),
                now.hour(),
                now.minute(),
                now.second()
            ),
            EngineKind::Sglang => format!(
                "{}-{:02}-{:02} {:02}:{:02}:{:02}",
                now.year(),
                now.month() as u8,
                now.day(),
                now.hour(),
                now.minute(),
                now.second()
            ),
        }
    }

    /// One line as the process `proc` (APIServer, EngineCore_DP0) logs it from `file`.
    pub fn line(&self, proc_name: &str, level: &str, file: &str, msg: &str) {
        let text = match self.kind {
            EngineKind::Vllm => format!("({proc_name} pid={}) {level} {} [{file}] {msg}", self.pid, self.stamp()),
            EngineKind::Sglang => {
                let tag = if proc_name.is_empty() {
                    String::new()
                } else {
                    format!(" {proc_name}")
                };
                format!("[{}{tag}] {msg}", self.stamp())
            }
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    /// A raw line (tracebacks, progress bars).
    pub fn raw(&self, msg: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{msg}");
        let _ = out.flush();
    }

    pub fn vllm(&self, proc_name: &str, file: &str, msg: &str) {
        self.line(proc_name, "INFO", file, msg);
    }

    pub fn sglang(&self, msg: &str) {
        self.line("TP0", "", "", msg);
    }
}

/// Formats a token count with thousands separators, as vLLM prints it.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(425424), "425,424");
        assert_eq!(thousands(65536), "65,536");
        assert_eq!(thousands(12), "12");
    }
}
