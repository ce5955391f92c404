//! The VRAM calculator: will a model fit on these GPUs at this context, how many tokens of KV
//! cache will the engine get, and how many requests of that length can run at once. The same
//! code runs in `roofline vram` and in the browser as the operator types.
//!
//! The method follows vLLM V1 (see DESIGN): usable memory per GPU = utilisation × total −
//! weights per GPU − peak activations − non-torch memory (CUDA context, NCCL, CUDA graphs);
//! KV bytes per token per layer = 2 × max(1, kv_heads / TP) × head_dim × dtype bytes (KV heads
//! are replicated, not split, when TP exceeds them); MLA stores one latent of
//! (kv_lora_rank + qk_rope_head_dim) per layer, not split by TP; sliding-window layers hold at
//! most `window` tokens per request. Capacity is counted in 16-token blocks.

use serde::{Deserialize, Serialize};

const GIB: f64 = (1u64 << 30) as f64;
/// vLLM's KV block size.
pub const BLOCK: u64 = 16;

/// Why a config.json or safetensors header could not be used, naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize, crate::decode::FromWire)]
pub enum VramError {
    #[error("config.json is not JSON: {0}")]
    Json(String),
    #[error("config.json: `{0}` is missing or not a positive integer")]
    Field(String),
    #[error("safetensors header: {0}")]
    Safetensors(String),
    #[error("{field}: {detail}")]
    Input { field: String, detail: String },
    #[error("config.json: `{field}` = {value} is not a plausible model dimension (at most {max})")]
    Implausible { field: String, value: String, max: u64 },
}

/// The facts of a model's config.json that the calculation needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct ModelShape {
    pub architecture: String,
    pub layers: u64,
    pub hidden: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    pub intermediate: u64,
    pub vocab: u64,
    pub max_position: u64,
    /// Bytes per weight/KV element of the model's dtype (bf16/fp16 2, fp32 4).
    pub dtype_bytes: u64,
    /// MLA: (kv_lora_rank, qk_rope_head_dim).
    pub mla: Option<(u64, u64)>,
    /// Sliding-window attention: the window and how many layers use it (the rest are full).
    pub sliding: Option<(u64, u64)>,
    pub experts: Option<u64>,
    /// Weight quantization named in the config (`fp8`, `awq`, `gptq`, …).
    pub quantization: Option<String>,
    /// MoE: the experts' intermediate size and how many experts each token visits (the fused
    /// MoE kernel's scratch grows with both).
    #[serde(default)]
    pub moe_intermediate: Option<u64>,
    #[serde(default)]
    pub experts_per_token: Option<u64>,
}

fn uint(v: &serde_json::Value, key: &str) -> Option<u64> {
    v.get(key).and_then(|x| x.as_u64()).filter(|n| *n > 0)
}

/// The largest value each config.json field may take: far above any real model, low enough
/// that every product the calculator forms fits in 64 bits. A config.json is untrusted input;
/// a value beyond these is refused with the field named, not multiplied.
const FIELD_MAX: &[(&str, u64)] = &[
    ("num_hidden_layers", 1 << 12),
    ("hidden_size", 1 << 18),
    ("num_attention_heads", 1 << 14),
    ("num_key_value_heads", 1 << 14),
    ("head_dim", 1 << 14),
    ("intermediate_size", 1 << 21),
    ("vocab_size", 1 << 23),
    ("max_position_embeddings", 1 << 27),
    ("sliding_window", 1 << 27),
    ("kv_lora_rank", 1 << 16),
    ("qk_rope_head_dim", 1 << 14),
    ("num_experts", 1 << 14),
    ("num_local_experts", 1 << 14),
    ("n_routed_experts", 1 << 14),
    ("moe_intermediate_size", 1 << 21),
    ("num_experts_per_tok", 1 << 14),
];

/// Checks every bounded field of a config object before anything reads it.
fn check_bounds(v: &serde_json::Value) -> Result<(), VramError> {
    for (field, max) in FIELD_MAX {
        if let Some(x) = v.get(*field) {
            let ok = x.as_u64().is_some_and(|n| n <= *max)
                || x.is_null()
                || (x.as_f64().is_some_and(|f| f >= 0.0 && f <= *max as f64));
            if !ok {
                return Err(VramError::Implausible {
                    field: (*field).to_string(),
                    value: x.to_string().chars().take(40).collect(),
                    max: *max,
                });
            }
        }
    }
    Ok(())
}

/// Reads a config.json (multimodal configs nest the language model in `text_config`).
pub fn parse_config(text: &str) -> Result<ModelShape, VramError> {
    let root: serde_json::Value = serde_json::from_str(text).map_err(|e| VramError::Json(e.to_string()))?;
    let v = root.get("text_config").filter(|t| t.is_object()).unwrap_or(&root);
    check_bounds(v)?;
    let need = |k: &str| uint(v, k).ok_or_else(|| VramError::Field(k.to_string()));
    let layers = need("num_hidden_layers")?;
    let hidden = need("hidden_size")?;
    let heads = need("num_attention_heads")?;
    let kv_heads = uint(v, "num_key_value_heads").unwrap_or(heads);
    let head_dim = uint(v, "head_dim").unwrap_or(hidden / heads);
    let dtype = v
        .get("torch_dtype")
        .or_else(|| v.get("dtype"))
        .or_else(|| root.get("torch_dtype"))
        .and_then(|d| d.as_str())
        .unwrap_or("bfloat16");
    let dtype_bytes = match dtype {
        "float32" => 4,
        _ => 2,
    };
    let mla = match (uint(v, "kv_lora_rank"), uint(v, "qk_rope_head_dim")) {
        (Some(r), Some(p)) => Some((r, p)),
        _ => None,
    };
    // Sliding windows: all layers (Mistral v0.1), every other layer (Gemma 2), or the layers
    // `layer_types` names (Gemma 3, gpt-oss).
    let use_sliding = v.get("use_sliding_window").and_then(|b| b.as_bool()).unwrap_or(true);
    let sliding = match uint(v, "sliding_window").filter(|_| use_sliding) {
        None => None,
        Some(w) => {
            let swa_layers = if let Some(types) = v.get("layer_types").and_then(|t| t.as_array()) {
                types.iter().filter(|t| t.as_str() == Some("sliding_attention")).count() as u64
            } else if let Some(p) = uint(v, "sliding_window_pattern") {
                layers - layers / p
            } else if v.get("model_type").and_then(|m| m.as_str()) == Some("gemma2") {
                layers / 2
            } else if let Some(max_window_layers) = uint(v, "max_window_layers") {
                // Qwen2: layers at or above max_window_layers use the window.
                layers.saturating_sub(max_window_layers)
            } else {
                layers
            };
            (w < uint(v, "max_position_embeddings").unwrap_or(u64::MAX) && swa_layers > 0).then_some((w, swa_layers))
        }
    };
    let quantization = root
        .get("quantization_config")
        .and_then(|q| q.get("quant_method"))
        .and_then(|m| m.as_str())
        .map(str::to_string);
    Ok(ModelShape {
        architecture: v
            .get("architectures")
            .or_else(|| root.get("architectures"))
            .and_then(|a| a.get(0))
            .and_then(|a| a.as_str())
            .unwrap_or("unknown")
            .to_string(),
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate: uint(v, "intermediate_size").unwrap_or(4 * hidden),
        vocab: uint(v, "vocab_size").unwrap_or(32000),
        max_position: uint(v, "max_position_embeddings").unwrap_or(4096),
        dtype_bytes,
        mla,
        sliding,
        experts: uint(v, "num_experts")
            .or_else(|| uint(v, "num_local_experts"))
            .or_else(|| uint(v, "n_routed_experts")),
        quantization,
        moe_intermediate: uint(v, "moe_intermediate_size"),
        experts_per_token: uint(v, "num_experts_per_tok"),
    })
}

/// Bytes of tensor data a safetensors header describes (the JSON after the 8-byte length).
/// Offsets are checked: a header is untrusted input.
pub fn safetensors_bytes(header_json: &str) -> Result<u64, VramError> {
    super::modelcheck::safetensors_extent(header_json)
        .map(|e| e.tensor_bytes)
        .map_err(|e| VramError::Safetensors(e.0))
}

