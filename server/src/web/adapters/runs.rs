//! The runs feature behind `RunService`.

use super::control_error;
use crate::api_error::internal;
use crate::runs::live::{LiveRuns, RunError};
use app::api::service::BoxFut;
use app::api::{ApiError, BenchRequest, BenchRun, RunService, SmokeRun};

pub struct Adapter(pub LiveRuns);

fn error(e: RunError) -> ApiError {
    match e {
        RunError::Control(c) => control_error(c),
        RunError::Invalid(why) => ApiError::Invalid(why),
        RunError::Internal(e) => internal(e),
    }
}

impl RunService for Adapter {
    fn start(&self, who: String, profile: String, bench: Option<BenchRequest>) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.0.start(&who, &profile, bench).await.map_err(error) })
    }

    fn benches(&self, profile: Option<String>, ids: Vec<i64>) -> BoxFut<'_, Result<Vec<BenchRun>, ApiError>> {
        Box::pin(async move { self.0.benches(profile.as_deref(), &ids).await.map_err(error) })
    }

    fn last_smoke(&self, profile: String) -> BoxFut<'_, Result<Option<SmokeRun>, ApiError>> {
        Box::pin(async move { self.0.last_smoke(&profile).await.map_err(error) })
    }
}
