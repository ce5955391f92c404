//! The VRAM calculator behind `VramService`.

use super::{control_error, profiles};
use crate::api_error::internal;
use crate::context::Context;
use app::api::service::BoxFut;
use app::api::{ApiError, HostGpu, ModelInfo, VramCheck, VramPrediction, VramService};

pub struct Adapter(pub Context);

/// Calculator errors as the UI explains them: a profile or installation that is not there by
/// its own message, the rest (no GPU, the model's files, nothing logged yet) as the reason.
fn error(e: crate::vram::PredictError) -> ApiError {
    use crate::vram::PredictError as E;
    match e {
        E::Control(c) => control_error(c),
        E::Internal(e) => internal(e),
        other => ApiError::Invalid(other.to_string()),
    }
}

impl VramService for Adapter {
    fn check(&self, profile: String) -> BoxFut<'_, Result<VramCheck, ApiError>> {
        Box::pin(async move { crate::vram::engine_check(&self.0, &profile).await.map_err(error) })
    }

    fn predict(&self, profile: String, env_text: Option<String>) -> BoxFut<'_, Result<VramPrediction, ApiError>> {
        Box::pin(async move {
            let candidate = env_text
                .map(|t| crate::profiles::parse(&profile, &t))
                .transpose()
                .map_err(profiles::error)?;
            crate::vram::predict(&self.0, &profile, candidate).await.map_err(error)
        })
    }

    fn models(&self) -> BoxFut<'_, Result<Vec<ModelInfo>, ApiError>> {
        Box::pin(async move {
            let root = self.0.data.models_root();
            tokio::task::spawn_blocking(move || crate::vram::models(&root))
                .await
                .map_err(internal)
        })
    }

    fn host_gpus(&self) -> BoxFut<'_, Result<Vec<HostGpu>, ApiError>> {
        Box::pin(async move { crate::vram::host_gpus().await.map_err(error) })
    }
}
