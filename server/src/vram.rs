//! `roofline vram`: reads a model directory (config.json, then the safetensors index's
//! `total_size` or each safetensors header), runs the calculator, and for a profile whose
//! engine has started compares the prediction with the engine's own startup lines.

use crate::control::{logs, EngineControl};
use app::domain::vram::{
    calculate, error_pct, index_total_size, observed, parse_config, safetensors_bytes, Inputs, KvDtype, ModelShape,
    Report, VramError,
};
use std::io::Read;
use std::path::Path;

/// The largest config.json or safetensors header read (both are untrusted files).
const MAX_JSON: u64 = 100 << 20;

/// Where the weight size came from, for the report.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightsSource {
    Given,
    Index,
    Headers {
        files: usize,
    },
    /// No safetensors: estimated from the config's shape at the model's dtype.
    Estimated,
}

fn read_capped(path: &Path) -> Result<String, VramError> {
    let f = std::fs::File::open(path).map_err(|e| VramError::Input {
        field: path.display().to_string(),
        detail: e.to_string(),
    })?;
    let mut text = String::new();
    f.take(MAX_JSON)
        .read_to_string(&mut text)
        .map_err(|e| VramError::Input {
            field: path.display().to_string(),
            detail: e.to_string(),
        })?;
    Ok(text)
}

/// The JSON header of one safetensors file (8-byte little-endian length, then JSON).
fn header_of(path: &Path) -> Result<String, VramError> {
    let bad = |d: String| VramError::Safetensors(format!("{}: {d}", path.display()));
    let mut f = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len).map_err(|e| bad(e.to_string()))?;
    let n = u64::from_le_bytes(len);
    if n == 0 || n > MAX_JSON {
        return Err(bad(format!("header length {n} is not plausible")));
    }
    let mut buf = vec![0u8; n as usize];
    f.read_exact(&mut buf).map_err(|e| bad(e.to_string()))?;
    String::from_utf8(buf).map_err(|e| bad(e.to_string()))
}

/// Parameter estimate from the shape (attention, MLP or experts, embeddings), for model
/// directories without weights files (the demo's).
pub fn estimated_weight_bytes(m: &ModelShape) -> u64 {
    let attn =
        m.hidden * m.heads * m.head_dim + 2 * m.hidden * m.kv_heads * m.head_dim + m.heads * m.head_dim * m.hidden;
    let mlp = 3 * m.hidden * m.intermediate * m.experts.unwrap_or(1);
    (m.layers * (attn + mlp) + 2 * m.vocab * m.hidden) * m.dtype_bytes
}

/// Reads a model directory's shape and weight size.
pub fn read_model_dir(dir: &Path, weights_gib: Option<f64>) -> Result<(ModelShape, u64, WeightsSource), VramError> {
    let shape = parse_config(&read_capped(&dir.join("config.json"))?)?;
    if let Some(g) = weights_gib {
        return Ok((shape, (g * (1u64 << 30) as f64) as u64, WeightsSource::Given));
    }
    let index = dir.join("model.safetensors.index.json");
    if index.exists() {
        return Ok((shape, index_total_size(&read_capped(&index)?)?, WeightsSource::Index));
    }
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| VramError::Input {
            field: dir.display().to_string(),
            detail: e.to_string(),
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        let bytes = estimated_weight_bytes(&shape);
        return Ok((shape, bytes, WeightsSource::Estimated));
    }
    let mut total = 0u64;
    for f in &files {
        total = total.saturating_add(safetensors_bytes(&header_of(f)?)?);
    }
    Ok((shape, total, WeightsSource::Headers { files: files.len() }))
}

/// `roofline vram`'s options.
#[derive(clap::Args, Debug)]
pub struct VramArgs {
    /// A model directory (config.json + safetensors or their index).
    #[arg(long, conflicts_with_all = ["config", "profile"])]
    pub model: Option<std::path::PathBuf>,
    /// A config.json alone (give --weights-gib, or the weights are estimated).
    #[arg(long, conflicts_with = "profile")]
    pub config: Option<std::path::PathBuf>,
    /// A launch profile: its model, TP, context, memory fraction and KV dtype.
    #[arg(long)]
    pub profile: Option<String>,
    #[arg(long)]
    pub weights_gib: Option<f64>,
    /// Memory of one GPU, GiB.
    #[arg(long)]
    pub gpu_gib: f64,
    #[arg(long)]
    pub tp: Option<u64>,
    /// GPU memory utilisation (vLLM --gpu-memory-utilization / SGLang --mem-fraction-static).
    #[arg(long)]
    pub util: Option<f64>,
    /// Context length per request (max-model-len).
    #[arg(long)]
    pub ctx: Option<u64>,
    #[arg(long, value_parser = ["auto", "fp8"])]
    pub kv_dtype: Option<String>,
    /// Requests that should run at once.
    #[arg(long)]
    pub concurrency: Option<u64>,
    /// Peak activations per GPU (default: estimated from the shape).
    #[arg(long)]
    pub activation_gib: Option<f64>,
    /// CUDA context, NCCL and CUDA graphs per GPU.
    #[arg(long, default_value_t = 1.0)]
    pub non_torch_gib: f64,
}

