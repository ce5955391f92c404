//! Incidents: open one, the wizard's actions, notes, resolution and the postmortem.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use leptos::prelude::*;

use crate::domain::incident::{Incident, IncidentSummary, Postmortem};
use crate::domain::triage::Action;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
pub use ssr::IncidentService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// Incidents: evidence, triage, the wizard's actions and the postmortem. Implemented by the server.
    pub trait IncidentService: Send + Sync {
        /// Opens an incident on a profile (evidence first); returns its id.
        fn open(&self, who: String, profile: String, clients_see_errors: bool) -> BoxFut<'_, Result<i64, ApiError>>;
        fn list(&self) -> BoxFut<'_, Result<Vec<IncidentSummary>, ApiError>>;
        fn get(&self, id: i64) -> BoxFut<'_, Result<Incident, ApiError>>;
        /// Starts one action with its reason; outcome and re-check arrive on the timeline.
        fn act(&self, who: String, id: i64, action: Action, reason: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn note(&self, who: String, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn resolve(&self, who: String, id: i64) -> BoxFut<'_, Result<(), ApiError>>;
        fn save_postmortem(&self, who: String, id: i64, postmortem: Postmortem) -> BoxFut<'_, Result<(), ApiError>>;
    }
}

/// Opens an incident from the engine page: captures the evidence, then runs the triage.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "open_incident")]
pub async fn open_incident(profile: String, clients_see_errors: bool) -> Result<i64, ApiError> {
    service::authorized("open_incident")?
        .incidents
        .open(service::caller()?.name, profile, clients_see_errors)
        .await
}

/// Incidents, newest first.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_incidents")]
pub async fn list_incidents() -> Result<Vec<IncidentSummary>, ApiError> {
    service::authorized("list_incidents")?.incidents.list().await
}

/// One incident with its evidence, diagnosis, timeline and postmortem.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_incident")]
pub async fn get_incident(id: i64) -> Result<Incident, ApiError> {
    service::authorized("get_incident")?.incidents.get(id).await
}

/// One action of the wizard, with the operator's reason.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "incident_action", input = Json)]
pub async fn incident_action(id: i64, action: Action, reason: String) -> Result<(), ApiError> {
    service::authorized("incident_action")?
        .incidents
        .act(service::caller()?.name, id, action, reason)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "incident_note")]
pub async fn incident_note(id: i64, text: String) -> Result<(), ApiError> {
    service::authorized("incident_note")?
        .incidents
        .note(service::caller()?.name, id, text)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "resolve_incident")]
pub async fn resolve_incident(id: i64) -> Result<(), ApiError> {
    service::authorized("resolve_incident")?
        .incidents
        .resolve(service::caller()?.name, id)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "save_postmortem", input = Json)]
pub async fn save_postmortem(id: i64, postmortem: Postmortem) -> Result<(), ApiError> {
    service::authorized("save_postmortem")?
        .incidents
        .save_postmortem(service::caller()?.name, id, postmortem)
        .await
}
