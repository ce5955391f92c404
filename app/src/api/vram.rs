//! The VRAM calculator's server side: model directories and a running engine's KV check.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A model directory under the models root, as the VRAM calculator needs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct ModelInfo {
    pub name: String,
    pub shape: crate::domain::vram::ModelShape,
    pub weights_bytes: u64,
    /// `index`, `headers` or `estimated`.
    pub weights_source: String,
}

/// A running engine's own startup report of its KV cache against the calculator's prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct VramCheck {
    /// GPU memory used for the prediction, and where it came from (`nvml`, `simulator`).
    pub gpu_gib: f64,
    pub gpu_source: String,
    pub predicted_tokens: u64,
    pub predicted_concurrency: f64,
    /// The predicted KV pool, GiB (against the engine's "Available KV cache memory").
    #[serde(default)]
    pub predicted_kv_gib: f64,
    /// The earlier start the prediction was calibrated from (Unix ms), if any.
    #[serde(default)]
    pub calibrated_from_ms: Option<i64>,
    pub observed: crate::domain::vram::Observed,
    /// Prediction against the engine's "GPU KV cache size", in percent.
    pub error_pct: Option<f64>,
}

#[cfg(feature = "ssr")]
pub use ssr::VramService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// The VRAM calculator on this host: predictions, the engine's check, models and GPUs. Implemented by the server.
    pub trait VramService: Send + Sync {
        /// The engine's logged KV cache size against the calculator.
        fn check(&self, profile: String) -> BoxFut<'_, Result<VramCheck, ApiError>>;
        fn predict(&self, profile: String, env_text: Option<String>) -> BoxFut<'_, Result<VramPrediction, ApiError>>;
        /// The models under the models root, read for the calculator.
        fn models(&self) -> BoxFut<'_, Result<Vec<ModelInfo>, ApiError>>;
        /// This host's GPUs as the calculator takes them.
        fn host_gpus(&self) -> BoxFut<'_, Result<Vec<HostGpu>, ApiError>>;
    }
}

/// The KV cache check of a profile's engine; `Err` says why there is none (no driver, the
/// engine has not logged its size yet).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_vram_check")]
pub async fn get_vram_check(profile: String) -> Result<VramCheck, ApiError> {
    service::authorized("get_vram_check")?.vram.check(profile).await
}

/// The calculator's prediction for a profile on this host, calibrated from its latest start
/// when there is one: what the editor, the gate and the calculator page show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct VramPrediction {
    /// GPU memory used, and where it came from (`nvml`, `simulator`), with the GPU's name.
    pub gpu_gib: f64,
    pub gpu_source: String,
    pub gpu_name: String,
    /// The engine version the arithmetic followed (`unknown` before the first flag check).
    pub engine_version: String,
    pub model: String,
    /// The context the verdict is for (the profile's, else the model's up to 32k).
    pub ctx: u64,
    /// The start the prediction was calibrated from (Unix ms), if any.
    pub calibrated_from_ms: Option<i64>,
    pub report: crate::domain::vram::Report,
    /// GPUs the profile spans (tensor parallel).
    #[serde(default)]
    pub tp: u64,
    /// Maximum concurrency against context length for the same inputs.
    #[serde(default)]
    pub curve: Vec<crate::domain::vram_picture::CurvePoint>,
}

/// The prediction for a profile: the stored one, or the editor's text of it when given (a
/// profile not saved yet is predicted as written).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "predict_profile_vram")]
pub async fn predict_profile_vram(profile: String, env_text: Option<String>) -> Result<VramPrediction, ApiError> {
    service::authorized("predict_profile_vram")?
        .vram
        .predict(profile, env_text)
        .await
}

/// Models under the configured models root (unreadable ones are skipped and logged).
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_models")]
pub async fn list_models() -> Result<Vec<ModelInfo>, ApiError> {
    service::authorized("list_models")?.vram.models().await
}

/// A GPU of this host as the calculator takes it: what CUDA will report as its size (NVML's
/// total less the driver's reserve), with NVML's own total beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct HostGpu {
    pub index: u32,
    pub name: String,
    pub usable_gib: f64,
    pub total_gib: f64,
}

/// The GPUs NVML reads on this host; `Err` says why there are none ("no NVIDIA driver: …").
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_host_gpus")]
pub async fn list_host_gpus() -> Result<Vec<HostGpu>, ApiError> {
    service::authorized("list_host_gpus")?.vram.host_gpus().await
}
