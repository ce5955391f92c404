//! Server-sent event streams: one for the fleet page, one per engine page (status plus new
//! log lines). Each sends the full current state on connect, so a reconnect loses nothing.

use super::WebState;
use crate::control::logs;
use app::api::EngineEvent;
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::Stream;
use std::convert::Infallible;
use std::time::Duration;

/// `GET /api/engines`: the fleet as JSON, for scripts.
pub async fn engines_json(State(s): State<WebState>) -> Response {
    Json(s.fleet.borrow().clone()).into_response()
}

/// `GET /metrics`: the console's own metrics in Prometheus text format.
pub async fn console_metrics(State(s): State<WebState>) -> Response {
    let body = s.metrics.render(&s.fleet.borrow(), &s.gpu.borrow());
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

/// `GET /healthz`: the process answers (for a service manager or a load balancer).
pub async fn healthz() -> &'static str {
    "ok\n"
}

/// `GET /readyz`: the database takes a write lock and the collectors still run (their
/// channels' senders are alive); 503 naming what is not, otherwise 200. The database's answer
/// is kept for a second: a probe per request took the write lock per request.
pub async fn readyz(State(s): State<WebState>) -> Response {
    let cached = s.readyz.lock().ok().and_then(|c| {
        c.as_ref()
            .filter(|(at, _)| at.elapsed() < Duration::from_secs(1))
            .map(|(_, p)| p.clone())
    });
    let mut problems = match cached {
        Some(p) => p,
        None => {
            let p = database_problems(&s).await;
            if let Ok(mut c) = s.readyz.lock() {
                *c = Some((std::time::Instant::now(), p.clone()));
            }
            p
        }
    };
    if s.fleet.has_changed().is_err() {
        problems.push("the engine collector has stopped".into());
    }
    if s.gpu.has_changed().is_err() {
        problems.push("the GPU collector has stopped".into());
    }
    if problems.is_empty() {
        "ready\n".into_response()
    } else {
        (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            format!("{}\n", problems.join("\n")),
        )
            .into_response()
    }
}

/// What `/readyz` finds wrong with the database: not writable, or the journal refusing.
async fn database_problems(s: &WebState) -> Vec<String> {
    let mut problems = Vec::new();
    // A write statement that changes nothing still takes SQLite's write lock.
    let writable = crate::db::write_probe(&s.ctx.pool);
    match tokio::time::timeout(std::time::Duration::from_secs(5), writable).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => problems.push(format!("database not writable: {e}")),
        Err(_) => problems.push("database not writable: no write lock within 5 s".into()),
    }
    if let Some(why) = s.ctx.journal.alarm().await {
        problems.push(format!("the change journal refuses entries: {why}"));
    }
    problems
}

