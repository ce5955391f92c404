//! The VRAM calculator against files and engines: reads a model directory (config.json, then the safetensors index's
//! `total_size` or each safetensors header), runs the calculator, and for a profile whose
//! engine has started compares the prediction with the engine's own startup lines.

use crate::clock::now_ms;
use crate::context::Context;
use crate::control::{logs, ControlError};
use app::domain::vram::{
    calculate, error_pct, index_total_size, observed, parse_config, safetensors_bytes, Calibration, EngineFamily,
    EngineSetup, Inputs, KvDtype, ModelShape, VramError,
};
use std::path::Path;

/// Why the calculator could not answer for a profile on this host, naming what stopped it.
#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    #[error(transparent)]
    Control(#[from] ControlError),
    /// No GPU to size against: the driver's own reason, or NVML lists none.
    #[error("{0}")]
    NoGpu(String),
    /// The model path leaves the models root.
    #[error("{0}")]
    Path(#[from] crate::config::PathError),
    /// The model's files or the calculator refuse them (naming the file or field).
    #[error(transparent)]
    Model(#[from] VramError),
    #[error("the engine has not logged its KV cache size yet")]
    NotLogged,
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

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

/// An untrusted config.json or index, read up to the model check's bound.
pub fn read_capped(path: &Path) -> Result<String, VramError> {
    crate::models::verify::read_capped(path).map_err(|e| VramError::Input {
        field: path.display().to_string(),
        detail: e.to_string(),
    })
}

/// Parameter estimate from the shape (attention, MLP or experts, embeddings), for model
/// directories without weights files (the demo's).
pub fn estimated_weight_bytes(m: &ModelShape) -> u64 {
    // Saturating: the shape comes from an untrusted config.json (bounded when parsed, but a
    // product of bounded fields can still pass 64 bits for absurd, in-bound combinations).
    let mul = |xs: &[u64]| xs.iter().fold(1u64, |a, x| a.saturating_mul(*x));
    let attn = mul(&[m.hidden, m.heads, m.head_dim])
        .saturating_add(mul(&[2, m.hidden, m.kv_heads, m.head_dim]))
        .saturating_add(mul(&[m.heads, m.head_dim, m.hidden]));
    let mlp = mul(&[3, m.hidden, m.intermediate, m.experts.unwrap_or(1)]);
    mul(&[m.layers, attn.saturating_add(mlp)])
        .saturating_add(mul(&[2, m.vocab, m.hidden]))
        .saturating_mul(m.dtype_bytes)
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
        let (_, header) =
            crate::models::verify::safetensors_header(f).map_err(|e| VramError::Safetensors(e.to_string()))?;
        total = total.saturating_add(safetensors_bytes(&header)?);
    }
    Ok((shape, total, WeightsSource::Headers { files: files.len() }))
}

/// The calculator's inputs a profile fixes: TP, memory fraction, context, KV dtype.
pub fn profile_inputs(p: &app::domain::profile::Profile) -> (u64, Option<f64>, Option<u64>, KvDtype) {
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

/// This host's GPUs as the calculator takes them: what CUDA will report as each one's size (NVML's
/// total less the driver's reserve), with NVML's total beside it; `Err` says why there are none.
pub async fn host_gpus() -> Result<Vec<app::api::HostGpu>, PredictError> {
    use app::domain::gpu::GpuState;
    match crate::gpu::read().await {
        GpuState::Available { gpus, .. } => Ok(gpus
            .iter()
            .map(|g| app::api::HostGpu {
                index: g.index,
                name: g.name.clone(),
                usable_gib: app::domain::vram_picture::usable_gib(g),
                total_gib: g.memory_total_bytes as f64 / (1u64 << 30) as f64,
            })
            .collect()),
        GpuState::NoDriver { reason } => Err(PredictError::NoGpu(reason)),
    }
}

/// The model directories under the models root, as the VRAM page lists them (the first 500,
/// sorted; unreadable ones are skipped and logged). Blocking: run it off the async workers.
pub fn models(root: &Path) -> Vec<app::api::ModelInfo> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return out;
    };
    let mut dirs: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs.into_iter().take(500) {
        match read_model_dir(&dir, None) {
            Ok((shape, weights_bytes, source)) => out.push(app::api::ModelInfo {
                name: dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                shape,
                weights_bytes,
                weights_source: match source {
                    WeightsSource::Index => "index".into(),
                    WeightsSource::Headers { .. } => "headers".into(),
                    _ => "estimated".into(),
                },
            }),
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "model directory skipped by the VRAM calculator")
            }
        }
    }
    out
}

/// A profile as the calculator sees it on this host: the model's shape, the inputs (GPU from
/// NVML, or the simulator's size), and the calibration key.
pub struct ProfileSetup {
    pub shape: ModelShape,
    pub inputs: Inputs,
    pub gpu_source: &'static str,
    pub gpu_name: String,
    pub engine_version: String,
    pub model: String,
}

