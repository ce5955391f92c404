//! Signal history: the last minutes in memory at scrape resolution (what the 15-minute charts
//! and the live stream read), and one-minute rollups in SQLite for 24 hours (the 1 h and 24 h
//! ranges, surviving a console restart). Both are bounded: the ring by time and count, the
//! table by pruning rows older than a day.

use crate::db::Pool;
use app::domain::gpu::GpuSummary;
use app::domain::series::{minute_of, MinuteRollup, Point, Range, Ring, ROLLUP_KEEP_SECS};
use app::domain::signals::Signals;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Errors reading or writing rollups.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("signal history database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("stored rollup of {profile} at minute {minute} is unreadable: {source}")]
    Corrupt {
        profile: String,
        minute: i64,
        source: serde_json::Error,
    },
    /// A range longer than the console's own day of rollups, without an answer from
    /// Prometheus (none configured, or it failed: the console's log says which).
    #[error("the {0} range comes from Prometheus ([prometheus] url), which gave no history for it")]
    Beyond(&'static str),
}

pub use crate::clock::now_ms;

/// Rings and open minutes per profile, shared by the collector (writer) and the web handlers
/// (readers).
#[derive(Clone)]
pub struct History {
    pool: Pool,
    inner: Arc<Mutex<HashMap<String, Track>>>,
    /// The team's Prometheus, when host configuration names one: the longer ranges, and the
    /// part of a window the memory does not hold, come from there.
    prometheus: Option<super::promql::Prometheus>,
}

#[derive(Default)]
struct Track {
    ring: Ring,
    minute: Option<MinuteRollup>,
}

impl History {
    pub fn new(pool: Pool) -> Self {
        Self {
            pool,
            inner: Default::default(),
            prometheus: None,
        }
    }

    pub fn with_prometheus(mut self, prometheus: Option<super::promql::Prometheus>) -> Self {
        self.prometheus = prometheus;
        self
    }

    /// History comes from Prometheus (its `[prometheus] url` is set).
    pub fn has_prometheus(&self) -> bool {
        self.prometheus.is_some()
    }

    /// Points from Prometheus, `None` when there is none, it fails (logged: the caller falls
    /// back to what the console keeps) or it has nothing for this engine.
    async fn prometheus_points(&self, profile: &str, from: i64, to: i64, step_s: i64) -> Option<Vec<Point>> {
        let prom = self.prometheus.as_ref()?;
        match prom.points(profile, from, to, step_s).await {
            Ok(p) if !p.is_empty() => Some(p),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(profile, error = %e, "history from Prometheus; using the console's own");
                None
            }
        }
    }

    /// Records a scrape: `point` (the sliding-window view) goes to the ring; the raw scrape
    /// feeds the minute rollup, which is written when the minute closes.
    pub async fn record(&self, profile: &str, point: Point, scrape: Signals, gpu: Option<GpuSummary>) {
        let closed = {
            let Ok(mut all) = self.inner.lock() else { return };
            let track = all.entry(profile.to_string()).or_default();
            let t = point.t_ms;
            track.ring.push(point);
            let accepted = match &mut track.minute {
                Some(m) => m.add(t, scrape.clone(), gpu.clone()),
                None => false,
            };
            if accepted {
                None
            } else if let Some(m) = &track.minute {
                let closed = m.finish();
                let prev = m.last_scrape();
                // A gap of more than a minute (engine down, console paused) starts afresh.
                let prev = (minute_of(prev.0) + 1 == minute_of(t)).then_some(prev);
                track.minute = Some(MinuteRollup::start(t, prev, scrape, gpu));
                Some(closed)
            } else {
                track.minute = Some(MinuteRollup::start(t, None, scrape, gpu));
                None
            }
        };
        if let Some(p) = closed.filter(|_| !crate::db::away()) {
            if let Err(e) = self.store(profile, &p).await {
                tracing::warn!(error = %e, profile, "storing a signal rollup");
            }
        }
    }

    /// Forgets the in-memory state of profiles no longer collected (their rollups stay).
    pub fn retain(&self, live: &[String]) {
        if let Ok(mut all) = self.inner.lock() {
            all.retain(|p, _| live.contains(p));
        }
    }

    /// Ring points of `profile` newer than `t_ms`.
    pub fn since(&self, profile: &str, t_ms: i64) -> Vec<Point> {
        self.inner
            .lock()
            .ok()
            .and_then(|all| all.get(profile).map(|t| t.ring.since(t_ms)))
            .unwrap_or_default()
    }

    async fn store(&self, profile: &str, p: &Point) -> Result<(), HistoryError> {
        let json = serde_json::to_string(p).unwrap_or_default();
        sqlx::query("insert into signal_rollup (profile, minute, point) values ($1, $2, $3) on conflict (profile, minute) do update set point = excluded.point")
            .bind(profile)
            .bind(minute_of(p.t_ms))
            .bind(json)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Deletes rollups older than a day; returns how many went.
    pub async fn prune(&self, now_ms: i64) -> Result<u64, HistoryError> {
        let oldest = minute_of(now_ms - ROLLUP_KEEP_SECS * 1000);
        let r = sqlx::query("delete from signal_rollup where minute < $1")
            .bind(oldest)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected())
    }

    /// The points a chart of `range` draws, oldest first.
    pub async fn points(&self, profile: &str, range: Range, now_ms: i64) -> Result<Vec<Point>, HistoryError> {
        let from = now_ms - range.secs() * 1000;
        if !range.from_rollups() {
            let ring = self.since(profile, from);
            // The memory holds the window only since this console started following the
            // engine: Prometheus fills the minutes before.
            let covered_from = ring.first().map_or(now_ms, |p| p.t_ms);
            if covered_from - from > 60_000 {
                if let Some(mut before) = self.prometheus_points(profile, from, covered_from - 1, 15).await {
                    before.retain(|p| p.t_ms < covered_from);
                    before.extend(ring);
                    return Ok(before);
                }
            }
            return Ok(ring);
        }
        // 240 points across the range, as far back as Prometheus keeps them.
        if let Some(points) = self
            .prometheus_points(profile, from, now_ms, (range.secs() / 240).max(15))
            .await
        {
            return Ok(points);
        }
        if range.needs_prometheus() {
            // Not the console's day of rollups drawn as if it were a week.
            return Err(HistoryError::Beyond(range.id()));
        }
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "select minute, point from signal_rollup where profile = $1 and minute >= $2 order by minute",
        )
        .bind(profile)
        .bind(minute_of(from))
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len() + 60);
        for (minute, text) in rows {
            let p: Point = serde_json::from_str(&text).map_err(|source| HistoryError::Corrupt {
                profile: profile.to_string(),
                minute,
                source,
            })?;
            out.push(p);
        }
        // The minute in progress is not stored yet: its ring points fill the end.
        let last = out.last().map(|p| p.t_ms + 60_000).unwrap_or(from);
        out.extend(self.since(profile, last - 1));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in Prometheus answering every `query_range` with two points a step apart,
    /// starting at the asked start; it records the queries it was asked.
    async fn fake_prometheus(asked: Arc<Mutex<Vec<String>>>) -> String {
        use axum::{routing::post, Router};
        let app = Router::new().route(
            "/api/v1/query_range",
            post(move |body: String| {
                let asked = asked.clone();
                async move {
                    let start: f64 = body
                        .split('&')
                        .find_map(|kv| kv.strip_prefix("start="))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0.0);
                    asked.lock().unwrap().push(body);
                    axum::Json(
                        serde_json::json!({"status": "success", "data": {"resultType": "matrix", "result": [
                            {"metric": {}, "values": [[start, "4"], [start + 15.0, "5"]]}
                        ]}}),
                    )
                }
            }),
        );
        crate::engine::loopback(app).await
    }

    /// Issue 16: with a Prometheus, the longer ranges come from it, and so do the minutes of
    /// the quarter hour before this console's memory begins; without an answer the console's
    /// own points stand.
    #[tokio::test]
    async fn prometheus_fills_what_the_console_does_not_keep() {
        let dir = tempfile::tempdir().unwrap();
        let asked: Arc<Mutex<Vec<String>>> = Default::default();
        let url = fake_prometheus(asked.clone()).await;
        let h = History::new(crate::db::open(&dir.path().join("h.db")).await.unwrap())
            .with_prometheus(Some(crate::monitor::promql::Prometheus::new(&url, "gpu-a")));
        let now = 1_800_000_000_000;
        let hour = h.points("a", Range::Last1h, now).await.unwrap();
        assert_eq!(
            hour.iter().map(|p| p.t_ms).collect::<Vec<_>>(),
            [now - 3_600_000, now - 3_585_000]
        );
        assert_eq!(hour[0].live.waiting, Some(4.0));
        assert!(asked
            .lock()
            .unwrap()
            .iter()
            .all(|q| q.contains("step=15s") && q.contains("host%3D%22gpu-a%22")));
        // The memory holds the last minute only: the quarter hour before it is Prometheus'.
        for t in [now - 50_000, now - 40_000] {
            h.record(
                "a",
                Point {
                    t_ms: t,
                    live: app::domain::signals::Live {
                        waiting: Some(9.0),
                        ..Default::default()
                    },
                    gpu: None,
                },
                scrape(1.0, 9.0),
                None,
            )
            .await;
        }
        let quarter = h.points("a", Range::Last15m, now).await.unwrap();
        let ts: Vec<i64> = quarter.iter().map(|p| p.t_ms).collect();
        assert_eq!(ts, [now - 900_000, now - 885_000, now - 50_000, now - 40_000]);
        // No Prometheus answering: the console's own points.
        let h = History::new(crate::db::open(&dir.path().join("h2.db")).await.unwrap()).with_prometheus(Some(
            crate::monitor::promql::Prometheus::new("http://127.0.0.1:9", "gpu-a"),
        ));
        assert!(h.points("a", Range::Last1h, now).await.unwrap().is_empty());
        // A week is Prometheus' alone: refused, naming it, rather than a day drawn as a week.
        let e = h.points("a", Range::Last7d, now).await.unwrap_err();
        assert!(e.to_string().contains("[prometheus] url"), "{e}");
    }

    /// Issue 16: the charts' week and month come from Prometheus, 240 points across them.
    #[tokio::test]
    async fn a_week_and_a_month_come_from_prometheus() {
        let dir = tempfile::tempdir().unwrap();
        let asked: Arc<Mutex<Vec<String>>> = Default::default();
        let url = fake_prometheus(asked.clone()).await;
        let h = History::new(crate::db::open(&dir.path().join("h.db")).await.unwrap())
            .with_prometheus(Some(crate::monitor::promql::Prometheus::new(&url, "gpu-a")));
        assert!(h.has_prometheus());
        let now = 1_800_000_000_000;
        for (range, step) in [(Range::Last7d, "step=2520s"), (Range::Last30d, "step=10800s")] {
            asked.lock().unwrap().clear();
            let points = h.points("a", range, now).await.unwrap();
            assert_eq!(points[0].t_ms, now - range.secs() * 1000);
            assert!(asked.lock().unwrap().iter().all(|q| q.contains(step)), "{range:?}");
        }
        let own = History::new(crate::db::open(&dir.path().join("h2.db")).await.unwrap());
        assert!(!own.has_prometheus());
        assert!(own.points("a", Range::Last30d, now).await.is_err());
    }

    fn scrape(gen: f64, waiting: f64) -> Signals {
        Signals {
            waiting: Some(waiting),
            generation_tokens_total: Some(gen),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn minutes_are_rolled_up_survive_a_restart_and_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let pool = crate::db::open(&path).await.unwrap();
        let h = History::new(pool.clone());
        let t0 = minute_of(now_ms()) * 60_000 - 3 * 3600 * 1000;
        // Three hours of scrapes every 20 s.
        for i in 0..(3 * 180) {
            let t = t0 + i * 20_000;
            let point = Point {
                t_ms: t,
                ..Default::default()
            };
            h.record("a", point, scrape(i as f64 * 100.0, 3.0), None).await;
        }
        drop(h);
        // A new console on the same database sees the stored minutes.
        let h = History::new(pool);
        let now = t0 + 3 * 3600 * 1000;
        let hour = h.points("a", Range::Last1h, now).await.unwrap();
        // 59 closed minutes; the open minute died with the first console's ring.
        assert_eq!(hour.len(), 59);
        let p = &hour[0];
        assert_eq!(p.live.waiting, Some(3.0));
        // 100 tokens every 20 s.
        assert!((p.live.rates.generation_tokens_per_s.unwrap() - 5.0).abs() < 1e-9);
        let day = h.points("a", Range::Last24h, now).await.unwrap();
        assert_eq!(day.len(), 3 * 60 - 1, "every closed minute of three hours");
        assert!(h.points("b", Range::Last24h, now).await.unwrap().is_empty());
        // A day later, all of it is pruned.
        assert_eq!(h.prune(now + 25 * 3600 * 1000).await.unwrap(), 3 * 60 - 1);
    }

    #[tokio::test]
    async fn the_ring_serves_the_last_quarter_hour() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::new(crate::db::open(&dir.path().join("h.db")).await.unwrap());
        let now = now_ms();
        for i in 0..100 {
            let point = Point {
                t_ms: now - (100 - i) * 15_000,
                ..Default::default()
            };
            h.record("a", point, scrape(0.0, 0.0), None).await;
        }
        let q = h.points("a", Range::Last15m, now).await.unwrap();
        assert_eq!(q.len(), 59, "every 15 s, strictly inside the last 15 min");
        assert_eq!(h.since("a", now - 30_001).len(), 2);
    }
}
