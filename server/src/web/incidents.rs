//! Incident routes outside the server functions: the Alertmanager webhook (an alert opens or
//! joins an incident) and the postmortem as a Markdown download.

use super::WebState;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

/// `POST /api/alerts/alertmanager`: Alertmanager's webhook payload (version 4). Alerts name the
/// engine by a `profile` (or `engine`) label.
/// Alertmanager authenticates with the bearer token from `[auth] alertmanager_token`; without
/// one configured, the webhook is off.
pub async fn alertmanager(
    State(s): State<WebState>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let auth = &s.ctx.data.config.auth;
    if let Some(refused) = super::guard::machine_token(
        auth.alertmanager_token.as_deref(),
        &headers,
        "the Alertmanager webhook",
        "alertmanager_token",
    ) {
        return refused;
    }
    let payload: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("alertmanager payload: {e}")).into_response(),
    };
    if !payload["alerts"].is_array() {
        return (StatusCode::BAD_REQUEST, "alertmanager payload: `alerts` must be a list").into_response();
    }
    match s.incidents.alertmanager(&payload).await {
        Ok(ids) => Json(serde_json::json!({"incidents": ids})).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[derive(serde::Deserialize)]
pub struct LangQuery {
    lang: Option<String>,
}

/// `GET /api/incidents/{id}/postmortem.md?lang=en|ru`.
pub async fn postmortem_markdown(
    State(s): State<WebState>,
    Path(id): Path<i64>,
    Query(q): Query<LangQuery>,
) -> Response {
    let lang = q
        .lang
        .as_deref()
        .and_then(app::i18n::Lang::from_code)
        .unwrap_or_default();
    match s.incidents.store.get(id).await {
        Ok(inc) => (
            [
                (header::CONTENT_TYPE, "text/markdown; charset=utf-8".to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"postmortem-{id}-{}.md\"", inc.profile),
                ),
            ],
            app::domain::incident::postmortem_markdown(lang, &inc),
        )
            .into_response(),
        Err(crate::incidents::IncidentError::NotFound(_)) => {
            (StatusCode::NOT_FOUND, format!("no incident #{id}")).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[derive(serde::Deserialize)]
pub struct JournalQuery {
    query: Option<String>,
}

/// Exports running at once; one more is refused (429) rather than queued.
const MAX_EXPORTS: usize = 2;
static EXPORTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_EXPORTS);
/// How long one export may take, read or not: two exports never read held both permits for
/// good. Past it the file ends cut (no closing bracket) and its place is given back.
const EXPORT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);
/// The accounts exporting now: one export at a time per account.
static EXPORTING: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// One running export's place: a permit and its account's turn, given back when dropped.
struct ExportSlot {
    _permit: tokio::sync::SemaphorePermit<'static>,
    account: String,
}

impl Drop for ExportSlot {
    fn drop(&mut self) {
        if let Ok(mut busy) = EXPORTING.lock() {
            busy.remove(&self.account);
        }
    }
}

/// Why an export is refused now (the 429's body).
#[derive(Debug, PartialEq, thiserror::Error)]
enum ExportBusy {
    #[error("{MAX_EXPORTS} journal exports are running; try again shortly")]
    Console,
    #[error("an export of this account is running; wait for it or cancel it")]
    Account,
}

/// A place for one more export of `account`, or why not.
fn claim_export(account: &str) -> Result<ExportSlot, ExportBusy> {
    let mut busy = EXPORTING.lock().map_err(|_| ExportBusy::Console)?;
    if busy.contains(account) {
        return Err(ExportBusy::Account);
    }
    let permit = EXPORTS.try_acquire().map_err(|_| ExportBusy::Console)?;
    busy.insert(account.to_string());
    Ok(ExportSlot {
        _permit: permit,
        account: account.to_string(),
    })
}
/// Entries read per database page of an export.
const EXPORT_PAGE: i64 = 500;

/// `GET /api/journal.json?query=…`: every matching journal entry, newest first, with their
/// hashes, for archiving outside the console. Streamed a page at a time (the whole journal
/// was once built in memory per request: four parallel exports took the console from 404 to
/// 1,326 MiB); at most [`MAX_EXPORTS`] run at once.
pub async fn journal_export(
    State(s): State<WebState>,
    caller: Option<axum::Extension<app::api::Caller>>,
    Query(q): Query<JournalQuery>,
) -> Response {
    let account = caller.map(|c| c.0.name).unwrap_or_default();
    let slot = match claim_export(&account) {
        Ok(slot) => slot,
        Err(why) => {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "10")],
                format!("{why}\n"),
            )
                .into_response()
        }
    };
    // The place is taken back at the deadline whether or not the body is read: a body never
    // polled runs no code of its own.
    let place = std::sync::Arc::new(std::sync::Mutex::new(Some(slot)));
    let expiry = place.clone();
    tokio::spawn(async move {
        tokio::time::sleep(EXPORT_DEADLINE).await;
        if expiry.lock().map(|mut p| p.take()).ok().flatten().is_some() {
            tracing::warn!("journal export cut at its deadline");
        }
    });
    let query = q.query.filter(|q| !q.trim().is_empty());
    let journal = s.ctx.journal.clone();
    // The first page is read before answering, so a database error is a 500, not a cut file.
    let first = match journal.page(query.as_deref(), None, EXPORT_PAGE).await {
        Ok(p) => p,
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    struct Walk {
        page: Vec<app::api::JournalEntry>,
        opened: bool,
        done: bool,
        /// Held while the export streams (emptied with the walk, also when the client goes,
        /// and at the deadline).
        place: std::sync::Arc<std::sync::Mutex<Option<ExportSlot>>>,
    }
    impl Walk {
        fn release(&self) {
            if let Ok(mut p) = self.place.lock() {
                p.take();
            }
        }
        fn expired(&self) -> bool {
            self.place.lock().map(|p| p.is_none()).unwrap_or(true)
        }
    }
    impl Drop for Walk {
        fn drop(&mut self) {
            self.release();
        }
    }
    let start = Walk {
        page: first,
        opened: false,
        done: false,
        place,
    };
    let body = futures::stream::unfold(start, move |mut w| {
        let (journal, query) = (journal.clone(), query.clone());
        async move {
            if w.done || w.expired() {
                return None;
            }
            let mut chunk = String::new();
            if !w.opened {
                chunk.push('[');
            }
            for (i, e) in w.page.iter().enumerate() {
                if w.opened || i > 0 {
                    chunk.push(',');
                }
                chunk.push_str(&serde_json::to_string(e).unwrap_or_else(|_| "null".into()));
            }
            w.opened = true;
            let before = w.page.last().map(|e| e.seq);
            let last = (w.page.len() as i64) < EXPORT_PAGE;
            w.page = if last {
                Vec::new()
            } else {
                match journal.page(query.as_deref(), before, EXPORT_PAGE).await {
                    Ok(p) => p,
                    Err(e) => {
                        // The file ends invalid (no closing bracket): a cut export is not
                        // mistaken for a whole one.
                        tracing::error!(error = %e, "journal export cut short");
                        w.done = true;
                        return Some((Ok::<_, std::io::Error>(chunk), w));
                    }
                }
            };
            if w.page.is_empty() {
                chunk.push(']');
                w.done = true;
                w.release();
            }
            Some((Ok(chunk), w))
        }
    });
    (
        [
            (header::CONTENT_DISPOSITION, "attachment; filename=\"journal.json\""),
            (header::CONTENT_TYPE, "application/json"),
        ],
        // Fused: the response compressor polls a body once more after its end, and a bare
        // `unfold` panics there (the connection was cut without a byte).
        axum::body::Body::from_stream(futures::StreamExt::fuse(body)),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_exports_one_at_a_time_and_leaves_the_other_permit() {
        let first = claim_export("vera").expect("the first export");
        assert_eq!(claim_export("vera").err(), Some(ExportBusy::Account));
        let other = claim_export("root").expect("another account still exports");
        assert_eq!(claim_export("alice").err(), Some(ExportBusy::Console));
        drop(first);
        assert!(claim_export("vera").is_ok(), "given back with the export");
        drop(other);
    }
}
