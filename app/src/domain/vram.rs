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
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    })
}

/// Bytes of tensor data a safetensors header describes (the JSON after the 8-byte length).
/// Offsets are checked: a header is untrusted input.
pub fn safetensors_bytes(header_json: &str) -> Result<u64, VramError> {
    let bad = |d: &str| VramError::Safetensors(d.to_string());
    let v: serde_json::Value = serde_json::from_str(header_json).map_err(|e| bad(&e.to_string()))?;
    let obj = v.as_object().ok_or_else(|| bad("not an object"))?;
    let mut total = 0u64;
    for (name, t) in obj {
        if name == "__metadata__" {
            continue;
        }
        let off = t
            .get("data_offsets")
            .and_then(|o| o.as_array())
            .filter(|o| o.len() == 2)
            .ok_or_else(|| bad(&format!("tensor {name} has no data_offsets")))?;
        let (a, b) = (off[0].as_u64(), off[1].as_u64());
        match (a, b) {
            (Some(a), Some(b)) if b >= a => total = total.saturating_add(b - a),
            _ => return Err(bad(&format!("tensor {name} has bad data_offsets"))),
        }
    }
    Ok(total)
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KvDtype {
    #[default]
    Auto,
    Fp8,
}

/// What the operator asks about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// Total weight bytes (safetensors, index total_size, or given).
    pub weights_bytes: u64,
    pub gpu_gib: f64,
    pub tp: u64,
    pub util: f64,
    pub ctx: u64,
    pub kv_dtype: KvDtype,
    pub concurrency: Option<u64>,
    /// Peak activations per GPU; `None` estimates them from the shape.
    pub activation_gib: Option<f64>,
    /// CUDA context, NCCL buffers and CUDA graphs per GPU.
    pub non_torch_gib: f64,
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
        if !(self.non_torch_gib.is_finite() && (0.0..=1e6).contains(&self.non_torch_gib)) {
            return bad("--non-torch-gib", "must be a number of GiB from 0 to 1000000");
        }
        Ok(())
    }
}

/// Why it does or does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Fits,
    /// Weights and activations alone exceed the GPU's share.
    WeightsDoNotFit,
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
    pub const ALL: [Verdict; 5] = [
        Verdict::Fits,
        Verdict::WeightsDoNotFit,
        Verdict::KvTooSmallForContext,
        Verdict::ContextAboveModelMax,
        Verdict::ConcurrencyQueues,
    ];
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Fits => "fits",
            Verdict::WeightsDoNotFit => "weights-do-not-fit",
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub weights_per_gpu_gib: f64,
    pub activation_gib: f64,
    pub kv_budget_gib: f64,
    /// KV bytes one token takes on one GPU, all layers (full-attention layers only when some
    /// layers slide; those are counted per request).
    pub kv_bytes_per_token: u64,
    pub kv_bytes_per_token_sliding: u64,
    /// Tokens of KV cache the engine will report ("GPU KV cache size").
    pub kv_tokens: u64,
    /// Requests of `ctx` tokens that fit at once ("Maximum concurrency … per request").
    pub max_concurrency: f64,
    /// The longest context one request can have.
    pub max_ctx: u64,
    pub verdict: Verdict,
    /// The calculation, line by line.
    pub arithmetic: Vec<String>,
}

/// Peak activation estimate for vLLM's profile run (8192 batched tokens): the MLP's
/// intermediate and the attention projections in the model dtype, split by TP, plus sampler
/// logits for 256 sequences in fp32.
pub fn activation_estimate_gib(m: &ModelShape, tp: u64) -> f64 {
    let tokens = 8192.0;
    let per_token = (2 * m.intermediate + 4 * m.hidden) as f64 * m.dtype_bytes as f64 / tp as f64;
    let logits = 256.0 * m.vocab as f64 * 4.0;
    (tokens * per_token + logits) / GIB
}