/// Runs `roofline vram`; exit 0 fits, 1 does not fit (or the engine disagrees by over 10%),
/// 2 bad input.
/// The calculator's inputs a profile fixes: TP, memory fraction, context, KV dtype.
fn profile_inputs(p: &app::domain::profile::Profile) -> (u64, Option<f64>, Option<u64>, KvDtype) {
    (
        p.tensor_parallel as u64,
        p.mem_fraction,
        p.context_length.map(u64::from),
        match p.kv_cache_dtype.as_deref() {
            Some(d) if d.starts_with("fp8") => KvDtype::Fp8,
            _ => KvDtype::Auto,
        },
    )
}

/// The engine page's check: the prediction for the profile on this host's GPU (NVML's first
/// GPU; for a simulated engine the simulator's GPU size) against the engine's startup lines.
pub async fn engine_check(control: &EngineControl, name: &str) -> Result<app::api::VramCheck, String> {
    let (prof, _, simulated, _) = control.resolve(name).await.map_err(|e| e.to_string())?;
    let (gpu_gib, gpu_source) = if simulated {
        let gib = prof
            .env
            .get("ROOFLINE_SIM_GPU_GIB")
            .and_then(|v| v.parse().ok())
            .unwrap_or(80.0);
        (gib, "simulator")
    } else {
        match tokio::task::spawn_blocking(|| crate::gpu::source().read()).await {
            Ok(app::domain::gpu::GpuState::Available { gpus, .. }) if !gpus.is_empty() => {
                (gpus[0].memory_total_bytes as f64 / (1u64 << 30) as f64, "nvml")
            }
            Ok(app::domain::gpu::GpuState::NoDriver { reason }) => return Err(reason),
            _ => return Err("NVML lists no GPU".into()),
        }
    };
    let dir = crate::config::confined(&control.data.models_root(), Path::new(&prof.model))?;
    let (shape, weights_bytes, _) = read_model_dir(&dir, None).map_err(|e| e.to_string())?;
    let (tp, util, ctx, kv_dtype) = profile_inputs(&prof);
    let inputs = Inputs {
        weights_bytes,
        gpu_gib,
        tp,
        util: util.unwrap_or(0.9),
        ctx: ctx.unwrap_or(shape.max_position.min(32768)),
        kv_dtype,
        concurrency: None,
        activation_gib: None,
        non_torch_gib: 1.0,
    };
    let report = calculate(&shape, &inputs).map_err(|e| e.to_string())?;
    let lines = logs::tail(&control.log_path(name), 5000).map_err(|e| e.to_string())?;
    let seen = observed(&lines.join("\n"));
    let Some(tokens) = seen.kv_tokens else {
        return Err("the engine has not logged its KV cache size yet".into());
    };
    Ok(app::api::VramCheck {
        gpu_gib,
        gpu_source: gpu_source.into(),
        predicted_tokens: report.kv_tokens,
        predicted_concurrency: report.max_concurrency,
        error_pct: error_pct(report.kv_tokens as f64, tokens as f64),
        observed: seen,
    })
}