/// `total_size` from a `model.safetensors.index.json`.
pub fn index_total_size(index_json: &str) -> Result<u64, VramError> {
    let v: serde_json::Value =
        serde_json::from_str(index_json).map_err(|e| VramError::Safetensors(format!("index: {e}")))?;
    v.pointer("/metadata/total_size")
        .and_then(|t| t.as_u64().or_else(|| t.as_f64().map(|f| f as u64)))
        .ok_or_else(|| VramError::Safetensors("index: metadata.total_size missing".into()))
}

/// KV cache element type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum KvDtype {
    #[default]
    Auto,
    Fp8,
}

/// Which engine serves the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum EngineFamily {
    #[default]
    Vllm,
    Sglang,
}

/// How the engine is set up: what decides its own memory arithmetic. Everything is optional;
/// an input left out is taken at the engine's default for its version and GPU, and the answer's
/// range says how far the unknowns can move it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(default)]
pub struct EngineSetup {
    pub family: EngineFamily,
    /// The engine's version (`0.11.0`, `v0.6.4`, `0.9.1.dev705+g…`).
    pub version: Option<String>,
    /// vLLM's `VLLM_USE_V1`: forces the engine generation where the version allows both.
    pub v1: Option<bool>,
    pub max_num_batched_tokens: Option<u64>,
    pub max_num_seqs: Option<u64>,
    /// KV block size in tokens (vLLM `--block-size`, default 16).
    pub block_size: Option<u64>,
    pub enforce_eager: bool,
    /// V0 only: chunked prefill on or off (V0 turns it on by itself for contexts over 32k).
    pub chunked_prefill: Option<bool>,
    /// The GPU's name as NVML gives it: vLLM's defaults differ on A100 and on the large cards.
    pub gpu_name: Option<String>,
    /// Layers of a draft model (EAGLE, MTP) that share the KV pool.
    pub draft_layers: u64,
    /// vLLM's `--kv-cache-memory-bytes`: the KV cache per GPU as a size, which replaces the
    /// utilisation's arithmetic for the KV budget (the CPU backend is given its cache so).
    #[serde(default)]
    pub kv_cache_memory_bytes: Option<u64>,
}

/// What the operator asks about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Inputs {
    /// Total weight bytes (safetensors, index total_size, or given).
    pub weights_bytes: u64,
    pub gpu_gib: f64,
    pub tp: u64,
    pub util: f64,
    pub ctx: u64,
    pub kv_dtype: KvDtype,
    pub concurrency: Option<u64>,
    /// Peak activations per GPU, measured (calibration) or given; `None` follows the engine's
    /// profile run.
    pub activation_gib: Option<f64>,
    /// CUDA context and NCCL buffers per GPU, measured or given; `None` estimates them.
    pub non_torch_gib: Option<f64>,
    #[serde(default)]
    pub engine: EngineSetup,
    /// A real start's measurements of this model on this GPU, engine version and TP.
    #[serde(default)]
    pub calibration: Option<Calibration>,
}

impl Inputs {
    pub fn check(&self) -> Result<(), VramError> {
        let bad = |f: &str, d: &str| {
            Err(VramError::Input {
                field: f.into(),
                detail: d.into(),
            })
        };
        if !(self.gpu_gib.is_finite() && self.gpu_gib > 0.0) {
            return bad("--gpu-gib", "must be a positive number of GiB");
        }
        if self.tp == 0 {
            return bad("--tp", "must be a positive integer");
        }
        if !(self.util > 0.0 && self.util <= 1.0) {
            return bad("--util", "must be in (0, 1]");
        }
        if self.ctx == 0 || self.ctx > 1 << 27 {
            return bad("--ctx", "must be a positive number of tokens, at most 134217728");
        }
        if self.tp > 4096 {
            return bad("--tp", "must be at most 4096");
        }
        if self.gpu_gib > 1e6 {
            return bad("--gpu-gib", "must be at most 1000000");
        }
        if self.concurrency.is_some_and(|c| c > 1 << 32) {
            return bad("--concurrency", "must be at most 4294967296");
        }
        if self
            .activation_gib
            .is_some_and(|a| !(a.is_finite() && (0.0..=1e6).contains(&a)))
        {
            return bad("--activation-gib", "must be a number of GiB from 0 to 1000000");
        }
        if self
            .non_torch_gib
            .is_some_and(|a| !(a.is_finite() && (0.0..=1e6).contains(&a)))
        {
            return bad("--non-torch-gib", "must be a number of GiB from 0 to 1000000");
        }
        let e = &self.engine;
        if e.max_num_batched_tokens.is_some_and(|t| t == 0 || t > 1 << 27) {
            return bad(
                "--max-num-batched-tokens",
                "must be a positive number of tokens, at most 134217728",
            );
        }
        if e.max_num_seqs.is_some_and(|t| t == 0 || t > 1 << 20) {
            return bad("--max-num-seqs", "must be a positive integer, at most 1048576");
        }
        if e.block_size.is_some_and(|b| b == 0 || b > 1 << 16) {
            return bad("--block-size", "must be a positive number of tokens, at most 65536");
        }
        if e.draft_layers > 1 << 12 {
            return bad("--draft-layers", "must be at most 4096");
        }
        if e.version.as_ref().is_some_and(|v| v.len() > 64) {
            return bad("--engine-version", "must be at most 64 characters");
        }
        Ok(())
    }
}

impl EngineSetup {
    /// What a launch profile fixes of the engine's arithmetic: the batch and sequence limits,
    /// and from its extra arguments `--enforce-eager` and `--block-size`. The version is the
    /// one the engine reported at its last start, when there was one.
    pub fn of_profile(
        p: &crate::domain::profile::Profile,
        family: EngineFamily,
        version: Option<String>,
        gpu_name: Option<String>,
    ) -> EngineSetup {
        let args = &p.extra_args;
        let value_of = |flag: &str| -> Option<u64> {
            args.iter().enumerate().find_map(|(i, a)| {
                if a == flag {
                    args.get(i + 1).and_then(|v| v.parse().ok())
                } else {
                    a.strip_prefix(flag)
                        .and_then(|rest| rest.strip_prefix('='))
                        .and_then(|v| v.parse().ok())
                }
            })
        };
        EngineSetup {
            family,
            version,
            v1: None,
            max_num_batched_tokens: p.max_batched_tokens.map(u64::from),
            max_num_seqs: p.max_running_requests.map(u64::from),
            block_size: value_of("--block-size"),
            enforce_eager: args.iter().any(|a| a == "--enforce-eager"),
            chunked_prefill: None,
            gpu_name,
            draft_layers: 0,
            kv_cache_memory_bytes: args.iter().enumerate().find_map(|(i, a)| {
                let v = if a == "--kv-cache-memory-bytes" {
                    args.get(i + 1)?.as_str()
                } else {
                    a.strip_prefix("--kv-cache-memory-bytes=")?
                };
                human_readable_int(v)
            }),
        }
    }
}

/// vLLM's `human_readable_int`: `1G` is 2^30 (upper-case suffixes are binary), `1g` is 10^9,
/// `25.6k` is 25,600 (decimals only with decimal suffixes); `None` for anything else.
pub fn human_readable_int(v: &str) -> Option<u64> {
    let v = v.trim();
    if v.len() > 32 {
        return None;
    }
    let (number, suffix) = match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&v[..i], Some(c)),
        _ => (v, None),
    };
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let mult: u64 = match suffix {
        None => return number.parse().ok(),
        Some('k') => 1_000,
        Some('m') => 1_000_000,
        Some('g') => 1_000_000_000,
        Some('t') => 1_000_000_000_000,
        Some('K') => 1 << 10,
        Some('M') => 1 << 20,
        Some('G') => 1 << 30,
        Some('T') => 1 << 40,
        Some(_) => return None,
    };
    if suffix.is_some_and(|c| c.is_ascii_uppercase()) {
        return number.parse::<u64>().ok()?.checked_mul(mult);
    }
    let f: f64 = number.parse().ok()?;
    let n = f * mult as f64;
    (n.is_finite() && n >= 0.0 && n < u64::MAX as f64).then_some(n as u64)
}

