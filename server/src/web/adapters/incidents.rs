//! The incidents feature behind `IncidentService`.

use super::control_error;
use crate::api_error::internal;
use crate::incidents::{IncidentError, IncidentServiceError, Incidents};
use app::api::service::BoxFut;
use app::api::{ApiError, IncidentService};
use app::domain::incident::{Incident, IncidentSummary, Postmortem};
use app::domain::triage::Action;

pub struct Adapter {
    pub incidents: Incidents,
    /// The evidence is read where the profile's engine runs.
    pub route: crate::hosts::route::Router,
}

pub fn error(e: IncidentServiceError) -> ApiError {
    match e {
        IncidentServiceError::Control(c) => control_error(c),
        IncidentServiceError::Store(IncidentError::NotFound(id)) => ApiError::Invalid(format!("no incident #{id}")),
        IncidentServiceError::Store(other) => internal(other),
        other => ApiError::Invalid(other.to_string()),
    }
}

impl IncidentService for Adapter {
    fn open(&self, who: String, profile: String, clients_see_errors: bool) -> BoxFut<'_, Result<i64, ApiError>> {
        Box::pin(async move {
            self.route
                .open_incident(&who, &profile, clients_see_errors)
                .await
                .map_err(super::route_error)
        })
    }

    fn list(&self) -> BoxFut<'_, Result<Vec<IncidentSummary>, ApiError>> {
        Box::pin(async move { self.incidents.store.list(200).await.map_err(internal) })
    }

    fn get(&self, id: i64) -> BoxFut<'_, Result<Incident, ApiError>> {
        Box::pin(async move { self.incidents.store.get(id).await.map_err(|e| error(e.into())) })
    }

    fn act(&self, who: String, id: i64, action: Action, reason: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            let action_id = action.id();
            self.route
                .incident_action(&who, id, action, &reason)
                .await
                .map_err(super::route_error)?;
            // After the checks, and quoted: a newline in a reason cannot forge a log line.
            tracing::info!(incident = id, action = action_id, reason = ?reason, "incident action taken from the console");
            Ok(())
        })
    }

    fn note(&self, who: String, id: i64, text: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.incidents.note(id, &who, &text).await.map_err(error) })
    }

    fn resolve(&self, who: String, id: i64) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.incidents.resolve(id, &who).await.map_err(error) })
    }

    fn save_postmortem(&self, _who: String, id: i64, postmortem: Postmortem) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move { self.incidents.save_postmortem(id, &postmortem).await.map_err(error) })
    }
}
