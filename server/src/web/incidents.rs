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
/// Entries read per database page of an export.
const EXPORT_PAGE: i64 = 500;

/// `GET /api/journal.json?query=…`: every matching journal entry, newest first, with their
/// hashes, for archiving outside the console. Streamed a page at a time (the whole journal
/// was once built in memory per request: four parallel exports took the console from 404 to
/// 1,326 MiB); at most [`MAX_EXPORTS`] run at once.
pub async fn journal_export(State(s): State<WebState>, Query(q): Query<JournalQuery>) -> Response {
    let Ok(permit) = EXPORTS.try_acquire() else {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "10")],
            format!("{MAX_EXPORTS} journal exports are running; try again shortly\n"),
        )
            .into_response();
    };
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
        /// Held while the export streams (dropped with the walk, also when the client goes).
        _permit: tokio::sync::SemaphorePermit<'static>,
    }
    let start = Walk {
        page: first,
        opened: false,
        done: false,
        _permit: permit,
    };
    let body = futures::stream::unfold(start, move |mut w| {
        let (journal, query) = (journal.clone(), query.clone());
        async move {
            if w.done {
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