/// `major.minor` of a version string (`v0.6.4`, `0.9.1.dev705+g…`, `0.11`); `None` when it
/// does not start with one.
pub fn version_of(v: &str) -> Option<(u32, u32)> {
    let v = v.trim().trim_start_matches(['v', 'V']);
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The vLLM release the calculator assumes when none is given: the current line (V1, CUDA
/// graphs inside the budget). The answer's range covers the older releases.
pub const ASSUMED_VLLM: (u32, u32) = (0, 14);

/// Bytes per logit element at the peak of a sampler pass over `max_num_seqs` rows: the logits
/// in the model dtype (2), their fp32 copy (4), the log-softmax kept for logprobs (4), the
/// top-k/top-p sort (values 4 + int64 indices 8), the softmax of the sorted row (4), its cumsum
/// (4), the scatter back (4) and the final probabilities (4). vLLM's profile run samples with
/// dummy top-p/top-k, so every one of them is live at once.
pub const SAMPLER_BYTES_PER_LOGIT: u64 = 38;

/// One consistent reading of the engine: a version line, its defaults, and what follows.
#[derive(Clone, Debug, PartialEq)]
struct Path {
    family: EngineFamily,
    version: (u32, u32),
    v1: bool,
    profile_tokens: u64,
    seqs: u64,
    graphs_inside: bool,
    non_torch_gib: f64,
}

/// Whether vLLM takes its large-GPU defaults (8192 batched tokens, 1024 sequences for the API
/// server since 0.9): 70 GiB or more and not an A100.
fn large_gpu(i: &Inputs) -> bool {
    i.gpu_gib >= 70.0
        && !i
            .engine
            .gpu_name
            .as_deref()
            .is_some_and(|n| n.to_ascii_lowercase().contains("a100"))
}

/// The engine's memory path for a version, taking every unset input at that version's
/// default (V1 too: the default engine from vLLM 0.8 on, unless `VLLM_USE_V1` says otherwise).
fn path_for(i: &Inputs, version: (u32, u32), large: bool) -> Path {
    let e = &i.engine;
    let v1 = e.v1.unwrap_or(version >= (0, 8));
    if e.family == EngineFamily::Sglang {
        return Path {
            family: EngineFamily::Sglang,
            version,
            v1: false,
            profile_tokens: 0,
            seqs: 0,
            graphs_inside: false,
            non_torch_gib: i.non_torch_gib.unwrap_or(if i.tp > 1 { 1.0 } else { 0.5 }),
        };
    }
    let modern = version >= (0, 9);
    let (tokens, seqs) = if v1 {
        let t = e
            .max_num_batched_tokens
            .unwrap_or(if modern && large { 8192 } else { 2048 });
        (t, e.max_num_seqs.unwrap_or(if modern && large { 1024 } else { 256 }))
    } else {
        // V0 profiles one batch of `max_num_batched_tokens`: the whole context without chunked
        // prefill (at least 2048), 512 with it; it turns chunked prefill on by itself above 32k.
        let chunked = e.chunked_prefill.unwrap_or(i.ctx > 32_768 && version >= (0, 5));
        let t = e
            .max_num_batched_tokens
            .unwrap_or(if chunked { 512 } else { i.ctx.max(2048) });
        (t, e.max_num_seqs.unwrap_or(256))
    };
    // Non-torch memory: the CUDA context and, with TP, NCCL's buffers (measured: 0.13–0.14 GiB
    // at TP 1, 0.54–0.55 at TP 2 on V1; 0.35 on V0 at TP 1).
    let non_torch = i.non_torch_gib.unwrap_or_else(|| {
        let base = if v1 { 0.14 } else { 0.35 };
        if i.tp > 1 {
            base + 0.41 + 0.1 * (i.tp as f64 / 2.0).log2()
        } else {
            base
        }
    });
    Path {
        family: EngineFamily::Vllm,
        version,
        v1,
        profile_tokens: tokens,
        seqs,
        graphs_inside: v1 && version >= (0, 14) && !e.enforce_eager,
        non_torch_gib: non_torch,
    }
}

/// CUDA graphs' memory when the engine counts it inside the budget (0.14 on): the measured
/// graph pools run from nothing to about 1 GiB; the middle is taken, the range shows the rest.
const GRAPHS_GIB: f64 = 0.5;
const GRAPHS_GIB_MAX: f64 = 1.1;

/// Peak activation of the engine's profile run, per GPU, with its parts.
fn activation(m: &ModelShape, i: &Inputs, p: &Path) -> (f64, String) {
    if let Some(a) = i.activation_gib {
        return (a, format!("activation = {a:.2} GiB (measured or given)"));
    }
    if p.family == EngineFamily::Sglang {
        return (
            0.0,
            "activation: SGLang keeps it in the (1 − mem-fraction-static) reserve, outside the KV pool".into(),
        );
    }
    let d = m.dtype_bytes as f64;
    let tp = i.tp as f64;
    let t = p.profile_tokens as f64;
    // The forward pass over the profile batch: the MLP's gate/up output and its activation
    // (3 × intermediate, split by TP; for MoE per visited expert) and three hidden-state
    // buffers (hidden, residual, normed).
    let mlp = match (m.moe_intermediate, m.experts_per_token) {
        (Some(mi), Some(k)) if m.experts.is_some() => 3.0 * mi as f64 * k as f64 / tp,
        _ => 3.0 * m.intermediate as f64 / tp,
    };
    let forward = t * (mlp + 3.0 * m.hidden as f64) * d / GIB;
    // The sampler pass (V1 from 0.8, and V0's profile run): logits over the full vocabulary for
    // every sequence slot, gathered on every rank (not split by TP), on top of the batch's
    // hidden states.
    let sampler_on = !p.v1 || p.version >= (0, 8);
    let sampler = if sampler_on {
        p.seqs as f64 * m.vocab as f64 * SAMPLER_BYTES_PER_LOGIT as f64 / GIB + t * m.hidden as f64 * d / GIB
    } else {
        0.0
    };
    let a = forward.max(sampler);
    (
        a,
        format!(
            "activation = max(forward {forward:.2} GiB at {} tokens, sampler {sampler:.2} GiB at {} sequences × {} vocab × {SAMPLER_BYTES_PER_LOGIT} B) = {a:.2} GiB",
            p.profile_tokens, p.seqs, m.vocab
        ),
    )
}

/// The KV budget per GPU on one path: (budget, activation, graphs, lines).
fn budget_on(m: &ModelShape, i: &Inputs, p: &Path, weights_per_gpu: f64) -> (f64, f64, f64, Vec<String>) {
    let (act, act_line) = activation(m, i, p);
    let graphs = if p.graphs_inside { GRAPHS_GIB } else { 0.0 };
    let b = i.util * i.gpu_gib - weights_per_gpu - act - p.non_torch_gib - graphs;
    let mut lines = vec![act_line];
    lines.push(format!(
        "KV budget = {:.2} × {:.2} GiB − {weights_per_gpu:.2} weights − {act:.2} activation − {:.2} non-torch{} = {b:.2} GiB",
        i.util,
        i.gpu_gib,
        p.non_torch_gib,
        if p.graphs_inside {
            format!(" − {graphs:.2} CUDA graphs (inside the budget from 0.14)")
        } else {
            String::new()
        }
    ));
    (b, act, graphs, lines)
}

/// Why it does or does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Fits,
    /// Weights and activations alone exceed the GPU's share.
    WeightsDoNotFit,
    /// The weights fit, but with the activation peak, non-torch memory and CUDA graphs the
    /// engine needs (and, with a KV size given, that size) the GPU is over.
    OverheadDoesNotFit,
    /// No room for one request of the context after the weights.
    #[serde(rename = "kv-too-small")]
    KvTooSmallForContext,
    /// The context is longer than the model was trained for.
    #[serde(rename = "context-above-max")]
    ContextAboveModelMax,
    /// It starts, but the asked concurrency will queue.
    ConcurrencyQueues,
}

impl Verdict {
    pub const ALL: [Verdict; 6] = [
        Verdict::Fits,
        Verdict::WeightsDoNotFit,
        Verdict::OverheadDoesNotFit,
        Verdict::KvTooSmallForContext,
        Verdict::ContextAboveModelMax,
        Verdict::ConcurrencyQueues,
    ];
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Fits => "fits",
            Verdict::WeightsDoNotFit => "weights-do-not-fit",
            Verdict::OverheadDoesNotFit => "overhead-does-not-fit",
            Verdict::KvTooSmallForContext => "kv-too-small",
            Verdict::ContextAboveModelMax => "context-above-max",
            Verdict::ConcurrencyQueues => "concurrency-queues",
        }
    }
    pub fn fits(self) -> bool {
        matches!(self, Verdict::Fits | Verdict::ConcurrencyQueues)
    }
}

