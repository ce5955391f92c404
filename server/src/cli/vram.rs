//! `roofline vram`: the calculator from the shell, for a model directory, a config.json alone
//! or a profile (then compared with the engine's own startup lines).

use crate::context::Context;
use crate::control::logs;
use crate::vram::{estimated_weight_bytes, profile_inputs, read_capped, read_model_dir, WeightsSource};
use app::domain::vram::{
    calculate, error_pct, observed, parse_config, EngineFamily, EngineSetup, Inputs, KvDtype, ModelShape, Report,
};
use std::path::Path;

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
    /// CUDA context and NCCL per GPU (default: estimated for the engine and TP).
    #[arg(long)]
    pub non_torch_gib: Option<f64>,
    /// The engine (default: the profile's, else vllm).
    #[arg(long, value_parser = ["vllm", "sglang"])]
    pub engine: Option<String>,
    /// The engine's version (default: what the profile's engine reported at its last start;
    /// unknown widens the range).
    #[arg(long)]
    pub engine_version: Option<String>,
    /// vLLM --max-num-batched-tokens (the profile run's batch).
    #[arg(long)]
    pub max_num_batched_tokens: Option<u64>,
    /// vLLM --max-num-seqs (the sampler's profile rows).
    #[arg(long)]
    pub max_num_seqs: Option<u64>,
    #[arg(long)]
    pub block_size: Option<u64>,
    #[arg(long)]
    pub enforce_eager: bool,
    /// The GPU's name (NVML): vLLM takes other defaults on A100.
    #[arg(long)]
    pub gpu_name: Option<String>,
}

/// Runs `roofline vram`; exit 0 fits, 1 does not fit (or the engine disagrees by over 10%),
/// 2 bad input.
pub async fn run(ctx: &Context, a: VramArgs, json: bool) -> i32 {
    let mut tp = a.tp;
    let mut util = a.util;
    let mut context_len = a.ctx;
    let mut kv_dtype = a
        .kv_dtype
        .as_deref()
        .map(|k| if k == "fp8" { KvDtype::Fp8 } else { KvDtype::Auto });
    let mut log_path = None;
    let mut engine = EngineSetup::default();
    let loaded = match (&a.profile, &a.model, &a.config) {
        (Some(p), None, None) => match ctx.control.resolve(p).await {
            Ok(crate::control::Resolved {
                profile: prof, kind, ..
            }) => {
                let family = match kind {
                    app::domain::engine::EngineKind::Vllm => EngineFamily::Vllm,
                    app::domain::engine::EngineKind::Sglang => EngineFamily::Sglang,
                };
                engine = EngineSetup::of_profile(&prof, family, ctx.control.cached_version(p), None);
                let (p_tp, p_util, p_ctx, p_kv) = profile_inputs(&prof);
                tp = tp.or(Some(p_tp));
                util = util.or(p_util);
                context_len = context_len.or(p_ctx);
                kv_dtype = kv_dtype.or(Some(p_kv));
                log_path = Some(ctx.control.log_path(p));
                match crate::config::confined(&ctx.data.models_root(), Path::new(&prof.model)) {
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
    if let Some(e) = &a.engine {
        engine.family = if e == "sglang" {
            EngineFamily::Sglang
        } else {
            EngineFamily::Vllm
        };
    }
    engine.version = a.engine_version.clone().or(engine.version);
    engine.max_num_batched_tokens = a.max_num_batched_tokens.or(engine.max_num_batched_tokens);
    engine.max_num_seqs = a.max_num_seqs.or(engine.max_num_seqs);
    engine.block_size = a.block_size.or(engine.block_size);
    engine.enforce_eager |= a.enforce_eager;
    engine.gpu_name = a.gpu_name.clone();
    let mut inputs = Inputs {
        weights_bytes,
        gpu_gib: a.gpu_gib,
        tp: tp.unwrap_or(1),
        util: util.unwrap_or(0.9),
        ctx: context_len.unwrap_or(shape.max_position.min(32768)),
        kv_dtype: kv_dtype.unwrap_or_default(),
        concurrency: a.concurrency,
        activation_gib: a.activation_gib,
        non_torch_gib: a.non_torch_gib,
        engine,
        calibration: None,
    };
    // A profile's earlier starts on this GPU calibrate the prediction (same GPU, engine
    // version, model and TP).
    if let Some(p) = &a.profile {
        if let Ok(setup) = crate::vram::profile_setup(ctx, p).await {
            if (setup.inputs.gpu_gib - inputs.gpu_gib).abs() < 0.5 && setup.inputs.tp == inputs.tp {
                let store = crate::vram::CalibrationStore::new(ctx.pool.clone());
                inputs.calibration = store.latest(&setup, i64::MAX).await;
            }
        }
    }
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
    println!("engine: {}", r.path);
    for line in &r.arithmetic {
        println!("  {line}");
    }
    println!(
        "weights per GPU {:.2} GiB · KV per token {} B · KV tokens {} · max concurrency at {} tokens {:.2}x · longest context {}",
        r.weights_per_gpu_gib, r.kv_bytes_per_token, r.kv_tokens, i.ctx, r.max_concurrency, r.max_ctx
    );
    println!(
        "KV budget {:.2} GiB (range {:.2} … {:.2} over the unknown inputs) · KV tokens {} … {}",
        r.kv_budget_gib, r.kv_budget_range_gib.0, r.kv_budget_range_gib.1, r.kv_tokens_range.0, r.kv_tokens_range.1
    );
    println!(
        "verdict: {}{}",
        r.verdict.id(),
        if r.marginal {
            " (marginal: the range crosses the line)"
        } else {
            ""
        }
    );
}
