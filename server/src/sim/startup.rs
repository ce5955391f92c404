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
        layers,
        kv_heads,
        head_dim,
        params,
        max_position: num("max_position_embeddings").unwrap_or(32768),
    })
}

const GIB: f64 = (1u64 << 30) as f64;

/// The KV budget, computed the way vLLM V1 does (see DESIGN.md).
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub gpu_gib: f64,
    pub weights_gib: f64,
    pub kv_gib: f64,
    pub kv_bytes_per_token: u64,
    pub kv_tokens: u64,
    pub max_model_len: u64,
}

pub fn budget(args: &SimArgs, m: &ModelFacts, gpu_gib: f64) -> Budget {
    // Bytes per weight: bf16 unless the operator tells the simulator otherwise (fp8 builds: 1).
    let weight_bytes: f64 = std::env::var("ROOFLINE_SIM_WEIGHT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let weights_gib = m.params as f64 * weight_bytes / GIB / args.tp as f64;
    let activation_gib = 1.0;
    let mut kv_gib = gpu_gib * args.mem_fraction - weights_gib - activation_gib;
    if args.faults.contains(&Fault::KvTooSmall) {
        kv_gib = kv_gib.min(0.05);
    }
    let dtype_bytes = if args.kv_cache_dtype.starts_with("fp8") { 1 } else { 2 };
    let heads = (m.kv_heads / args.tp as u64).max(1);
    let kv_bytes_per_token = 2 * heads * m.head_dim * dtype_bytes * m.layers;
    let kv_tokens = if kv_gib > 0.0 {
        ((kv_gib * GIB) as u64 / kv_bytes_per_token) / 16 * 16
    } else {
        0
    };
    let max_model_len = args.max_model_len.map(u64::from).unwrap_or(m.max_position);
    Budget {
        gpu_gib,
        weights_gib,
        kv_gib,
        kv_bytes_per_token,
        kv_tokens,
        max_model_len,
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