/// Builds the calculator's inputs for a stored profile.
pub async fn profile_setup(ctx: &Context, name: &str) -> Result<ProfileSetup, PredictError> {
    profile_setup_as(ctx, name, None).await
}

/// Like [`profile_setup`], for a candidate body of the profile when given (an edit in the
/// editor, a change under its gate).
pub async fn profile_setup_as(
    ctx: &Context,
    name: &str,
    candidate: Option<app::domain::profile::Profile>,
) -> Result<ProfileSetup, PredictError> {
    let resolved = ctx.control.resolve_as(name, candidate).await?;
    let base = resolved.base_url();
    let crate::control::Resolved {
        profile: prof,
        simulated,
        kind,
        ..
    } = resolved;
    let (gpu_gib, gpu_source, gpu_name) = if simulated {
        let gib: f64 = prof
            .env
            .get("ROOFLINE_SIM_GPU_GIB")
            .and_then(|v| v.parse().ok())
            .unwrap_or(80.0);
        (gib, "simulator", format!("simulated {gib:.0} GiB"))
    } else {
        match crate::gpu::read().await {
            app::domain::gpu::GpuState::Available { gpus, .. } if !gpus.is_empty() => (
                app::domain::vram_picture::usable_gib(&gpus[0]),
                "nvml",
                gpus[0].name.clone(),
            ),
            app::domain::gpu::GpuState::NoDriver { reason } => return Err(PredictError::NoGpu(reason)),
            _ => return Err(PredictError::NoGpu("NVML lists no GPU".into())),
        }
    };
    let dir = crate::config::confined(&ctx.data.models_root(), Path::new(&prof.model)).map_err(PredictError::Path)?;
    // config.json and the safetensors headers are read off the async workers (up to 100 MB).
    let (shape, weights_bytes, _) = tokio::task::spawn_blocking(move || read_model_dir(&dir, None))
        .await
        .map_err(anyhow::Error::from)??;
    let (tp, util, context_len, kv_dtype) = profile_inputs(&prof);
    let family = match kind {
        app::domain::engine::EngineKind::Vllm => EngineFamily::Vllm,
        app::domain::engine::EngineKind::Sglang => EngineFamily::Sglang,
    };
    // The version is part of the calibration key: a healthy engine whose version is not
    // cached yet (the monitor can see it healthy before the serve loop asked) is asked now,
    // or a start would be calibrated under "unknown" and never found again.
    let version = match ctx.control.cached_version(name) {
        Some(v) => Some(v),
        None if ctx.control.is_running(name) => crate::engine::Engine::at(&base).version().await,
        None => None,
    };
    let engine = EngineSetup::of_profile(
        &prof,
        family,
        version.clone(),
        (gpu_source == "nvml").then(|| gpu_name.clone()),
    );
    let inputs = Inputs {
        weights_bytes,
        gpu_gib,
        tp,
        util: util.unwrap_or(0.9),
        ctx: context_len.unwrap_or(shape.max_position.min(32768)),
        kv_dtype,
        concurrency: None,
        activation_gib: None,
        non_torch_gib: None,
        engine,
        calibration: None,
    };
    Ok(ProfileSetup {
        shape,
        inputs,
        gpu_source,
        gpu_name,
        engine_version: version.unwrap_or_else(|| "unknown".into()),
        model: prof.model.clone(),
    })
}

/// Calibrations in SQLite, one row per start.
#[derive(Clone)]
pub struct CalibrationStore {
    pool: crate::db::Pool,
}

impl CalibrationStore {
    pub fn new(pool: crate::db::Pool) -> Self {
        Self { pool }
    }

