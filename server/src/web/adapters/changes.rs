//! Profile changes under review behind `ChangeService`.

use crate::api_error::internal;
use crate::changes::{ChangeError, Changes};
use app::api::service::BoxFut;
use app::api::{ApiError, Caller, ChangeService, ChangeSummary, ChangeView};

pub struct Adapter {
    pub changes: Changes,
    /// The gate runs where the profile's engine runs.
    pub route: crate::hosts::route::Router,
}

/// Change errors as the UI explains them.
pub fn error(e: ChangeError) -> ApiError {
    match e {
        ChangeError::NoSuchProfile(p) => ApiError::NoSuchProfile(p),
        ChangeError::NoSuchEngine { profile, engine } => ApiError::NoSuchEngine { profile, engine },
        ChangeError::Forbidden(why) => ApiError::Forbidden(why),
        ChangeError::Internal(e) => internal(e),
        other @ (ChangeError::NotFound(_) | ChangeError::Invalid(_)) => ApiError::Invalid(other.to_string()),
    }
}

impl ChangeService for Adapter {
    fn list(&self, profile: Option<String>) -> BoxFut<'_, Result<Vec<ChangeSummary>, ApiError>> {
        Box::pin(async move { self.changes.list(profile).await.map_err(error) })
    }

    fn get(&self, caller: Caller, id: i64) -> BoxFut<'_, Result<ChangeView, ApiError>> {
        Box::pin(async move { self.route.change_view(caller, id).await.map_err(super::route_error) })
    }

    fn propose(
        &self,
        caller: Caller,
        id: Option<i64>,
        profile: String,
        env_text: String,
        reason: String,
        submit: bool,
    ) -> BoxFut<'_, Result<i64, ApiError>> {
        Box::pin(async move {
            self.changes
                .propose(caller, id, profile, env_text, reason, submit)
                .await
                .map_err(error)
        })
    }

    fn review(
        &self,
        caller: Caller,
        id: i64,
        approve: bool,
        comment: String,
        content_hash: String,
    ) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            self.changes
                .review(caller, id, approve, comment, content_hash)
                .await
                .map_err(error)
        })
    }

    fn withdraw(&self, caller: Caller, id: i64, comment: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.changes.withdraw(caller, id, comment).await.map_err(error) })
    }

    fn comment(&self, caller: Caller, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.changes.comment(caller, id, text).await.map_err(error) })
    }

    fn start_gate(&self, caller: Caller, id: i64) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            self.route
                .start_gate(caller, id)
                .await
                .map(drop)
                .map_err(super::route_error)
        })
    }

    fn rollback(&self, caller: Caller, id: i64, reason: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.changes.rollback(caller, id, reason).await.map_err(error) })
    }
}
