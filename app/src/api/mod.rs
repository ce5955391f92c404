//! The console's API as the UI sees it: data shapes, typed errors, and server functions.
//!
//! Server functions stay thin: each checks the caller against the access table and forwards to
//! its feature's service trait (declared beside it, e.g. `engines::EngineService`), which the
//! `server` crate implements (`web/adapters/`) and provides through leptos context as
//! [`service::Services`], because `app` cannot depend on `server`. Plain JSON routes and the SSE streams live in `server` and reuse these shapes.

pub mod accounts;
pub mod changes;
pub mod csrf;
pub mod engines;
pub mod hosts;
pub mod incidents;
pub mod journal;
pub mod models;
pub mod profiles;
pub mod runs;
pub mod vram;
pub mod wire;

pub use accounts::*;
pub use changes::*;
pub use engines::*;
pub use hosts::*;
pub use incidents::*;
pub use journal::*;
pub use models::*;
pub use profiles::*;
pub use runs::*;
pub use vram::*;

use serde::{Deserialize, Serialize};

/// The fleet's event stream (every engine's status, on change).
pub const FLEET_STREAM: &str = "/api/events/fleet";
/// The route of an engine's event stream, as the server registers it.
pub const ENGINE_STREAM_ROUTE: &str = "/api/events/engines/{profile}";

/// The stream of record versions (incidents, changes): the live list and detail pages refetch
/// when the version of what they show moves.
pub const RECORDS_STREAM: &str = "/api/events/records";

/// How many writes each kind of record has seen (the database's `record_version`, bumped by
/// triggers): a page compares versions, never contents, so the stream carries no data a
/// server function's access rules would have to check again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct RecordVersions {
    pub incidents: i64,
    pub changes: i64,
    /// Jobs queued for, claimed by and completed on the fleet's hosts.
    #[serde(default)]
    pub jobs: i64,
}

/// The event stream of one engine's page.
pub fn engine_stream(profile: &str) -> String {
    ENGINE_STREAM_ROUTE.replace("{profile}", profile)
}

/// Errors a server function can return, each one a thing the UI can explain.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize, crate::decode::FromWire)]
pub enum ApiError {
    #[error("no profile named {0}")]
    NoSuchProfile(String),
    #[error("profile {profile} names engine installation {engine}, which host configuration does not define")]
    NoSuchEngine { profile: String, engine: String },
    #[error("port {port} is in use by {owner}")]
    PortBusy { port: u16, owner: String },
    #[error("{0}")]
    Invalid(String),
    /// Not signed in (or the session ended): the UI offers the sign-in page.
    #[error("sign in first: {0}")]
    Unauthorized(String),
    /// Signed in, but the role or the CSRF token does not allow this.
    #[error("not allowed: {0}")]
    Forbidden(String),
    /// Refused for now (too many failed sign-ins, hashing slots busy): try again later.
    #[error("too many attempts: {0}")]
    TooMany(String),
    #[error("internal error: {0}")]
    Internal(String),
    #[error("request failed: {0}")]
    Transport(String),
}

impl ApiError {
    /// The HTTP status a server function answers with this error (the server maps it; the
    /// default for a server function's error would be 500 for all of them).
    pub fn status(&self) -> u16 {
        match self {
            Self::NoSuchProfile(_) => 404,
            Self::NoSuchEngine { .. } | Self::Invalid(_) => 400,
            Self::PortBusy { .. } => 409,
            Self::Unauthorized(_) => 401,
            Self::Forbidden(_) => 403,
            Self::TooMany(_) => 429,
            Self::Internal(_) => 500,
            Self::Transport(_) => 502,
        }
    }
}

impl leptos::server_fn::error::FromServerFnError for ApiError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;
    fn from_server_fn_error(value: leptos::server_fn::error::ServerFnErrorErr) -> Self {
        Self::Transport(value.to_string())
    }
}

#[cfg(feature = "ssr")]
pub mod service;
