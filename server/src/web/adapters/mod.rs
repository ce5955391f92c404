//! One thin adapter per feature between the UI's service traits (`app::api`) and the server's
//! features: the caller's name in, the feature's error mapped to the browser's `ApiError` out.
//! This is the only place that maps errors and boxes futures; use-cases live in the features.

mod changes;
mod engines;
mod hosts;
mod incidents;
mod journal;
mod models;
mod profiles;
mod runs;
mod vram;

use crate::api_error::internal;
use crate::context::Context;
use crate::control::ControlError;
use app::api::service::Services;
use app::api::ApiError;
use std::sync::Arc;

/// A routed action's error as its feature's adapter explains it.
fn route_error(e: crate::hosts::route::RouteError) -> ApiError {
    use crate::hosts::route::RouteError;
    match e {
        RouteError::Change(e) => changes::error(e),
        RouteError::Incident(e) => incidents::error(e),
        RouteError::Host(e) => hosts::error(e),
    }
}

/// Engine-control errors as the UI explains them.
pub fn control_error(e: ControlError) -> ApiError {
    match e {
        ControlError::NoSuchProfile(p) => ApiError::NoSuchProfile(p),
        ControlError::NoSuchEngine { profile, engine, .. } => ApiError::NoSuchEngine { profile, engine },
        ControlError::PortBusy { port, owner } => ApiError::PortBusy { port, owner },
        other @ (ControlError::ModelPath { .. }
        | ControlError::Busy(_)
        | ControlError::Gated(_)
        | ControlError::GateBlocked(_)
        | ControlError::Survivors { .. }
        | ControlError::Refused { .. }) => ApiError::Invalid(other.to_string()),
        other => internal(other),
    }
}

/// The features one console serves, built once at start.
pub struct Features {
    pub ctx: Context,
    pub feeds: crate::monitor::Feeds,
    pub runs: crate::runs::live::LiveRuns,
    pub incidents: crate::incidents::Incidents,
    pub auth: super::auth::AuthState,
    pub changes: crate::changes::Changes,
    pub hosts: crate::hosts::Hosts,
}

/// Each feature behind its service trait, for leptos' context.
pub fn services(f: Features) -> Services {
    // A gate and an incident's evidence run where the profile's engine runs.
    let route = crate::hosts::route::Router {
        hosts: f.hosts.clone(),
        changes: f.changes.clone(),
        incidents: f.incidents.clone(),
        renderings: Default::default(),
    };
    Services {
        accounts: Arc::new(f.auth),
        changes: Arc::new(changes::Adapter {
            changes: f.changes.clone(),
            route: route.clone(),
        }),
        engines: Arc::new(engines::Adapter(crate::engines::Engines::new(
            f.ctx.clone(),
            &f.feeds,
            f.runs.clone(),
        ))),
        profiles: Arc::new(profiles::Adapter {
            profiles: crate::profiles::Profiles::new(f.ctx.clone()),
            changes: f.changes,
        }),
        runs: Arc::new(runs::Adapter(f.runs)),
        hosts: Arc::new(hosts::Adapter(f.hosts)),
        incidents: Arc::new(incidents::Adapter {
            incidents: f.incidents,
            route,
        }),
        journal: Arc::new(journal::Adapter(f.ctx.journal.clone())),
        vram: Arc::new(vram::Adapter(f.ctx.clone())),
        models: Arc::new(models::Adapter(crate::models::page::Models::new(
            f.ctx.data.clone(),
            f.ctx.store.clone(),
            f.ctx.journal.clone(),
        ))),
    }
}