/// The calculator's answer, per GPU unless said otherwise, with the arithmetic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Report {
    pub weights_per_gpu_gib: f64,
    pub activation_gib: f64,
    pub non_torch_gib: f64,
    pub graphs_gib: f64,
    pub kv_budget_gib: f64,
    /// What the unknown inputs (version, defaults, graphs, NCCL) can move the budget to.
    pub kv_budget_range_gib: (f64, f64),
    /// KV bytes one token takes on one GPU, all layers (full-attention layers only when some
    /// layers slide; those are counted per request).
    pub kv_bytes_per_token: u64,
    pub kv_bytes_per_token_sliding: u64,
    /// The bytes per token in the engine's own count of tokens (all layers where it gives
    /// sliding layers a full slot; the padded group layout under vLLM's hybrid allocator).
    pub kv_bytes_per_token_reported: u64,
    /// Tokens of KV cache the engine will report ("GPU KV cache size", SGLang "#tokens"), in
    /// the engine's own convention.
    pub kv_tokens: u64,
    pub kv_tokens_range: (u64, u64),
    /// Requests of `ctx` tokens that fit at once ("Maximum concurrency … per request").
    pub max_concurrency: f64,
    /// The longest context one request can have.
    pub max_ctx: u64,
    pub verdict: Verdict,
    /// The verdict holds at the central value but not across the whole range.
    pub marginal: bool,
    /// The engine path the calculation followed ("vLLM V1 0.14, 8192 batched tokens, …").
    pub path: String,
    /// The engine's profile run on that path: batched tokens and sequence slots.
    pub profile_tokens: u64,
    pub profile_seqs: u64,
    /// The calculation, line by line.
    pub arithmetic: Vec<String>,
}

/// KV layout of one GPU: bytes per token per layer, and the layer counts.
struct Layout {
    per_layer: u64,
    full_layers: u64,
    swa_layers: u64,
    window: u64,
}

fn layout(m: &ModelShape, i: &Inputs, a: &mut Vec<String>) -> Layout {
    let kv_elem = match i.kv_dtype {
        KvDtype::Fp8 => 1,
        KvDtype::Auto => m.dtype_bytes,
    };
    let (full_layers, swa_layers, window) = match m.sliding {
        Some((w, n)) => (m.layers - n.min(m.layers), n.min(m.layers), w),
        None => (m.layers, 0, 0),
    };
    let per_layer = match m.mla {
        Some((rank, rope)) => {
            a.push(format!(
                "MLA: per layer per token = ({rank} + {rope}) × {kv_elem} B = {} B (not split by TP)",
                (rank + rope) * kv_elem
            ));
            (rank + rope) * kv_elem
        }
        None => {
            let heads_per_gpu = (m.kv_heads / i.tp).max(1);
            a.push(format!(
                "KV heads per GPU = max(1, {} / {}) = {heads_per_gpu}{}",
                m.kv_heads,
                i.tp,
                if i.tp > m.kv_heads {
                    " (replicated: TP exceeds the KV heads)"
                } else {
                    ""
                }
            ));
            let b = 2 * heads_per_gpu * m.head_dim * kv_elem;
            a.push(format!(
                "per layer per token = 2 × {heads_per_gpu} × {} × {kv_elem} B = {b} B",
                m.head_dim
            ));
            b
        }
    };
    Layout {
        per_layer,
        full_layers: full_layers + i.engine.draft_layers,
        swa_layers,
        window,
    }
}

/// vLLM V1's hybrid allocator (0.10 on): layers of each attention type are cut into groups of
/// one size (the smaller type's count, or the larger's when they are within 25%), the last
/// group of a type padded; every group shares one block pool. The tokens it reports are the
/// budget over `per_layer × group size × groups`.
fn hybrid_groups(full: u64, swa: u64) -> (u64, u64) {
    let (lo, hi) = (full.min(swa), full.max(swa));
    let size = if (hi as f64) < lo as f64 * 1.25 { hi } else { lo }.max(1);
    (size, full.div_ceil(size) + swa.div_ceil(size))
}

/// Tokens a KV pool of `gib` holds at `per_token` bytes, in whole blocks.
pub fn tokens_in(gib: f64, per_token: u64, block: u64) -> u64 {
    let bytes = (gib.max(0.0) * GIB) as u64;
    let block = block.max(1);
    bytes.checked_div(per_token).unwrap_or(0) / block * block
}

/// The KV budget on the central path and what it is made of (GiB per GPU).
struct Budget {
    kv: f64,
    activation: f64,
    non_torch: f64,
    graphs: f64,
    /// The budget the utilisation gives, before a `--kv-cache-memory-bytes` replaces it.
    from_util: f64,
    /// `--kv-cache-memory-bytes`, per GPU, when given.
    given_kv: Option<f64>,
}

/// The budget: estimated on the central path, or from the engine's own figures when a
/// calibration of this TP applies, or exactly as `--kv-cache-memory-bytes` gives it.
fn budget_of(
    m: &ModelShape,
    i: &Inputs,
    central: &Path,
    weights_per_gpu: f64,
    calibrated: Option<&Calibration>,
    a: &mut Vec<String>,
) -> Budget {
    let (mut kv, mut activation, mut graphs, lines) = budget_on(m, i, central, weights_per_gpu);
    let mut non_torch = central.non_torch_gib;
    match calibrated {
        Some(c) => {
            let applies = c.activation_applies(central.profile_tokens, central.seqs);
            if applies {
                activation = c.activation_gib;
            }
            non_torch = c.other_gib;
            graphs = 0.0;
            kv = i.util * i.gpu_gib - weights_per_gpu - activation - c.other_gib;
            a.push(format!(
                "calibrated from the start of {} at {}: activation {activation:.2} GiB{}, non-torch and graphs {:.2} GiB (measured on {}, engine {})",
                c.profile,
                crate::i18n::time_utc(c.at_ms),
                if applies {
                    ""
                } else {
                    " (estimated: the profile run changed since)"
                },
                c.other_gib,
                c.gpu_name,
                c.engine_version
            ));
            a.push(format!(
                "KV budget = {:.2} × {:.2} GiB − {weights_per_gpu:.2} weights − {activation:.2} activation − {:.2} measured overhead = {kv:.2} GiB",
                i.util, i.gpu_gib, c.other_gib
            ));
        }
        None => a.extend(lines),
    }
    // A KV size given as bytes replaces the utilisation's arithmetic: the engine allocates
    // exactly that (per GPU); what is left to decide is whether the rest still fits.
    let given_kv = i.engine.kv_cache_memory_bytes.map(|b| b as f64 / GIB);
    let from_util = kv;
    if let Some(given) = given_kv {
        a.push(format!(
            "KV cache given as --kv-cache-memory-bytes: {given:.2} GiB per GPU (the utilisation does not size it)"
        ));
        kv = given;
    }
    Budget {
        kv,
        activation,
        non_torch,
        graphs,
        from_util,
        given_kv,
    }
}

