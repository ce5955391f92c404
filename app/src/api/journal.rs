//! The change journal: entries and the hash chain's state.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One entry of the change journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub seq: i64,
    pub at: String,
    pub who: String,
    /// `serve`, `stop`, `restart`, `profile-import`, `profile-change`, `incident-action`,
    /// `run-smoke`, `run-bench`.
    pub kind: String,
    /// The profile (or other object) it is about.
    pub subject: String,
    pub reason: String,
    pub detail: serde_json::Value,
    pub prev_hash: String,
    pub hash: String,
}

/// The result of walking the journal's hash chain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalCheck {
    pub entries: usize,
    /// The first entry that does not hold, and why.
    pub broken: Option<(i64, String)>,
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "list_journal")]
pub async fn list_journal(query: Option<String>) -> Result<Vec<JournalEntry>, ApiError> {
    service::authorized("list_journal")?.0.journal(query).await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, endpoint = "verify_journal")]
pub async fn verify_journal() -> Result<JournalCheck, ApiError> {
    service::authorized("verify_journal")?.0.journal_verify().await
}
