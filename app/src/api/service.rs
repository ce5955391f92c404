//! The seam between the UI's server functions and the server's implementation.

use super::*;
use leptos::prelude::*;
use std::{future::Future, pin::Pin, sync::Arc};

/// A boxed future, so the trait stays object-safe.
pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the console can do, one service per feature (the same names as the pages and the
/// server's feature modules); the server implements each over its feature and hands them to
/// leptos as context. Server functions reach a feature's service through [`authorized`].
#[derive(Clone)]
pub struct Services {
    pub accounts: Arc<dyn super::AccountService>,
    pub changes: Arc<dyn super::ChangeService>,
    pub engines: Arc<dyn super::EngineService>,
    pub hosts: Arc<dyn super::HostService>,
    pub profiles: Arc<dyn super::ProfileService>,
    pub runs: Arc<dyn super::RunService>,
    pub incidents: Arc<dyn super::IncidentService>,
    pub journal: Arc<dyn super::JournalService>,
    pub vram: Arc<dyn super::VramService>,
    pub models: Arc<dyn super::ModelService>,
}

pub fn services() -> Result<Services, ApiError> {
    use_context::<Services>().ok_or_else(|| ApiError::Internal("console services missing from context".into()))
}

/// The services, after checking the caller against `domain::auth::SERVER_FNS` for this
/// endpoint. Server functions call this rather than [`services`]: pages rendered on the
/// server call them directly, past the HTTP guard, and must be held to the same table.
pub fn authorized(endpoint: &str) -> Result<Services, ApiError> {
    use crate::domain::auth::{access_for, Access};
    match access_for(endpoint) {
        None => Err(ApiError::Forbidden(format!("{endpoint} is not in the access table"))),
        Some(Access::Public) => services(),
        Some(Access::Role(needed)) => {
            let c = caller()?;
            if c.role.allows(needed) {
                services()
            } else {
                Err(ApiError::Forbidden(format!(
                    "{endpoint} needs the {} role; {} is {}",
                    needed.as_str(),
                    c.name,
                    c.role.as_str()
                )))
            }
        }
    }
}

/// The request's parts, as leptos_axum provides them to server functions and pages.
fn parts() -> Option<http::request::Parts> {
    use_context::<http::request::Parts>()
}

/// The path of the page being rendered (none outside a request).
pub fn request_path() -> Option<String> {
    parts().map(|p| p.uri.path().to_string())
}

/// Who is calling: the request guard put the signed-in account on the request.
pub fn caller() -> Result<Caller, ApiError> {
    parts()
        .and_then(|p| p.extensions.get::<Caller>().cloned())
        .ok_or_else(|| ApiError::Unauthorized("no session".into()))
}

/// The caller, if signed in.
pub fn caller_opt() -> Option<Caller> {
    parts().and_then(|p| p.extensions.get::<Caller>().cloned())
}

/// The session token of this request (for signing out).
pub fn session_token() -> Option<String> {
    parts().and_then(|p| p.extensions.get::<SessionToken>().map(|t| t.0.clone()))
}

/// The client's address, for the sign-in rate limit.
pub fn client_addr() -> String {
    parts()
        .and_then(|p| p.extensions.get::<ClientAddr>().map(|a| a.0.clone()))
        .unwrap_or_default()
}

/// Adds `Set-Cookie` headers to the response.
pub fn set_cookies(cookies: &[String]) {
    if let Some(r) = use_context::<leptos_axum::ResponseOptions>() {
        for c in cookies {
            if let Ok(v) = http::HeaderValue::from_str(c) {
                r.append_header(http::header::SET_COOKIE, v);
            }
        }
    }
}