/// The budget's range: the same calculation on every path the unknown inputs allow (vLLM's
/// version, V1, the GPU class, graphs), ± the non-torch spread; the run-to-run noise when
/// calibrated; none when the size is given.
fn budget_range(
    m: &ModelShape,
    i: &Inputs,
    central: &Path,
    given_version: Option<(u32, u32)>,
    weights_per_gpu: f64,
    budget: &Budget,
    calibrated: bool,
) -> (f64, f64) {
    if budget.given_kv.is_some() {
        // Exact: the engine takes the size as given.
        return (budget.kv, budget.kv);
    }
    if calibrated {
        // Measured: the range is the run-to-run noise of the engine's own figures.
        return (budget.kv - 0.05, budget.kv + 0.05);
    }
    let e = &i.engine;
    let large = large_gpu(i);
    let mut alternatives = vec![central.clone()];
    if central.family == EngineFamily::Vllm {
        let versions: Vec<(u32, u32)> = match given_version {
            Some(v) => vec![v],
            None => vec![(0, 6), (0, 11), ASSUMED_VLLM],
        };
        // An unnamed 80 GiB card may be an A100, which takes the small-GPU defaults.
        let mut classes = vec![large];
        if large && e.gpu_name.is_none() {
            classes.push(false);
        }
        for v in versions {
            for &l in &classes {
                let p = path_for(i, v, l);
                alternatives.push(p.clone());
                if p.graphs_inside {
                    let mut hi = p.clone();
                    hi.non_torch_gib += GRAPHS_GIB_MAX - GRAPHS_GIB;
                    alternatives.push(hi);
                }
            }
        }
    }
    let spread = if i.non_torch_gib.is_some() { 0.0 } else { 0.15 };
    let (mut lo, mut hi) = (budget.kv, budget.kv);
    for p in &alternatives {
        let (b, ..) = budget_on(m, i, p, weights_per_gpu);
        lo = lo.min(b - spread);
        hi = hi.max(b + spread);
    }
    (lo, hi)
}

/// How the engine turns KV bytes into tokens: the bytes per token it reports, the bytes one
/// request of a given context costs, and whether sliding layers are counted whole.
struct TokenCost {
    reported_per_token: u64,
    per_request: Box<dyn Fn(u64) -> u64>,
    hybrid: bool,
    whole_window: bool,
}

fn token_cost(central: &Path, lay: &Layout, block: u64, a: &mut Vec<String>) -> TokenCost {
    let full = lay.per_layer.saturating_mul(lay.full_layers);
    let sliding = lay.per_layer.saturating_mul(lay.swa_layers);
    let window = lay.window;
    let sglang = central.family == EngineFamily::Sglang;
    let hybrid = !sglang && central.v1 && central.version >= (0, 10) && lay.swa_layers > 0 && lay.full_layers > 0;
    let whole_window = sglang || !central.v1 || central.version < (0, 10);
    let (reported_per_token, per_request): (u64, Box<dyn Fn(u64) -> u64>) = if lay.swa_layers == 0 {
        (full, Box::new(move |ctx: u64| full.saturating_mul(ctx)))
    } else if whole_window {
        // V0, V1 before the hybrid allocator, SGLang's default pool: sliding layers get a full
        // slot per token like the others.
        a.push(format!(
            "sliding window {window}: this engine gives the {} sliding layers a full slot per token",
            lay.swa_layers
        ));
        let all = full.saturating_add(sliding);
        (all, Box::new(move |ctx: u64| all.saturating_mul(ctx)))
    } else if hybrid {
        let (size, groups) = hybrid_groups(lay.full_layers, lay.swa_layers);
        let per = lay.per_layer.saturating_mul(size).saturating_mul(groups);
        a.push(format!(
            "hybrid allocator: {} full + {} sliding layers in {groups} groups of {size}: reported tokens count {} B per token",
            lay.full_layers, lay.swa_layers, per
        ));
        let t = central.profile_tokens;
        let (pl, fl, sl) = (lay.per_layer, lay.full_layers, lay.swa_layers);
        (
            per,
            Box::new(move |ctx: u64| {
                // Full layers keep every token, sliding ones the window plus one batch.
                let sw_tokens = (window.saturating_sub(1).saturating_add(t)).min(ctx);
                let sw_blocks = sw_tokens.div_ceil(block) + 1;
                pl.saturating_mul(fl.saturating_mul(ctx.div_ceil(block) * block))
                    .saturating_add(pl.saturating_mul(sl).saturating_mul(sw_blocks * block))
            }),
        )
    } else {
        // Every layer slides: a request costs its window.
        a.push(format!(
            "sliding window {window}: {} layers hold at most {window} tokens per request",
            lay.swa_layers
        ));
        (
            sliding,
            Box::new(move |ctx: u64| sliding.saturating_mul(ctx.min(window.max(1)))),
        )
    };
    TokenCost {
        reported_per_token,
        per_request,
        hybrid,
        whole_window,
    }
}

/// The verdict, the worst first: weights, then overhead, then context, then concurrency.
fn verdict_of(m: &ModelShape, i: &Inputs, weights_per_gpu: f64, budget: &Budget, max_concurrency: f64) -> Verdict {
    // What overflows decides the wording: the weights themselves, or the engine's overhead
    // (activation peak, non-torch memory, graphs) on top of weights that fit.
    let overflow = match budget.given_kv {
        Some(kv) => budget
            .from_util
            .min(i.gpu_gib - weights_per_gpu - budget.activation - budget.non_torch - budget.graphs - kv),
        None => budget.kv,
    };
    let given = budget.given_kv.is_some();
    if weights_per_gpu >= i.util * i.gpu_gib || (given && weights_per_gpu >= i.gpu_gib) {
        Verdict::WeightsDoNotFit
    } else if budget.kv <= 0.0 || (given && overflow < 0.0) {
        Verdict::OverheadDoesNotFit
    } else if i.ctx > m.max_position {
        Verdict::ContextAboveModelMax
    } else if max_concurrency < 1.0 {
        Verdict::KvTooSmallForContext
    } else if i.concurrency.is_some_and(|c| (c as f64) > max_concurrency) {
        Verdict::ConcurrencyQueues
    } else {
        Verdict::Fits
    }
}

/// The path the report names: the calibration, or the engine and version with the profile
/// run's size and where the graphs go.
fn path_text(
    i: &Inputs,
    central: &Path,
    given_version: Option<(u32, u32)>,
    calibrated: Option<&Calibration>,
) -> String {
    match central.family {
        _ if calibrated.is_some() => format!(
            "calibrated: the engine's own figures from the start at {}",
            calibrated.map(|c| crate::i18n::time_utc(c.at_ms)).unwrap_or_default()
        ),
        EngineFamily::Sglang => "SGLang: KV pool = mem-fraction-static × total − weights − CUDA context".to_string(),
        EngineFamily::Vllm => format!(
            "vLLM {} {}.{}{}: profile at {} batched tokens, {} sequences, CUDA graphs {}",
            if central.v1 { "V1" } else { "V0" },
            central.version.0,
            central.version.1,
            if given_version.is_none() { " (assumed)" } else { "" },
            central.profile_tokens,
            central.seqs,
            if i.engine.enforce_eager {
                "off (--enforce-eager)"
            } else if central.graphs_inside {
                "inside the budget"
            } else {
                "outside the budget"
            }
        ),
    }
}

