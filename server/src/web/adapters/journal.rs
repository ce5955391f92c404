//! The journal behind `JournalService`.

use crate::api_error::internal;
use crate::journal::Journal;
use app::api::service::BoxFut;
use app::api::{ApiError, JournalCheck, JournalEntry, JournalService};

pub struct Adapter(pub Journal);

impl JournalService for Adapter {
    fn list(&self, query: Option<String>) -> BoxFut<'_, Result<Vec<JournalEntry>, ApiError>> {
        Box::pin(async move {
            let q = query.filter(|q| !q.trim().is_empty());
            self.0.list(None, q.as_deref(), 500).await.map_err(internal)
        })
    }

    fn verify(&self) -> BoxFut<'_, Result<JournalCheck, ApiError>> {
        Box::pin(async move { self.0.verify().await.map_err(internal) })
    }

    fn alarm(&self) -> BoxFut<'_, Option<String>> {
        Box::pin(async move { self.0.alarm().await })
    }
}
