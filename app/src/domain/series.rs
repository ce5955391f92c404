//! Time series of an engine's signals: the points the charts draw, the bounded in-memory ring
//! that holds the last minutes at scrape resolution, and the one-minute rollups that keep 24
//! hours of history in SQLite.
//!
//! A rollup is not an average of points: rates and percentiles are recomputed from the first
//! and last scrape of the minute (histogram bucket deltas), so a minute's TTFT p95 is the p95
//! of the requests that finished in that minute. Gauges (running, waiting, KV) are averaged.

use crate::domain::gpu::{GpuState, GpuSummary};
use crate::domain::signals::{live, Live, Signals};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One instant of an engine: its live signals and its GPUs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Point {
    /// Unix time in milliseconds.
    pub t_ms: i64,
    pub live: Live,
    #[serde(default)]
    pub gpu: Option<GpuSummary>,
}

/// The time ranges the charts offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub enum Range {
    #[serde(rename = "15m")]
    Last15m,
    #[serde(rename = "1h")]
    Last1h,
    #[serde(rename = "24h")]
    Last24h,
    /// Beyond the console's own day of rollups: offered when Prometheus keeps the history.
    #[serde(rename = "7d")]
    Last7d,
    #[serde(rename = "30d")]
    Last30d,
}

impl Range {
    pub const ALL: [Range; 5] = [
        Range::Last15m,
        Range::Last1h,
        Range::Last24h,
        Range::Last7d,
        Range::Last30d,
    ];

    pub fn secs(self) -> i64 {
        match self {
            Range::Last15m => 15 * 60,
            Range::Last1h => 3600,
            Range::Last24h => 24 * 3600,
            Range::Last7d => 7 * 24 * 3600,
            Range::Last30d => 30 * 24 * 3600,
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Range::Last15m => "15m",
            Range::Last1h => "1h",
            Range::Last24h => "24h",
            Range::Last7d => "7d",
            Range::Last30d => "30d",
        }
    }

    /// The 15-minute range is served from memory at scrape resolution; longer ones from the
    /// minute rollups.
    pub fn from_rollups(self) -> bool {
        self != Range::Last15m
    }

    /// Longer than the console keeps its own rollups: only Prometheus has it.
    pub fn needs_prometheus(self) -> bool {
        self.secs() > ROLLUP_KEEP_SECS
    }
}

/// How long the in-memory ring keeps points.
pub const RING_SECS: i64 = 15 * 60;
/// How long rollups are kept on disk.
pub const ROLLUP_KEEP_SECS: i64 = 24 * 3600;

/// The last [`RING_SECS`] of points, oldest first. Bounded by time and by count (a 1 s scrape
/// interval fills it with 900 points; the count bound protects against a clock jump).
#[derive(Clone, Debug, Default)]
pub struct Ring {
    points: VecDeque<Point>,
}

impl Ring {
    pub const MAX_POINTS: usize = 2 * RING_SECS as usize;

    pub fn push(&mut self, p: Point) {
        let horizon = p.t_ms - RING_SECS * 1000;
        self.points.push_back(p);
        while self.points.front().is_some_and(|f| f.t_ms < horizon) || self.points.len() > Self::MAX_POINTS {
            self.points.pop_front();
        }
    }

    /// Points newer than `t_ms`, oldest first.
    pub fn since(&self, t_ms: i64) -> Vec<Point> {
        self.points.iter().filter(|p| p.t_ms > t_ms).cloned().collect()
    }