/// Runs the calculation: the budget, its range, the layout, what a token and a request cost,
/// then the tokens, the concurrency, the longest request and the verdict. Every step writes
/// its arithmetic to the report, in that order.
pub fn calculate(m: &ModelShape, i: &Inputs) -> Result<Report, VramError> {
    i.check()?;
    let mut a = Vec::new();
    let e = &i.engine;
    let given_version = e.version.as_deref().and_then(version_of);
    let version = given_version.unwrap_or(ASSUMED_VLLM);
    let central = path_for(i, version, large_gpu(i));

    let weights_per_gpu = i.weights_bytes as f64 / i.tp as f64 / GIB;
    a.push(format!(
        "weights per GPU = {:.2} GiB / TP {} = {weights_per_gpu:.2} GiB",
        i.weights_bytes as f64 / GIB,
        i.tp
    ));
    let calibrated = i.calibration.as_ref().filter(|c| c.tp == i.tp);
    let budget = budget_of(m, i, &central, weights_per_gpu, calibrated, &mut a);
    let (lo, hi) = budget_range(
        m,
        i,
        &central,
        given_version,
        weights_per_gpu,
        &budget,
        calibrated.is_some(),
    );
    a.push(format!("range over the unknown inputs: {lo:.2} … {hi:.2} GiB"));

    let lay = layout(m, i, &mut a);
    let full = lay.per_layer.saturating_mul(lay.full_layers);
    let sliding = lay.per_layer.saturating_mul(lay.swa_layers);
    a.push(format!(
        "per token = {} B × {} full-attention layers{} = {full} B",
        lay.per_layer,
        lay.full_layers,
        if e.draft_layers > 0 {
            format!(" (with {} draft layers sharing the pool)", e.draft_layers)
        } else {
            String::new()
        }
    ));
    let block = match central.family {
        EngineFamily::Sglang => 1,
        EngineFamily::Vllm => e.block_size.unwrap_or(BLOCK),
    };
    let cost = token_cost(&central, &lay, block, &mut a);
    let to_tokens = |gib: f64| tokens_in(gib, cost.reported_per_token, block);
    let kv_tokens = to_tokens(budget.kv);
    let budget_bytes = (budget.kv.max(0.0) * GIB) as u64;
    a.push(format!(
        "KV tokens = {budget_bytes} B / {} B per token{} = {kv_tokens}",
        cost.reported_per_token,
        if block > 1 {
            format!(", in blocks of {block}")
        } else {
            String::new()
        }
    ));
    let need = (cost.per_request)(i.ctx);
    let max_concurrency = if need > 0 {
        budget_bytes as f64 / need as f64
    } else {
        0.0
    };
    a.push(format!(
        "max concurrency at {} tokens = {budget_bytes} B / {need} B per request = {max_concurrency:.2}x",
        i.ctx
    ));
    // The longest single request the pool holds.
    let max_ctx = if full > 0 {
        let fixed = if cost.hybrid || cost.whole_window {
            0
        } else {
            sliding.saturating_mul(lay.window)
        };
        budget_bytes
            .saturating_sub(fixed)
            .checked_div(if cost.whole_window {
                cost.reported_per_token
            } else {
                full
            })
            .map_or(m.max_position, |t| t.min(m.max_position))
    } else {
        m.max_position
    };
    let fits_at = |gib: f64| gib > 0.0 && need > 0 && (gib.max(0.0) * GIB) as u64 >= need;
    let marginal = fits_at(budget.kv) != fits_at(lo) || fits_at(budget.kv) != fits_at(hi);
    Ok(Report {
        weights_per_gpu_gib: weights_per_gpu,
        activation_gib: budget.activation,
        non_torch_gib: budget.non_torch,
        graphs_gib: budget.graphs,
        kv_budget_gib: budget.kv,
        kv_budget_range_gib: (lo, hi),
        kv_bytes_per_token: full,
        kv_bytes_per_token_sliding: sliding,
        kv_bytes_per_token_reported: cost.reported_per_token,
        kv_tokens,
        kv_tokens_range: (to_tokens(lo), to_tokens(hi)),
        max_concurrency,
        max_ctx,
        verdict: verdict_of(m, i, weights_per_gpu, &budget, max_concurrency),
        marginal,
        path: path_text(i, &central, given_version, calibrated),
        profile_tokens: central.profile_tokens,
        profile_seqs: central.seqs,
        arithmetic: a,
    })
}

/// What the engine itself reported at startup: vLLM's "GPU KV cache size: N tokens" and
/// "Maximum concurrency for L tokens per request: X" (one line in 0.33, two before), its memory
/// lines ("Model loading took", the profiling summary, "Available KV cache memory", the CUDA
/// graph estimate), and SGLang's equivalents ("Load weight end … mem usage", "KV Cache is
/// allocated … #tokens, K size, V size").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Observed {
    pub kv_tokens: Option<u64>,
    pub ctx: Option<u64>,
    pub max_concurrency: Option<f64>,
    #[serde(default)]
    pub weights_gib: Option<f64>,
    /// The profile run's peak activation (V1 "torch peak memory increase"; V0 peak torch
    /// memory minus the weights).
    #[serde(default)]
    pub activation_gib: Option<f64>,
    #[serde(default)]
    pub non_torch_gib: Option<f64>,
    #[serde(default)]
    pub graphs_gib: Option<f64>,
    /// The KV pool ("Available KV cache memory"; V0 `kv_cache_size`; SGLang K + V size).
    #[serde(default)]
    pub kv_gib: Option<f64>,
}

fn number_after(line: &str, marker: &str) -> Option<String> {
    let rest = &line[line.find(marker)? + marker.len()..];
    Some(
        rest.trim_start()
            .chars()
            .take(32)
            .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
            .collect(),
    )
}

fn gib_after(line: &str, marker: &str) -> Option<f64> {
    number_after(line, marker)?
        .trim_end_matches('.')
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v < 1e7)
}

/// Reads the startup lines from a log (the last start's values win).
pub fn observed(log: &str) -> Observed {
    let mut o = Observed::default();
    for line in log.lines() {
        // The device word is the backend's: GPU, CPU (vLLM-CPU), XPU.
        if let Some(n) = ["GPU KV cache size:", "CPU KV cache size:", "XPU KV cache size:"]
            .iter()
            .find_map(|m| number_after(line, m))
        {
            o.kv_tokens = n.replace(',', "").parse().ok();
        }
        if let Some(n) = number_after(line, "Maximum concurrency for") {
            o.ctx = n.replace(',', "").parse().ok();
            if let Some(x) = number_after(line, "tokens per request:") {
                o.max_concurrency = x.trim_end_matches('.').parse().ok();
            }
        }
        if line.contains("Model loading took") {
            o.weights_gib = gib_after(line, "Model loading took");
        } else if line.contains("Loading model weights took") {
            o.weights_gib = gib_after(line, "Loading model weights took");
        }
        if line.contains("torch peak memory increase:") {
            o.activation_gib = gib_after(line, "torch peak memory increase:");
            o.non_torch_gib = gib_after(line, "non-torch forward increase memory:");
            if let Some(w) = gib_after(line, "weights memory:") {
                o.weights_gib = Some(w);
            }
        }
        // V0: "Memory profiling results: … peak_torch_memory=17.98GiB … non_torch_memory=0.35GiB
        // kv_cache_size=2.89GiB".
        if line.contains("peak_torch_memory=") {
            if let (Some(peak), Some(w)) = (gib_after(line, "peak_torch_memory="), o.weights_gib) {
                o.activation_gib = Some((peak - w).max(0.0));
            }
            o.non_torch_gib = gib_after(line, "non_torch_memory=");
            o.kv_gib = gib_after(line, "kv_cache_size=");
        }
        if line.contains("Estimated CUDA graph memory:") {
            o.graphs_gib = gib_after(line, "Estimated CUDA graph memory:");
        }
        if line.contains("Available KV cache memory:") {
            o.kv_gib = gib_after(line, "Available KV cache memory:");
        }
        // SGLang.
        if line.contains("Load weight end") {
            o.weights_gib = gib_after(line, "mem usage=");
        }
        if line.contains("KV Cache is allocated") {
            if let Some(n) = number_after(line, "#tokens:") {
                o.kv_tokens = n.replace(',', "").parse().ok();
            }
            if let (Some(k), Some(v)) = (gib_after(line, "K size:"), gib_after(line, "V size:")) {
                o.kv_gib = Some(k + v);
            }
        }
    }
    o
}