/// `GET /api/events/fleet`: every engine's status, on change.
pub async fn fleet(State(s): State<WebState>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    use futures::StreamExt;
    let client = s.metrics.sse_client();
    // A watch holds only the newest snapshot: a reader that falls behind gets the latest
    // state when it reads again, never a queue of old ones.
    let stream = tokio_stream::wrappers::WatchStream::new(s.fleet.clone()).map(move |snapshot| {
        let _client = &client;
        let data = serde_json::to_string(&snapshot).unwrap_or_else(|_| "[]".into());
        Ok(Event::default().data(data))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `GET /api/events/records`: the record versions (incidents, changes), on connect and on
/// change; the live pages refetch what they show when its version moves.
pub async fn records(State(s): State<WebState>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut rx = s.records.subscribe();
    let pool = s.ctx.pool.clone();
    let client = s.metrics.sse_client();
    let stream = async_stream(move |tx| async move {
        let _client = client;
        // The first event is read now, not from the watch: the reader may not have run yet.
        let mut current = crate::records::read(&pool).await.unwrap_or_default();
        loop {
            let data = serde_json::to_string(&current).unwrap_or_default();
            if tx.send(Event::default().data(data)).await.is_err() {
                return;
            }
            loop {
                if rx.changed().await.is_err() {
                    return;
                }
                let next = *rx.borrow_and_update();
                if next != current {
                    current = next;
                    break;
                }
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `GET /api/events/engines/{profile}`: the engine's status and its log as it grows.
pub async fn engine(State(s): State<WebState>, Path(profile): Path<String>) -> Response {
    if !app::domain::profile::valid_name(&profile) {
        return (axum::http::StatusCode::BAD_REQUEST, "bad profile name").into_response();
    }
    let log_path = s.ctx.control.log_path(&profile);
    let mut fleet = s.fleet.clone();
    let mut gpu = s.gpu.clone();
    let history = s.history.clone();
    let runs = s.runs.clone();
    let incidents = s.incidents.store.clone();
    let mut records = s.records.subscribe();
    let client = s.metrics.sse_client();
    let stream = async_stream(move |tx| async move {
        let _client = client;
        // The open incident, read again whenever an incident record changes.
        let mut incident = incidents.open_for(&profile).await.ok().flatten();
        let mut last_incident = None;
        // Only the incidents' version matters here: a change's write must not cost each open
        // engine page a query.
        let mut incidents_seen = records.borrow_and_update().incidents;
        // Start at the end: the page rendered the tail already (and fetched its chart range).
        let mut offset = std::fs::metadata(&log_path).map(|m| m.len()).unwrap_or(0);
        let mut last_status = None;
        let mut last_run = None;
        // A minute of overlap with what the page fetched; the page keeps only newer points.
        let mut last_point_ms = crate::monitor::history::now_ms() - 60_000;
        gpu.mark_changed();
        loop {
            let status = fleet
                .borrow_and_update()
                .iter()
                .find(|e| e.node.is_empty() && e.profile == profile)
                .cloned();
            let Some(status) = status else { return };
            // A reader far behind (it stopped reading while the engine logged a lot) gets the
            // log's last part with a marker, never a backlog held for it.
            let mut skipped = None;
            if let Ok(len) = std::fs::metadata(&log_path).map(|m| m.len()) {
                if len > offset.saturating_add(LOG_BEHIND_MAX) {
                    let to = len - LOG_CATCH_UP;
                    skipped = Some(to - offset);
                    offset = to;
                }
            }
            let (mut lines, next, reset) =
                logs::read_since_at_most(&log_path, offset, LOG_EVENT_MAX).unwrap_or((Vec::new(), offset, false));
            if let Some(bytes) = skipped {
                // The first line read may start mid-line: the marker replaces it.
                if !lines.is_empty() {
                    lines.remove(0);
                }
                lines.insert(
                    0,
                    format!("… [{bytes} bytes of log skipped: this page fell behind; `roofline logs` has them]"),
                );
            }
            offset = next;
            let run = runs.status(&profile);
            let points = history.since(&profile, last_point_ms);
            if let Some(p) = points.last() {
                last_point_ms = p.t_ms;
            }
            let gpu_now = gpu
                .has_changed()
                .unwrap_or(false)
                .then(|| gpu.borrow_and_update().clone());
            let incidents_now = records.borrow_and_update().incidents;
            if incidents_now != incidents_seen {
                incidents_seen = incidents_now;
                incident = incidents.open_for(&profile).await.ok().flatten();
            }
            if !lines.is_empty()
                || reset
                || !points.is_empty()
                || gpu_now.is_some()
                || last_status.as_ref() != Some(&status)
                || last_run != run
                || last_incident != incident
            {
                last_status = Some(status.clone());
                last_run = run.clone();
                last_incident = incident;
                let ev = EngineEvent {
                    status,
                    lines,
                    reset,
                    run,
                    points,
                    gpu: gpu_now,
                    incident,
                };
                let data = serde_json::to_string(&ev).unwrap_or_default();
                if tx.send(Event::default().data(data)).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                _ = fleet.changed() => {}
                changed = records.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// How far behind the log's end a stream may be before it skips to the end's last part.
const LOG_BEHIND_MAX: u64 = 1 << 20;
/// How much of the end it then sends.
const LOG_CATCH_UP: u64 = 64 << 10;
/// The most log one event carries (the rest follows in the next events): with one event
/// queued and one being written, a stream that stopped reading holds a few hundred KiB.
const LOG_EVENT_MAX: u64 = 128 << 10;

/// A stream fed by a producer task. The channel holds one event: a reader that stops reading
/// stops the producer at its next send (each producer sends the latest state when it
/// resumes), so nothing queues up for it.
fn async_stream<F, Fut>(producer: F) -> impl Stream<Item = Result<Event, Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Event>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    use futures::StreamExt;
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(producer(tx));
    tokio_stream::wrappers::ReceiverStream::new(rx).map(Ok)
}
