//! Capturing the evidence of an incident before anything is touched (operating rule 1):
//! health and a one-token completion, the metric window, GPU state, the log tail, the profile,
//! the engine version and recent changes.

use crate::context::Context;
use crate::control::{logs, ControlError};
use crate::monitor::history::{now_ms, History};
use app::domain::engine::EngineState;
use app::domain::gpu::GpuState;
use app::domain::series::{Point, Range};
use app::domain::triage::{Change, Evidence, RECENT_CHANGE_MS};
use std::time::{Duration, Instant};

/// How long health and the completion probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// Log lines kept with the evidence (and scanned by the investigator).
pub const LOG_LINES: usize = 400;

/// Where the metric window comes from: the console's history, or scrapes taken now (the CLI).
pub enum Window<'a> {
    History(&'a History),
    /// Scrape three times over this long.
    Scrape(Duration),
}

/// Captures the evidence for `profile`. `gpu` is the console's latest reading; without one
/// the GPUs are read now.
pub async fn collect(
    ctx: &Context,
    profile: &str,
    window: Window<'_>,
    gpu: Option<GpuState>,
    clients_see_errors: bool,
) -> Result<Evidence, ControlError> {
    let resolved = ctx.control.resolve(profile).await?;
    let (p, kind) = (&resolved.profile, resolved.kind);
    let status = ctx.control.status(p).await;
    let engine = resolved.engine();
    let base = engine.base().to_string();

    let t0 = Instant::now();
    let health_status = engine.health(PROBE_TIMEOUT).await.ok();
    let health_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let (mut probe_ms, mut probe_failed) = (None, false);
    if health_status == Some(200) {
        match engine.probe(p.model_name(), PROBE_TIMEOUT).await {
            Ok(ms) => probe_ms = Some(ms),
            Err(_) => probe_failed = true,
        }
    }

    // The window: the console's history when there is one, and always a fresh reading of the
    // last seconds at the end, so "is anything generated right now" is not blurred by the
    // minutes before the symptom.
    let mut metrics_note = None;
    let mut points = match window {
        Window::History(h) => h.points(profile, Range::Last15m, now_ms()).await.unwrap_or_default(),
        Window::Scrape(_) => Vec::new(),
    };
    if health_status.is_some() {
        let span = match window {
            Window::Scrape(d) => d,
            Window::History(_) => Duration::from_secs(2),
        };
        match scrape_window(&engine, span).await {
            Ok(p) => points.extend(p),
            Err(e) => metrics_note = Some(e.to_string()),
        }
    } else {
        metrics_note = Some(format!("{base}/metrics: no answer"));
    }

    let mut gpu = match gpu {
        Some(g) => g,
        None => crate::gpu::read().await,
    };
    if let Some(pid) = status.pid {
        app::domain::gpu::mark_owners(&mut gpu, &[(pid, p.name.clone())], crate::gpu::process_group);
    }

    // One read of this run's log (its last 64 MiB): the investigator scans all of it, the
    // evidence keeps the tail.
    let log_path = ctx.control.log_path(profile);
    let log = tokio::task::spawn_blocking(move || logs::read_last(&log_path, 64 << 20).ok())
        .await
        .ok()
        .flatten();
    let log_tail = log
        .as_ref()
        .map(|(text, cut)| logs::last_lines(text, *cut, LOG_LINES))
        .unwrap_or_default();
    let investigation =
        log.map(|(text, _)| app::domain::logscan::investigate(&text, app::domain::triage::preemption_bursts(&points)));
    let engine_version = if health_status == Some(200) {
        engine.version().await
    } else {
        None
    };
    // The model directory as it is now (hashes only where already known: triage never waits
    // on hashing); a path outside the models root is the launch policy's to report.
    let model_check = match crate::config::confined(&ctx.data.models_root(), std::path::Path::new(&p.model)) {
        Ok(dir) => ctx
            .control
            .check_model_with(&dir, crate::models::HashMode::CachedOnly, status.simulated)
            .await
            .ok(),
        Err(_) => None,
    };
    // The pinned set against the host now, when the start failed on a driver/CUDA/torch
    // mismatch (the environment report takes seconds on a real host: only then).
    use app::domain::startup_failure::{classify, FailureRow};
    let driver_mismatch = status
        .failure
        .as_ref()
        .or(classify(log_tail.iter().map(String::as_str)).as_ref())
        .is_some_and(|m| m.row == FailureRow::DriverMismatch);
    let pins = if driver_mismatch {
        ctx.control.pin_comparison(profile).await
    } else {
        None
    };
    let captured_at_ms = ctx.clock.now_ms();
    let recent_changes = recent_changes(ctx, profile, engine_version.as_deref(), captured_at_ms).await;
    Ok(Evidence {
        captured_at_ms,
        profile: profile.to_string(),
        engine_kind: Some(kind),
        state: Some(status.state),
        health_status,
        health_ms: health_status.map(|_| health_ms),
        probe_ms,
        probe_failed,
        points,
        metrics_note,
        gpu: Some(gpu),
        log_tail,
        failure: status.failure,
        profile_env: p.to_env(),
        engine_version,
        recent_changes,
        clients_see_errors,
        investigation,
        stall: status.stall,
        died_at_ms: matches!(status.state, EngineState::Dead)
            .then(|| ctx.control.exited_at_ms(profile))
            .flatten(),
        model_check,
        pins,
        capture: ctx.control.latest_capture(profile, CAPTURE_WITHIN_MS),
    })
}

