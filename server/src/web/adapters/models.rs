//! The Models page's verifications behind `ModelService`.

use crate::api_error::internal;
use crate::models::page::{ModelError, Models};
use app::api::service::BoxFut;
use app::api::{ApiError, ModelService, ModelVerifyState};

pub struct Adapter(pub Models);

impl ModelService for Adapter {
    fn start_verify(&self, who: String, name: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            self.0.start_verify(&who, &name).await.map_err(|e| match e {
                ModelError::Internal(e) => internal(e),
                other => ApiError::Invalid(other.to_string()),
            })
        })
    }

    fn verify_state(&self, name: String) -> BoxFut<'_, Result<ModelVerifyState, ApiError>> {
        Box::pin(async move { Ok(self.0.state(&name)) })
    }
}
