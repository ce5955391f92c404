//! The change journal: entries and the hash chain's state.

#[cfg(feature = "ssr")]
use super::service;
use super::{csrf, ApiError};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One entry of the change journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct JournalCheck {
    pub entries: usize,
    /// The first entry that does not hold, and why.
    pub broken: Option<(i64, String)>,
}

#[cfg(feature = "ssr")]
pub use ssr::JournalService;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// The change journal: its entries and its hash chain. Implemented by the server.
    pub trait JournalService: Send + Sync {
        /// Entries, newest first, matching `query` when given.
        fn list(&self, query: Option<String>) -> BoxFut<'_, Result<Vec<JournalEntry>, ApiError>>;
        fn verify(&self) -> BoxFut<'_, Result<JournalCheck, ApiError>>;
        /// Why the journal refuses appends (its table does not reach the anchor), if it does:
        /// every page's header shows it.
        fn alarm(&self) -> BoxFut<'_, Option<String>>;
    }
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "list_journal")]
pub async fn list_journal(query: Option<String>) -> Result<Vec<JournalEntry>, ApiError> {
    service::authorized("list_journal")?.journal.list(query).await
}

#[server(prefix = "/api/fn", client = csrf::CsrfClient, output = crate::api::wire::Wire, endpoint = "verify_journal")]
pub async fn verify_journal() -> Result<JournalCheck, ApiError> {
    service::authorized("verify_journal")?.journal.verify().await
}