/// How old a capture may be and still belong to this incident.
const CAPTURE_WITHIN_MS: i64 = 6 * 3600 * 1000;

/// Three scrapes `span / 2` apart: two points of rates and percentiles.
async fn scrape_window(
    engine: &crate::engine::Engine,
    span: Duration,
) -> Result<Vec<Point>, crate::engine::ScrapeError> {
    let mut scrapes = Vec::new();
    for i in 0..3 {
        if i > 0 {
            tokio::time::sleep(span / 2).await;
        }
        let (s, _) = engine.scrape().await?;
        scrapes.push((Instant::now(), now_ms(), s));
    }
    Ok(scrapes
        .windows(2)
        .map(|w| Point {
            t_ms: w[1].1,
            live: app::domain::signals::live(&w[0].2, &w[1].2, w[1].0.duration_since(w[0].0).as_secs_f64()),
            gpu: None,
        })
        .collect())
}

/// Profile edits in the last day, and an engine version different from the one the last bench
/// ran against.
async fn recent_changes(ctx: &Context, profile: &str, version: Option<&str>, now: i64) -> Vec<Change> {
    let mut out = Vec::new();
    if let Ok(Some(stored)) = ctx.store.get(profile).await {
        // A profile created recently is new, not changed.
        let changed = stored.updated_at != stored.created_at;
        if let Some(at) = parse_utc_ms(&stored.updated_at).filter(|_| changed) {
            if now - at <= RECENT_CHANGE_MS {
                out.push(Change {
                    at_ms: at,
                    what: format!("profile {profile} changed at {}", stored.updated_at),
                });
            }
        }
    }
    let runs = crate::runs::store::RunStore::new(ctx.pool.clone());
    if let (Some(now_version), Ok(benches)) = (version, runs.benches(Some(profile), 1).await) {
        if let Some(b) = benches.first() {
            if let Some(before) = b.engine_version.as_deref().filter(|v| *v != now_version) {
                out.push(Change {
                    at_ms: parse_utc_ms(&b.created_at)
                        .map(|t| t.max(now - RECENT_CHANGE_MS / 2))
                        .unwrap_or(now),
                    what: format!("engine version {before} → {now_version} (last bench ran on {before})"),
                });
            }
        }
    }
    out
}

/// `2026-12-02T10:00:00Z` → Unix ms.
pub fn parse_utc_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<u32>().ok();
    let month = time::Month::try_from(n(5..7)? as u8).ok()?;
    let date = time::Date::from_calendar_date(n(0..4)? as i32, month, n(8..10)? as u8).ok()?;
    let t = time::Time::from_hms(n(11..13)? as u8, n(14..16)? as u8, n(17..19)? as u8).ok()?;
    Some(time::PrimitiveDateTime::new(date, t).assume_utc().unix_timestamp() * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_timestamps_parse() {
        assert_eq!(parse_utc_ms("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(parse_utc_ms("yesterday"), None);
    }
}