/// What a real start of this model measured on this GPU, engine version and TP: the
/// calculator's unknowns, replaced by the engine's own figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Calibration {
    /// When the start was (Unix ms) and which profile it was.
    pub at_ms: i64,
    pub profile: String,
    pub gpu_name: String,
    pub engine_version: String,
    pub model: String,
    pub tp: u64,
    /// The profile run's peak activation.
    pub activation_gib: f64,
    /// Everything else the engine kept out of the pool besides weights and activation
    /// (non-torch memory, NCCL, CUDA graphs where counted): utilisation × total − weights −
    /// activation − KV pool, so the calibrated start is reproduced exactly.
    pub other_gib: f64,
    /// The profile run the engine made (batched tokens and sequences, defaults resolved): the
    /// measured activation holds for the same run only.
    pub profile_tokens: u64,
    pub profile_seqs: u64,
    /// The start's own figures, for the record.
    pub weights_gib: f64,
    pub kv_gib: f64,
}

impl Calibration {
    /// Derives a calibration from a start's lines; `None` unless the engine logged its weights
    /// and its KV pool.
    #[expect(
        clippy::too_many_arguments,
        reason = "one argument per figure a start logs; a struct would only rename them"
    )]
    pub fn from_start(
        o: &Observed,
        m: &ModelShape,
        i: &Inputs,
        at_ms: i64,
        profile: &str,
        gpu_name: &str,
        engine_version: &str,
        model: &str,
    ) -> Option<Calibration> {
        let (w, kv) = (o.weights_gib?, o.kv_gib?);
        let mut plain = i.clone();
        plain.calibration = None;
        let estimate = calculate(m, &plain).ok()?;
        let activation = o.activation_gib.unwrap_or(estimate.activation_gib);
        let other = i.util * i.gpu_gib - w - activation - kv;
        (other.is_finite() && activation.is_finite()).then(|| Calibration {
            at_ms,
            profile: profile.to_string(),
            gpu_name: gpu_name.to_string(),
            engine_version: engine_version.to_string(),
            model: model.to_string(),
            tp: i.tp,
            activation_gib: activation,
            other_gib: other,
            profile_tokens: estimate.profile_tokens,
            profile_seqs: estimate.profile_seqs,
            weights_gib: w,
            kv_gib: kv,
        })
    }

    /// Whether it applies to these inputs: the same TP (the caller matched GPU, version and
    /// model), and the same profile-run settings for the activation.
    fn activation_applies(&self, profile_tokens: u64, profile_seqs: u64) -> bool {
        self.profile_tokens == profile_tokens && self.profile_seqs == profile_seqs
    }
}

