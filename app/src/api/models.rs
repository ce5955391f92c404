//! Model directories: verification against the air-gap rules, started from the Models page
//! and followed with its progress.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use crate::domain::modelcheck::{Progress, VerifyReport};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A model directory's verification as the page polls it: running with its progress, or the
/// last report (or why it could not run) since the console started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct ModelVerifyState {
    pub running: bool,
    pub progress: Progress,
    pub report: Option<VerifyReport>,
    pub error: Option<String>,
}

#[cfg(feature = "ssr")]
pub use ssr::ModelService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// Model directories: verification against their manifest. Implemented by the server.
    pub trait ModelService: Send + Sync {
        fn start_verify(&self, who: String, name: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn verify_state(&self, name: String) -> BoxFut<'_, Result<ModelVerifyState, ApiError>>;
    }
}

/// Starts verifying the model directory `name` (under the models root); an error when one is
/// already running or the name leaves the root.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "start_model_verify")]
pub async fn start_model_verify(name: String) -> Result<(), ApiError> {
    service::authorized("start_model_verify")?
        .models
        .start_verify(service::caller()?.name, name)
        .await
}

/// The verification state of the model directory `name`.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_model_verify")]
pub async fn get_model_verify(name: String) -> Result<ModelVerifyState, ApiError> {
    service::authorized("get_model_verify")?.models.verify_state(name).await
}