pub async fn run(control: &EngineControl, a: VramArgs, json: bool) -> i32 {
    let mut tp = a.tp;
    let mut util = a.util;
    let mut ctx = a.ctx;
    let mut kv_dtype = a
        .kv_dtype
        .as_deref()
        .map(|k| if k == "fp8" { KvDtype::Fp8 } else { KvDtype::Auto });
    let mut log_path = None;
    let loaded = match (&a.profile, &a.model, &a.config) {
        (Some(p), None, None) => match control.resolve(p).await {
            Ok((prof, _, _, _)) => {
                let (p_tp, p_util, p_ctx, p_kv) = profile_inputs(&prof);
                tp = tp.or(Some(p_tp));
                util = util.or(p_util);
                ctx = ctx.or(p_ctx);
                kv_dtype = kv_dtype.or(Some(p_kv));
                log_path = Some(control.log_path(p));
                match crate::config::confined(&control.data.models_root(), Path::new(&prof.model)) {
                    Ok(dir) => read_model_dir(&dir, a.weights_gib),
                    Err(e) => {
                        eprintln!("{e}");
                        return 2;
                    }
                }
            }
            Err(e) => {
                eprintln!("{e}");
                return 2;
            }
        },
        (None, Some(dir), None) => read_model_dir(dir, a.weights_gib),
        (None, None, Some(cfg)) => match a.weights_gib {
            Some(g) => read_capped(cfg)
                .and_then(|t| parse_config(&t))
                .map(|s| (s, (g * (1u64 << 30) as f64) as u64, WeightsSource::Given)),
            None => read_capped(cfg).and_then(|t| parse_config(&t)).map(|s| {
                let b = estimated_weight_bytes(&s);
                (s, b, WeightsSource::Estimated)
            }),
        },
        _ => {
            eprintln!("vram: give exactly one of --model DIR, --config config.json or --profile NAME");
            return 2;
        }
    };
    let (shape, weights_bytes, source) = match loaded {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let inputs = Inputs {
        weights_bytes,
        gpu_gib: a.gpu_gib,
        tp: tp.unwrap_or(1),
        util: util.unwrap_or(0.9),
        ctx: ctx.unwrap_or(shape.max_position.min(32768)),
        kv_dtype: kv_dtype.unwrap_or_default(),
        concurrency: a.concurrency,
        activation_gib: a.activation_gib,
        non_torch_gib: a.non_torch_gib,
    };
    let report = match calculate(&shape, &inputs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let seen = log_path
        .and_then(|p| logs::tail(&p, 5000).ok())
        .map(|lines| observed(&lines.join("\n")))
        .filter(|o| o.kv_tokens.is_some());
    let err = seen
        .as_ref()
        .and_then(|o| o.kv_tokens)
        .and_then(|t| error_pct(report.kv_tokens as f64, t as f64));
    if json {
        println!(
            "{}",
            serde_json::json!({"model": shape, "inputs": inputs, "weights_source": source, "report": report, "observed": seen, "kv_tokens_error_pct": err})
        );
    } else {
        print_report(&shape, &inputs, &source, &report);
        if let (Some(o), Some(e)) = (&seen, err) {
            println!(
                "engine reported: GPU KV cache size {} tokens{}; prediction error {e:+.1}%",
                o.kv_tokens.unwrap_or(0),
                o.max_concurrency
                    .map(|c| format!(", maximum concurrency {c:.2}x for {} tokens", o.ctx.unwrap_or(0)))
                    .unwrap_or_default()
            );
        }
    }
    let disagrees = err.is_some_and(|e| e.abs() > 10.0);
    if report.verdict.fits() && !disagrees {
        0
    } else {
        1
    }
}

fn print_report(shape: &ModelShape, i: &Inputs, source: &WeightsSource, r: &Report) {
    println!(
        "{} · {} layers · {} KV heads × {} · {}",
        shape.architecture,
        shape.layers,
        shape.kv_heads,
        shape.head_dim,
        match (shape.mla, shape.sliding, shape.experts) {
            (Some(_), _, _) => "MLA".to_string(),
            (_, Some((w, n)), _) => format!("sliding window {w} on {n} layers"),
            (_, _, Some(e)) => format!("MoE, {e} experts"),
            _ => "dense".to_string(),
        }
    );
    println!(
        "weights {:.2} GiB ({}), GPU {:.1} GiB × TP {}, utilisation {:.2}, context {}, KV {:?}",
        i.weights_bytes as f64 / (1u64 << 30) as f64,
        match source {
            WeightsSource::Given => "given".to_string(),
            WeightsSource::Index => "safetensors index".to_string(),
            WeightsSource::Headers { files } => format!("{files} safetensors headers"),
            WeightsSource::Estimated => "estimated from config.json: no safetensors".to_string(),
        },
        i.gpu_gib,
        i.tp,
        i.util,
        i.ctx,
        i.kv_dtype
    );
    for line in &r.arithmetic {
        println!("  {line}");
    }
    println!(
        "weights per GPU {:.2} GiB · KV per token {} B · KV tokens {} · max concurrency at {} tokens {:.2}x · longest context {}",
        r.weights_per_gpu_gib, r.kv_bytes_per_token, r.kv_tokens, i.ctx, r.max_concurrency, r.max_ctx
    );
    println!("verdict: {}", r.verdict.id());
}