/// Relative error of the prediction against what the engine reported, in percent.
pub fn error_pct(predicted: f64, observed: f64) -> Option<f64> {
    (observed > 0.0).then(|| (predicted - observed) / observed * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LLAMA_8B: &str = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"max_position_embeddings":131072,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"torch_dtype":"bfloat16","vocab_size":128256}"#;
    const LLAMA_70B: &str = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":8192,"intermediate_size":28672,"max_position_embeddings":131072,"num_attention_heads":64,"num_hidden_layers":80,"num_key_value_heads":8,"torch_dtype":"bfloat16","vocab_size":128256}"#;
    const QWEN3_MOE: &str = r#"{"architectures":["Qwen3MoeForCausalLM"],"hidden_size":2048,"head_dim":128,"intermediate_size":6144,"moe_intermediate_size":768,"max_position_embeddings":40960,"num_attention_heads":32,"num_experts":128,"num_experts_per_tok":8,"num_hidden_layers":48,"num_key_value_heads":4,"torch_dtype":"bfloat16","vocab_size":151936,"use_sliding_window":false,"sliding_window":null}"#;
    const DEEPSEEK_V2_LITE: &str = r#"{"architectures":["DeepseekV2ForCausalLM"],"hidden_size":2048,"intermediate_size":10944,"kv_lora_rank":512,"max_position_embeddings":163840,"moe_intermediate_size":1408,"n_routed_experts":64,"num_attention_heads":16,"num_hidden_layers":27,"num_key_value_heads":16,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"torch_dtype":"bfloat16","vocab_size":102400}"#;
    const MISTRAL_7B_V01: &str = r#"{"architectures":["MistralForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"max_position_embeddings":32768,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"sliding_window":4096,"torch_dtype":"bfloat16","vocab_size":32000}"#;
    const GEMMA2_9B: &str = r#"{"architectures":["Gemma2ForCausalLM"],"model_type":"gemma2","hidden_size":3584,"head_dim":256,"intermediate_size":14336,"max_position_embeddings":8192,"num_attention_heads":16,"num_hidden_layers":42,"num_key_value_heads":8,"sliding_window":4096,"torch_dtype":"bfloat16","vocab_size":256000}"#;

    fn inputs(weights_gib: f64, gpu_gib: f64, tp: u64, ctx: u64) -> Inputs {
        Inputs {
            weights_bytes: (weights_gib * GIB) as u64,
            gpu_gib,
            tp,
            util: 0.9,
            ctx,
            kv_dtype: KvDtype::Auto,
            concurrency: None,
            activation_gib: Some(2.0),
            non_torch_gib: Some(1.0),
            engine: EngineSetup {
                version: Some("0.11.0".into()),
                ..Default::default()
            },
            calibration: None,
        }
    }

    #[test]
    fn llama_8b_on_one_h100() {
        let m = parse_config(LLAMA_8B).unwrap();
        // 32 layers × 2 (K and V) × 8 KV heads × 128 head_dim × 2 bytes = 131,072 B per token.
        let r = calculate(&m, &inputs(14.96, 80.0, 1, 8192)).unwrap();
        assert_eq!(r.kv_bytes_per_token, 32 * 2 * 8 * 128 * 2);
        // Budget: 0.9 × 80 − 14.96 − 2 − 1 = 54.04 GiB → 54.04 × 2^30 / 131072 ≈ 442,695 tokens.
        assert!((r.kv_budget_gib - 54.04).abs() < 1e-9);
        assert_eq!(r.kv_tokens, ((54.04 * GIB) as u64 / 131_072) / 16 * 16);
        assert!((r.max_concurrency - r.kv_tokens as f64 / 8192.0).abs() < 0.01);
        assert_eq!(r.verdict, Verdict::Fits);
        // fp8 KV halves the bytes per token and doubles the tokens.
        let mut fp8 = inputs(14.96, 80.0, 1, 8192);
        fp8.kv_dtype = KvDtype::Fp8;
        let r8 = calculate(&m, &fp8).unwrap();
        assert_eq!(r8.kv_bytes_per_token, r.kv_bytes_per_token / 2);
        assert!(r8.kv_tokens >= 2 * r.kv_tokens - 16);
    }

    #[test]
    fn llama_70b_needs_tensor_parallelism() {
        let m = parse_config(LLAMA_70B).unwrap();
        // 131.4 GiB of bf16 weights do not fit on one 80 GiB card …
        let one = calculate(&m, &inputs(131.4, 80.0, 1, 8192)).unwrap();
        assert_eq!(one.verdict, Verdict::WeightsDoNotFit);
        // … and fit on four: 32.85 GiB each; 8 KV heads / TP 4 = 2 per GPU.
        let four = calculate(&m, &inputs(131.4, 80.0, 4, 8192)).unwrap();
        assert_eq!(four.kv_bytes_per_token, 80 * 2 * 2 * 128 * 2);
        assert!(four.verdict.fits());
        assert!(four
            .arithmetic
            .iter()
            .any(|l| l.contains("KV heads per GPU = max(1, 8 / 4) = 2")));
    }

    #[test]
    fn gqa_heads_are_replicated_when_tp_exceeds_them() {
        let m = parse_config(QWEN3_MOE).unwrap();
        assert_eq!(m.experts, Some(128));
        assert_eq!(m.sliding, None, "use_sliding_window false");
        // 4 KV heads, TP 8: one head per GPU (replicated), not half a head.
        let r = calculate(&m, &inputs(56.9, 80.0, 8, 32768)).unwrap();
        assert_eq!(r.kv_bytes_per_token, 48 * 2 * 128 * 2);
        assert!(r.arithmetic.iter().any(|l| l.contains("replicated")));
    }

    #[test]
    fn mla_stores_one_latent_per_layer() {
        let m = parse_config(DEEPSEEK_V2_LITE).unwrap();
        assert_eq!(m.mla, Some((512, 64)));
        // 27 layers × (512 + 64) × 2 bytes = 31,104 B per token, the same at any TP.
        for tp in [1, 2] {
            let r = calculate(&m, &inputs(29.3, 80.0, tp, 32768)).unwrap();
            assert_eq!(r.kv_bytes_per_token, 27 * (512 + 64) * 2);
        }
    }

    #[test]
    fn sliding_window_layers_hold_the_window_only() {
        let mistral = parse_config(MISTRAL_7B_V01).unwrap();
        assert_eq!(mistral.sliding, Some((4096, 32)));
        let r = calculate(&mistral, &inputs(13.5, 24.0, 1, 32768)).unwrap();
        // All layers slide: a 32k request costs what 4,096 tokens cost.
        assert_eq!(r.kv_bytes_per_token, 0);
        assert_eq!(r.kv_bytes_per_token_sliding, 32 * 2 * 8 * 128 * 2);
        let per_request = 4096.0 * r.kv_bytes_per_token_sliding as f64;
        assert!((r.max_concurrency - (r.kv_budget_gib * GIB).floor() / per_request).abs() < 0.01);
        let gemma = parse_config(GEMMA2_9B).unwrap();
        assert_eq!(
            gemma.sliding,
            Some((4096, 21)),
            "Gemma 2 alternates sliding and full layers"
        );
        let g = calculate(&gemma, &inputs(17.2, 48.0, 1, 8192)).unwrap();
        assert_eq!(g.kv_bytes_per_token, 21 * 2 * 8 * 256 * 2);
    }

    #[test]
    fn a_kv_size_given_in_bytes_is_the_budget() {
        // The real-engine tier's model on vLLM-CPU 0.32: `--kv-cache-memory-bytes 1G` made
        // "CPU KV cache size: 524,288 tokens, Maximum concurrency for 2,048 tokens per
        // request: 256.00x" (4 layers × 2 × 2 KV heads × 64 × 2 B = 2,048 B per token).
        let tiny = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":256,"intermediate_size":512,"num_attention_heads":4,"num_hidden_layers":4,"num_key_value_heads":2,"head_dim":64,"max_position_embeddings":4096,"vocab_size":2048,"torch_dtype":"bfloat16"}"#;
        let m = parse_config(tiny).unwrap();
        let mut i = inputs(0.0065, 23.54, 1, 2048);
        i.engine.kv_cache_memory_bytes = human_readable_int("1G");
        let r = calculate(&m, &i).unwrap();
        assert_eq!(r.kv_tokens, 524_288, "{:#?}", r.arithmetic);
        assert_eq!(r.kv_tokens_range, (524_288, 524_288));
        assert!((r.max_concurrency - 256.0).abs() < 1e-9, "{}", r.max_concurrency);
        assert_eq!(r.verdict, Verdict::Fits);
        let o = observed("(EngineCore pid=9947) INFO 12-05 20:33:56 [kv_cache_utils.py:2327] CPU KV cache size: 524,288 tokens, Maximum concurrency for 2,048 tokens per request: 256.00x");
        assert_eq!(o.kv_tokens, Some(524_288));
        assert_eq!(o.max_concurrency, Some(256.0));
        // The profile's extra arguments carry it, in vLLM's own notation.
        let mut p = crate::domain::profile::Profile::new("tiny", "vllm", "/models/tiny");
        p.extra_args = vec!["--kv-cache-memory-bytes".into(), "1G".into()];
        let e = EngineSetup::of_profile(&p, EngineFamily::Vllm, None, None);
        assert_eq!(e.kv_cache_memory_bytes, Some(1 << 30));
        for (text, want) in [
            ("1G", Some(1u64 << 30)),
            ("1g", Some(1_000_000_000)),
            ("25.6k", Some(25_600)),
            ("4096", Some(4096)),
            ("1.5G", None),
            ("G", None),
            ("-1G", None),
            ("99999999999T", None),
            ("1e9", None),
        ] {
            assert_eq!(human_readable_int(text), want, "{text}");
        }
        // A KV size larger than the machine: the weights fit, the rest does not.
        i.engine.kv_cache_memory_bytes = Some(30 << 30);
        assert_eq!(calculate(&m, &i).unwrap().verdict, Verdict::OverheadDoesNotFit);
    }

    #[test]
    fn what_overflows_is_named() {
        let m = parse_config(LLAMA_8B).unwrap();
        // 20 GiB of weights on a 24 GiB card at 0.9: they fit (21.6), the 2 GiB activation
        // peak and 1 GiB non-torch memory on top of them do not.
        let r = calculate(&m, &inputs(20.0, 24.0, 1, 4096)).unwrap();
        assert_eq!(r.verdict, Verdict::OverheadDoesNotFit);
        let r = calculate(&m, &inputs(23.0, 24.0, 1, 4096)).unwrap();
        assert_eq!(r.verdict, Verdict::WeightsDoNotFit);
    }

    #[test]
    fn verdicts_name_the_reason() {
        for v in Verdict::ALL {
            assert_eq!(serde_json::to_value(v).unwrap(), v.id(), "wire name = id");
        }
        let m = parse_config(LLAMA_8B).unwrap();
        // 24 GiB card, 0.9: budget 21.6 − 14.96 − 3 = 3.64 GiB ≈ 29.8k tokens < 131k context.
        let r = calculate(&m, &inputs(14.96, 24.0, 1, 131_072)).unwrap();
        assert_eq!(r.verdict, Verdict::KvTooSmallForContext);
        assert!(r.max_ctx < 131_072 && r.max_ctx > 20_000);
        let r = calculate(&m, &inputs(14.96, 80.0, 1, 200_000)).unwrap();
        assert_eq!(r.verdict, Verdict::ContextAboveModelMax);
        let mut i = inputs(14.96, 80.0, 1, 32768);
        i.concurrency = Some(64);
        assert_eq!(calculate(&m, &i).unwrap().verdict, Verdict::ConcurrencyQueues);
        i.tp = 0;
        assert!(matches!(calculate(&m, &i), Err(VramError::Input { field, .. }) if field == "--tp"));
    }

    #[test]
    fn configs_and_headers_are_untrusted() {
        assert_eq!(
            parse_config(r#"{"hidden_size": 10}"#),
            Err(VramError::Field("num_hidden_layers".into()))
        );
        assert!(matches!(parse_config("nope"), Err(VramError::Json(_))));
        let header = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[8,16]}}"#;
        assert_eq!(safetensors_bytes(header), Ok(16));
        assert!(safetensors_bytes(r#"{"a":{"data_offsets":[8,0]}}"#).is_err());
        assert!(safetensors_bytes(r#"{"a":{}}"#).is_err());
        assert_eq!(
            index_total_size(r#"{"metadata":{"total_size":16060522496},"weight_map":{}}"#),
            Ok(16_060_522_496)
        );
        let vl = r#"{"architectures":["Qwen2VLForConditionalGeneration"],"text_config":{"num_hidden_layers":28,"hidden_size":3584,"num_attention_heads":28,"num_key_value_heads":4}}"#;
        assert_eq!(parse_config(vl).unwrap().kv_heads, 4);
    }

    #[test]
    fn engine_startup_lines_are_read() {
        let one_line = "(EngineCore_DP0 pid=1) INFO 12-02 10:00:00 [kv_cache_utils.py:1087] GPU KV cache size: 425,424 tokens, Maximum concurrency for 65,536 tokens per request: 6.49x";
        let o = observed(one_line);
        assert_eq!(
            (o.kv_tokens, o.ctx, o.max_concurrency),
            (Some(425_424), Some(65_536), Some(6.49))
        );
        let two_lines =
            "INFO GPU KV cache size: 100,000 tokens\nINFO Maximum concurrency for 8,192 tokens per request: 12.21x\n";
        assert_eq!(observed(two_lines).max_concurrency, Some(12.21));
        let sglang = "[2026-12-02 10:00:00 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 431021, K size: 26.31 GB, V size: 26.31 GB";
        assert_eq!(observed(sglang).kv_tokens, Some(431_021));
        assert!((error_pct(105.0, 100.0).unwrap() - 5.0).abs() < 1e-9);
    }
}
