//! Hosts: the consoles sharing one database (a fleet on PostgreSQL), and the jobs one console
//! queues for another's engines (serve, stop, restart, its log, a smoke test, a bench, a
//! change's gate, an incident's evidence), which the owning host claims, performs with its own
//! engine control and completes.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A console sharing the database, as the registry last heard from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct HostRow {
    pub name: String,
    /// Where its console is reached.
    pub url: String,
    /// Its heartbeat is recent (within three scrape intervals, at least 15 s).
    pub reachable: bool,
    /// Seconds since its last heartbeat.
    pub heartbeat_age_s: i64,
    /// GPU names, as its NVML read them (empty without a driver).
    pub gpus: Vec<String>,
    /// Its host configuration's engine installations.
    pub installations: Vec<String>,
    pub version: String,
    /// The console answering this request runs on it.
    pub this: bool,
}

/// What a job asks the owning host to do with one of its engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum JobAction {
    Serve,
    Stop,
    Restart,
    /// The engine's recent log, read on its host.
    Logs,
    /// smoke-toolcall against the running engine, to its verdict.
    Smoke,
    /// A closed-loop bench (the job's `args.bench`), to its figures.
    Bench,
    /// A reviewed change's gate (the job's `args.change`), run where the engine runs.
    Gate,
    /// An incident opened with the evidence read on the engine's host (its metrics, log,
    /// GPUs, process tree): the incident's number is the job's `result_id`.
    Evidence,
    /// One of an incident's actions (`args.incident`, `args.incident_action`) taken on the
    /// engine's host, its outcome and re-check on the incident's timeline.
    IncidentAction,
    /// A change's command lines and extra flags (`args.change`) as the engine's host renders
    /// them with its own configuration: what its review page shows. Reads only.
    Render,
}

impl JobAction {
    pub const ALL: [JobAction; 10] = [
        JobAction::Serve,
        JobAction::Stop,
        JobAction::Restart,
        JobAction::Logs,
        JobAction::Smoke,
        JobAction::Bench,
        JobAction::Gate,
        JobAction::Evidence,
        JobAction::IncidentAction,
        JobAction::Render,
    ];

    /// The actions an operator asks for on the Hosts page (an incident's action is asked for
    /// on the incident's page, a change's rendering by its review page).
    pub fn asked() -> impl Iterator<Item = JobAction> {
        Self::ALL
            .into_iter()
            .filter(|a| !matches!(a, Self::IncidentAction | Self::Render))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Serve => "serve",
            Self::Stop => "stop",
            Self::Restart => "restart",
            Self::Logs => "logs",
            Self::Smoke => "smoke",
            Self::Bench => "bench",
            Self::Gate => "gate",
            Self::Evidence => "evidence",
            Self::IncidentAction => "incident-action",
            Self::Render => "render",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// Whether its outcome is long text (shown folded): the log.
    pub fn long_outcome(self) -> bool {
        self == Self::Logs
    }
}

/// What some actions need besides the engine: the bench's parameters, the change whose gate
/// runs. Stored with the job as JSON; unknown fields from a newer console are ignored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct JobArgs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<super::BenchRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<i64>,
    /// An evidence job: the operator says clients see errors (a triage reading).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clients_see_errors: bool,
    /// An incident action job: the incident and the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incident: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incident_action: Option<crate::domain::triage::Action>,
}

/// Where a job is: queued until its host claims it, running there, then done or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Queued, Self::Running, Self::Done, Self::Failed]
            .into_iter()
            .find(|j| j.as_str() == s)
    }

    pub fn finished(self) -> bool {
        matches!(self, Self::Done | Self::Failed)
    }
}

/// One job, as the requester's page follows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct JobRow {
    pub id: i64,
    pub host: String,
    pub profile: String,
    pub action: JobAction,
    #[serde(default)]
    pub args: JobArgs,
    pub requested_by: String,
    /// The host whose console queued it.
    pub requested_on: String,
    pub reason: String,
    pub state: JobState,
    /// What the owning host reported: the outcome, the error, or the log.
    pub outcome: Option<String>,
    /// What the job made, where it made something: the incident (evidence), the stored
    /// smoke or bench run.
    #[serde(default)]
    pub result_id: Option<i64>,
    pub created_ms: i64,
    pub claimed_ms: Option<i64>,
    pub finished_ms: Option<i64>,
}

#[cfg(feature = "ssr")]
pub use ssr::HostService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// Hosts and their jobs. Implemented by the server.
    pub trait HostService: Send + Sync {
        fn list(&self) -> BoxFut<'_, Result<Vec<HostRow>, ApiError>>;
        /// Queues a job for `host`'s console; returns its id.
        fn request(
            &self,
            who: String,
            host: String,
            profile: String,
            action: JobAction,
            args: JobArgs,
            reason: String,
        ) -> BoxFut<'_, Result<i64, ApiError>>;
        fn job(&self, id: i64) -> BoxFut<'_, Result<JobRow, ApiError>>;
        /// The newest jobs first.
        fn jobs(&self, limit: i64) -> BoxFut<'_, Result<Vec<JobRow>, ApiError>>;
        /// Since when (ms) the shared database has not answered, if it does not.
        fn database_away_since(&self) -> Option<i64>;
    }
}

/// The consoles sharing this console's database.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_hosts")]
pub async fn list_hosts() -> Result<Vec<HostRow>, ApiError> {
    service::authorized("list_hosts")?.hosts.list().await
}

/// Asks a host's console to act on one of its engines (serve, stop, restart, its log, a
/// smoke test, a bench, a change's gate, an incident's evidence); returns the job's id, which
/// the page follows.
#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "request_host_action")]
pub async fn request_host_action(
    host: String,
    profile: String,
    action: JobAction,
    #[server(default)] args: JobArgs,
    reason: String,
) -> Result<i64, ApiError> {
    let caller = service::caller()?;
    service::authorized("request_host_action")?
        .hosts
        .request(caller.name, host, profile, action, args, reason)
        .await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "get_job")]
pub async fn get_job(id: i64) -> Result<JobRow, ApiError> {
    service::authorized("get_job")?.hosts.job(id).await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_jobs")]
pub async fn list_jobs() -> Result<Vec<JobRow>, ApiError> {
    service::authorized("list_jobs")?.hosts.jobs(200).await
}
