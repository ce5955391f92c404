//! The hosts feature behind `HostService`.

use crate::hosts::{HostError, Hosts};
use app::api::service::BoxFut;
use app::api::{ApiError, HostRow, HostService, JobAction, JobArgs, JobRow};

pub struct Adapter(pub Hosts);

pub fn error(e: HostError) -> ApiError {
    match e {
        HostError::NoSuchProfile(p) => ApiError::NoSuchProfile(p),
        e @ (HostError::NoSuchHost(_) | HostError::NoSuchJob(_) | HostError::Invalid(_)) => {
            ApiError::Invalid(e.to_string())
        }
        HostError::Db(e) => crate::api_error::internal(e),
    }
}

impl HostService for Adapter {
    fn list(&self) -> BoxFut<'_, Result<Vec<HostRow>, ApiError>> {
        Box::pin(async move { self.0.list().await.map_err(error) })
    }

    fn request(
        &self,
        who: String,
        host: String,
        profile: String,
        action: JobAction,
        args: JobArgs,
        reason: String,
    ) -> BoxFut<'_, Result<i64, ApiError>> {
        Box::pin(async move {
            self.0
                .request(&who, &host, &profile, action, &args, &reason)
                .await
                .map_err(error)
        })
    }

    fn job(&self, id: i64) -> BoxFut<'_, Result<JobRow, ApiError>> {
        Box::pin(async move { self.0.job(id).await.map_err(error) })
    }

    fn database_away_since(&self) -> Option<i64> {
        crate::db::health().down_since()
    }

    fn jobs(&self, limit: i64) -> BoxFut<'_, Result<Vec<JobRow>, ApiError>> {
        Box::pin(async move { self.0.jobs(limit).await.map_err(error) })
    }
}