    pub fn last(&self) -> Option<&Point> {
        self.points.back()
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// Accumulates one minute of scrapes into a rollup point.
#[derive(Clone, Debug)]
pub struct MinuteRollup {
    minute: i64,
    first: Signals,
    last: Signals,
    first_t_ms: i64,
    last_t_ms: i64,
    gauges: [Mean; 3],
    gpu: Vec<GpuSummary>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Mean {
    sum: f64,
    n: u32,
}

impl Mean {
    fn add(&mut self, v: Option<f64>) {
        if let Some(v) = v {
            self.sum += v;
            self.n += 1;
        }
    }

    fn get(self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / f64::from(self.n))
    }
}

/// The minute a timestamp falls in (Unix minutes).
pub fn minute_of(t_ms: i64) -> i64 {
    t_ms.div_euclid(60_000)
}

impl MinuteRollup {
    /// Starts a minute with its first scrape. `prev` is the last scrape of the minute before,
    /// when there is one, so the first minute's deltas are not lost between minutes.
    pub fn start(t_ms: i64, prev: Option<(i64, Signals)>, s: Signals, gpu: Option<GpuSummary>) -> Self {
        let (first_t_ms, first) = prev.unwrap_or((t_ms, s.clone()));
        let mut r = Self {
            minute: minute_of(t_ms),
            first,
            first_t_ms,
            last: s.clone(),
            last_t_ms: t_ms,
            gauges: Default::default(),
            gpu: Vec::new(),
        };
        r.add_gauges(&s, gpu);
        r
    }

    pub fn minute(&self) -> i64 {
        self.minute
    }

    /// Adds a scrape of the same minute; a scrape of a later minute returns the closed rollup
    /// and the caller starts the next one with [`MinuteRollup::start`].
    pub fn add(&mut self, t_ms: i64, s: Signals, gpu: Option<GpuSummary>) -> bool {
        if minute_of(t_ms) != self.minute {
            return false;
        }
        self.add_gauges(&s, gpu);
        self.last = s;
        self.last_t_ms = t_ms;
        true
    }

    fn add_gauges(&mut self, s: &Signals, gpu: Option<GpuSummary>) {
        self.gauges[0].add(s.running);
        self.gauges[1].add(s.waiting);
        self.gauges[2].add(s.kv_usage);
        self.gpu.extend(gpu);
    }

    /// The last scrape, to seed the next minute.
    pub fn last_scrape(&self) -> (i64, Signals) {
        (self.last_t_ms, self.last.clone())
    }

    /// The minute as one point, stamped at the minute's start.
    pub fn finish(&self) -> Point {
        let window = (self.last_t_ms - self.first_t_ms) as f64 / 1000.0;
        let mut l = live(&self.first, &self.last, window);
        l.running = self.gauges[0].get();
        l.waiting = self.gauges[1].get();
        l.kv_usage = self.gauges[2].get();
        Point {
            t_ms: self.minute * 60_000,
            live: l,
            gpu: GpuSummary::mean(&self.gpu),
        }
    }
}

/// The engine's GPUs at one reading, when any GPU runs one of its processes.
pub fn gpu_for(state: &GpuState, profile: &str) -> Option<GpuSummary> {
    GpuSummary::of_profile(state, profile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::signals::Histogram;

    fn scrape(gen: f64, waiting: f64, ttft: &[(f64, f64)]) -> Signals {
        Signals {
            waiting: Some(waiting),
            running: Some(1.0),
            generation_tokens_total: Some(gen),
            ttft: Some(Histogram {
                buckets: ttft.to_vec(),
                sum: 0.0,
                count: ttft.last().unwrap().1,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn ring_is_bounded_by_time() {
        let mut r = Ring::default();
        for s in 0..2000 {
            r.push(Point {
                t_ms: s * 1000,
                ..Default::default()
            });
        }
        assert_eq!(r.len(), RING_SECS as usize + 1);
        assert_eq!(r.since(1998 * 1000).len(), 1);
        assert_eq!(r.last().unwrap().t_ms, 1_999_000);
    }

    #[test]
    fn a_rollup_recomputes_rates_and_percentiles_over_its_minute() {
        let inf = f64::INFINITY;
        let t0 = 60_000 * 1000; // minute 1000
        let before = scrape(0.0, 0.0, &[(0.1, 0.0), (0.5, 0.0), (inf, 0.0)]);
        let mut r = MinuteRollup::start(
            t0 + 5_000,
            Some((t0 - 5_000, before)),
            scrape(50.0, 2.0, &[(0.1, 10.0), (0.5, 10.0), (inf, 10.0)]),
            None,
        );
        assert!(r.add(
            t0 + 35_000,
            scrape(200.0, 4.0, &[(0.1, 10.0), (0.5, 20.0), (inf, 20.0)]),
            None
        ));
        assert!(r.add(
            t0 + 55_000,
            scrape(600.0, 6.0, &[(0.1, 10.0), (0.5, 30.0), (inf, 30.0)]),
            None
        ));
        assert!(!r.add(
            t0 + 61_000,
            scrape(700.0, 0.0, &[(0.1, 10.0), (0.5, 30.0), (inf, 30.0)]),
            None
        ));
        let p = r.finish();
        assert_eq!(p.t_ms, t0);
        // 600 tokens from t0-5 s to t0+55 s: 60 s → 10 tokens/s.
        assert_eq!(p.live.rates.generation_tokens_per_s, Some(10.0));
        // Mean of the waiting gauge: (2 + 4 + 6) / 3.
        assert_eq!(p.live.waiting, Some(4.0));
        // 30 requests in the minute: 10 ≤ 0.1 s and 20 in (0.1, 0.5]; p50 = rank 15 →
        // 5/20 of the way through (0.1, 0.5] = 0.2 s.
        assert!((p.live.ttft_p50_ms.unwrap() - 200.0).abs() < 1e-9);
        assert_eq!(r.last_scrape().0, t0 + 55_000);
    }

    #[test]
    fn ranges_round_trip_through_their_ids() {
        for r in Range::ALL {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.id()));
            assert_eq!(serde_json::from_str::<Range>(&json).unwrap(), r);
        }
        assert!(Range::Last24h.from_rollups() && !Range::Last15m.from_rollups());
    }
}