/// Runs the calculation.
pub fn calculate(m: &ModelShape, i: &Inputs) -> Result<Report, VramError> {
    i.check()?;
    let mut a = Vec::new();
    let kv_elem = match i.kv_dtype {
        KvDtype::Fp8 => 1,
        KvDtype::Auto => m.dtype_bytes,
    };
    let weights_per_gpu = i.weights_bytes as f64 / i.tp as f64 / GIB;
    a.push(format!(
        "weights per GPU = {:.2} GiB / TP {} = {weights_per_gpu:.2} GiB",
        i.weights_bytes as f64 / GIB,
        i.tp
    ));
    let activation = i.activation_gib.unwrap_or_else(|| activation_estimate_gib(m, i.tp));
    let budget = i.util * i.gpu_gib - weights_per_gpu - activation - i.non_torch_gib;
    a.push(format!(
        "KV budget = {:.2} × {:.2} GiB − {weights_per_gpu:.2} weights − {activation:.2} activations − {:.2} non-torch = {budget:.2} GiB",
        i.util, i.gpu_gib, i.non_torch_gib
    ));
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
    // Bounded shapes keep these in range; saturating all the same (a config is untrusted).
    let full = per_layer.saturating_mul(full_layers);
    let sliding = per_layer.saturating_mul(swa_layers);
    a.push(format!(
        "per token = {per_layer} B × {full_layers} full-attention layers = {full} B"
    ));
    if swa_layers > 0 {
        a.push(format!(
            "sliding window {window}: {swa_layers} layers hold at most {window} tokens per request ({sliding} B per token)"
        ));
    }
    let budget_bytes = (budget.max(0.0) * GIB) as u64;
    // Memory one request of `ctx` tokens needs.
    let per_request = |ctx: u64| {
        full.saturating_mul(ctx)
            .saturating_add(sliding.saturating_mul(ctx.min(window.max(1))))
    };
    // When every layer slides, capacity in tokens is what the window layers can hold.
    let kv_tokens = budget_bytes
        .checked_div(full)
        .unwrap_or_else(|| budget_bytes / sliding.max(1))
        / BLOCK
        * BLOCK;
    a.push(format!(
        "KV tokens = {budget_bytes} B / {} B per token, in blocks of {BLOCK} = {kv_tokens}",
        if full > 0 { full } else { sliding }
    ));
    let max_concurrency = if per_request(i.ctx) > 0 {
        budget_bytes as f64 / per_request(i.ctx) as f64
    } else {
        0.0
    };
    a.push(format!(
        "max concurrency at {} tokens = {budget_bytes} B / {} B per request = {max_concurrency:.2}x",
        i.ctx,
        per_request(i.ctx)
    ));
    // The longest single request: full layers take every token, sliding ones up to the window.
    let max_ctx = budget_bytes
        .saturating_sub(sliding.saturating_mul(window))
        .checked_div(full)
        .map_or(m.max_position, |t| t.min(m.max_position));
    let verdict = if budget <= 0.0 {
        Verdict::WeightsDoNotFit
    } else if i.ctx > m.max_position {
        Verdict::ContextAboveModelMax
    } else if max_concurrency < 1.0 {
        Verdict::KvTooSmallForContext
    } else if i.concurrency.is_some_and(|c| (c as f64) > max_concurrency) {
        Verdict::ConcurrencyQueues
    } else {
        Verdict::Fits
    };
    Ok(Report {
        weights_per_gpu_gib: weights_per_gpu,
        activation_gib: activation,
        kv_budget_gib: budget,
        kv_bytes_per_token: full,
        kv_bytes_per_token_sliding: sliding,
        kv_tokens,
        max_concurrency,
        max_ctx,
        verdict,
        arithmetic: a,
    })
}

/// What the engine itself reported at startup: vLLM's "GPU KV cache size: N tokens" and
/// "Maximum concurrency for L tokens per request: X" (one line in 0.33, two before).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    pub kv_tokens: Option<u64>,
    pub ctx: Option<u64>,
    pub max_concurrency: Option<f64>,
}

fn number_after(line: &str, marker: &str) -> Option<String> {
    let rest = &line[line.find(marker)? + marker.len()..];
    Some(
        rest.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
            .collect(),
    )
}

/// Reads the startup lines from a log.
pub fn observed(log: &str) -> Observed {
    let mut o = Observed::default();
    for line in log.lines() {
        if let Some(n) = number_after(line, "GPU KV cache size:") {
            o.kv_tokens = n.replace(',', "").parse().ok();
        }
        if let Some(n) = number_after(line, "Maximum concurrency for") {
            o.ctx = n.replace(',', "").parse().ok();
            if let Some(x) = number_after(line, "tokens per request:") {
                o.max_concurrency = x.trim_end_matches('.').parse().ok();
            }
        }
        // SGLang: "KV Cache is allocated. … #tokens: N".
        if line.contains("KV Cache is allocated") {
            if let Some(n) = number_after(line, "#tokens:") {
                o.kv_tokens = n.replace(',', "").parse().ok();
            }
        }
    }
    o
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
            non_torch_gib: 1.0,
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