    pub async fn record(&self, c: &Calibration) -> Result<(), sqlx::Error> {
        sqlx::query("insert into vram_calibration (gpu_name, engine_version, model, tp, at_ms, profile, calibration) values ($1, $2, $3, $4, $5, $6, $7)")
            .bind(&c.gpu_name)
            .bind(&c.engine_version)
            .bind(&c.model)
            .bind(c.tp as i64)
            .bind(c.at_ms)
            .bind(&c.profile)
            .bind(serde_json::to_string(c).unwrap_or_default())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The latest calibration for this GPU, engine version, model and TP from before `before_ms`.
    pub async fn latest(&self, s: &ProfileSetup, before_ms: i64) -> Option<Calibration> {
        // Advice: while the database is away the prediction goes uncalibrated.
        if crate::db::away() {
            return None;
        }
        let row: Option<(String,)> = sqlx::query_as(
            "select calibration from vram_calibration where gpu_name = $1 and engine_version = $2 and model = $3 and tp = $4 and at_ms < $5 order by at_ms desc limit 1",
        )
        .bind(&s.gpu_name)
        .bind(&s.engine_version)
        .bind(&s.model)
        .bind(s.inputs.tp as i64)
        .bind(before_ms)
        .fetch_optional(&self.pool)
        .await
        .ok()
        .flatten();
        row.and_then(|(json,)| serde_json::from_str(&json).ok())
    }

    async fn has_start(&self, profile: &str, at_ms: i64) -> bool {
        if crate::db::away() {
            // Taken as done: a calibration is not written while the database is away.
            return true;
        }
        sqlx::query_scalar::<_, i64>(
            "select count(*) from vram_calibration where profile = $1 and at_ms between $2 and $3",
        )
        .bind(profile)
        .bind(at_ms - 5_000)
        .bind(at_ms + 5_000)
        .fetch_one(&self.pool)
        .await
        .is_ok_and(|n| n > 0)
    }
}

/// When the profile's running engine started (Unix ms), from its process uptime.
async fn started_at_ms(ctx: &Context, name: &str) -> Option<i64> {
    let prof = ctx.store.get(name).await.ok().flatten()?.profile;
    let up = ctx.control.status(&prof).await.uptime_s?;
    Some(now_ms() - (up as i64).saturating_mul(1000))
}

/// Self-calibration: after a start became healthy, reads the engine's own memory lines and
/// keeps what they measured for this GPU, engine version, model and TP. Once per start.
pub async fn calibrate(ctx: &Context, name: &str) -> Result<Option<Calibration>, PredictError> {
    let setup = profile_setup(ctx, name).await?;
    let at_ms = started_at_ms(ctx, name).await.unwrap_or_else(now_ms);
    let store = CalibrationStore::new(ctx.pool.clone());
    if store.has_start(name, at_ms).await {
        return Ok(None);
    }
    let path = ctx.control.log_path(name);
    let lines = tokio::task::spawn_blocking(move || logs::tail(&path, 5000))
        .await
        .map_err(anyhow::Error::from)?
        .map_err(anyhow::Error::from)?;
    let seen = observed(&lines.join("\n"));
    let Some(c) = Calibration::from_start(
        &seen,
        &setup.shape,
        &setup.inputs,
        at_ms,
        name,
        &setup.gpu_name,
        &setup.engine_version,
        &setup.model,
    ) else {
        return Ok(None);
    };
    store.record(&c).await.map_err(anyhow::Error::from)?;
    Ok(Some(c))
}

/// The engine page's check: the prediction for the profile on this host's GPU (NVML's first
/// GPU; for a simulated engine the simulator's GPU size), calibrated by the starts before this
/// one, against the engine's own startup lines.
pub async fn engine_check(ctx: &Context, name: &str) -> Result<app::api::VramCheck, PredictError> {
    let mut setup = profile_setup(ctx, name).await?;
    let started = started_at_ms(ctx, name).await.unwrap_or_else(now_ms);
    let store = CalibrationStore::new(ctx.pool.clone());
    setup.inputs.calibration = store.latest(&setup, started - 5_000).await;
    let report = calculate(&setup.shape, &setup.inputs)?;
    let lines = logs::tail(&ctx.control.log_path(name), 5000).map_err(anyhow::Error::from)?;
    let seen = observed(&lines.join("\n"));
    let Some(tokens) = seen.kv_tokens else {
        return Err(PredictError::NotLogged);
    };
    Ok(app::api::VramCheck {
        gpu_gib: setup.inputs.gpu_gib,
        gpu_source: setup.gpu_source.into(),
        predicted_tokens: report.kv_tokens,
        predicted_concurrency: report.max_concurrency,
        predicted_kv_gib: report.kv_budget_gib,
        calibrated_from_ms: setup.inputs.calibration.as_ref().map(|c| c.at_ms),
        error_pct: error_pct(report.kv_tokens as f64, tokens as f64),
        observed: seen,
    })
}

/// The prediction for a profile (its stored body, or a candidate: an edit, a change under its
/// gate) on this host's GPU, calibrated by the profile's latest start with the same GPU,
/// engine version, model and TP. Editor, gate and calculator page all ask this one question.
pub async fn predict(
    ctx: &Context,
    name: &str,
    candidate: Option<app::domain::profile::Profile>,
) -> Result<app::api::VramPrediction, PredictError> {
    let mut setup = profile_setup_as(ctx, name, candidate).await?;
    let store = CalibrationStore::new(ctx.pool.clone());
    setup.inputs.calibration = store.latest(&setup, i64::MAX).await;
    let report = calculate(&setup.shape, &setup.inputs)?;
    Ok(app::api::VramPrediction {
        gpu_gib: setup.inputs.gpu_gib,
        gpu_source: setup.gpu_source.into(),
        gpu_name: setup.gpu_name,
        engine_version: setup.engine_version,
        model: setup.model,
        ctx: setup.inputs.ctx,
        calibrated_from_ms: setup.inputs.calibration.as_ref().map(|c| c.at_ms),
        report,
        tp: setup.inputs.tp,
        curve: app::domain::vram_picture::concurrency_curve(&setup.shape, &setup.inputs),
    })
}
