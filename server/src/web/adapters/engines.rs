//! The engines feature behind `EngineService`.

use super::control_error;
use crate::api_error::internal;
use crate::engines::{EngineError, Engines};
use app::api::service::BoxFut;
use app::api::{ApiError, EngineAction, EngineDetail, EngineService};
use app::domain::engine::EngineStatus;
use app::domain::series::{Point, Range};

pub struct Adapter(pub Engines);

fn error(e: EngineError) -> ApiError {
    match e {
        EngineError::Control(c) => control_error(c),
        EngineError::Internal(e) => internal(e),
    }
}

impl EngineService for Adapter {
    fn list(&self) -> BoxFut<'_, Result<Vec<EngineStatus>, ApiError>> {
        Box::pin(async move { Ok(self.0.list()) })
    }

    fn get(&self, profile: String) -> BoxFut<'_, Result<EngineDetail, ApiError>> {
        Box::pin(async move { self.0.detail(&profile).await.map_err(error) })
    }

    fn act(&self, who: String, profile: String, action: EngineAction) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.0.act(&who, &profile, action).await.map_err(error) })
    }

    fn series(&self, profile: String, range: Range) -> BoxFut<'_, Result<Vec<Point>, ApiError>> {
        Box::pin(async move { self.0.series(&profile, range).await.map_err(error) })
    }

    fn state_timeline(
        &self,
        profile: String,
        range: Range,
    ) -> BoxFut<'_, Result<app::domain::timeline::StateTimeline, ApiError>> {
        Box::pin(async move { self.0.state_timeline(&profile, range).await.map_err(error) })
    }

    fn startup_history(&self, profile: String) -> BoxFut<'_, Result<Vec<app::domain::phases::StartupRun>, ApiError>> {
        Box::pin(async move { self.0.startup_history(&profile).await.map_err(error) })
    }
}
