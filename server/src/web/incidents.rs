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
    let auth = &s.control.data.config.auth;
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

/// `GET /api/journal.json?query=…`: the matching journal entries (up to 100,000), with their
/// hashes, for archiving outside the console.
pub async fn journal_export(State(s): State<WebState>, Query(q): Query<JournalQuery>) -> Response {
    let query = q.query.filter(|q| !q.trim().is_empty());
    match s.control.journal().list(None, query.as_deref(), 100_000).await {
        Ok(entries) => (
            [(header::CONTENT_DISPOSITION, "attachment; filename=\"journal.json\"")],
            Json(entries),
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
