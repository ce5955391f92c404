//! The engine page's charts: which signals each one draws, and what a chart is handed to
//! draw. Plain functions of the points, so they are tested without a browser; the
//! [`crate::components::Chart`] component turns the description into uPlot's options.
//!
//! The description is plain JSON in uPlot's own shape (one column of times, one column per
//! line, `null` for a gap): the chart script is uPlot (21 KiB compressed) rather than ECharts
//! (147 KiB even as the console's own build), which alone kept the charts section over its
//! page-weight budget (BENCHMARKS.md, "Page weight").

use crate::domain::series::Point;
use serde_json::{json, Value};

/// One chart of the engine page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    Queue,
    KvCache,
    Preemptions,
    Latency,
    PrefixHit,
    Throughput,
    GpuMemory,
    GpuLoad,
}

/// A line of a chart: its label key (`series-…` in the locales) and how to read it.
pub struct SeriesSpec {
    pub key: &'static str,
    pub pick: fn(&Point) -> Option<f64>,
}

macro_rules! spec {
    ($key:literal, $pick:expr) => {
        SeriesSpec { key: $key, pick: $pick }
    };
}

const QUEUE: &[SeriesSpec] = &[
    spec!("running", |p| p.live.running),
    spec!("waiting", |p| p.live.waiting),
];
const KV: &[SeriesSpec] = &[spec!("kv-usage", |p| p.live.kv_usage.map(|v| v * 100.0))];
const PREEMPTIONS: &[SeriesSpec] = &[spec!("preemptions", |p| p.live.rates.preemptions_per_s)];
const LATENCY: &[SeriesSpec] = &[
    spec!("ttft-p50", |p| p.live.ttft_p50_ms),
    spec!("ttft-p95", |p| p.live.ttft_p95_ms),
    spec!("ttft-p99", |p| p.live.ttft_p99_ms),
    spec!("tpot-p50", |p| p.live.itl_p50_ms),
    spec!("tpot-p95", |p| p.live.itl_p95_ms),
    spec!("tpot-p99", |p| p.live.itl_p99_ms),
    spec!("e2e-p95", |p| p.live.e2e_p95_ms),
    spec!("queue-p95", |p| p.live.queue_p95_ms),
];
const PREFIX: &[SeriesSpec] = &[spec!("prefix-hit", |p| p.live.rates.prefix_hit_rate.map(|v| v * 100.0))];
const THROUGHPUT: &[SeriesSpec] = &[
    spec!("prompt-tps", |p| p.live.rates.prompt_tokens_per_s),
    spec!("generation-tps", |p| p.live.rates.generation_tokens_per_s),
];
const GPU_MEMORY: &[SeriesSpec] = &[
    spec!("gpu-memory-used", |p| p.gpu.as_ref().map(|g| g.memory_used_gib)),
    spec!("gpu-memory-total", |p| p.gpu.as_ref().map(|g| g.memory_total_gib)),
];
const GPU_LOAD: &[SeriesSpec] = &[
    spec!("gpu-util", |p| p.gpu.as_ref().and_then(|g| g.utilization_pct)),
    spec!("gpu-temp", |p| p.gpu.as_ref().and_then(|g| g.temperature_c)),
];

impl ChartKind {
    pub const ALL: [ChartKind; 8] = [
        ChartKind::Queue,
        ChartKind::KvCache,
        ChartKind::Preemptions,
        ChartKind::Latency,
        ChartKind::PrefixHit,
        ChartKind::Throughput,
        ChartKind::GpuMemory,
        ChartKind::GpuLoad,
    ];

    /// Stable id: test ids and locale keys (`chart-…`, `chart-nosource-…`).
    pub fn id(self) -> &'static str {
        match self {
            ChartKind::Queue => "queue",
            ChartKind::KvCache => "kv",
            ChartKind::Preemptions => "preemptions",
            ChartKind::Latency => "latency",
            ChartKind::PrefixHit => "prefix-hit",
            ChartKind::Throughput => "throughput",
            ChartKind::GpuMemory => "gpu-memory",
            ChartKind::GpuLoad => "gpu-load",
        }
    }

    pub fn series(self) -> &'static [SeriesSpec] {
        match self {
            ChartKind::Queue => QUEUE,
            ChartKind::KvCache => KV,
            ChartKind::Preemptions => PREEMPTIONS,
            ChartKind::Latency => LATENCY,
            ChartKind::PrefixHit => PREFIX,
            ChartKind::Throughput => THROUGHPUT,
            ChartKind::GpuMemory => GPU_MEMORY,
            ChartKind::GpuLoad => GPU_LOAD,
        }
    }

    /// Percent charts have a fixed 0–100 axis, so a quiet engine does not look full.
    fn percent(self) -> bool {
        matches!(self, ChartKind::KvCache | ChartKind::PrefixHit)
    }

    pub fn is_gpu(self) -> bool {
        matches!(self, ChartKind::GpuMemory | ChartKind::GpuLoad)
    }
}

/// Whether any point has a value for any of the chart's lines: when none does, the page says
/// why instead of drawing empty axes.
pub fn has_source(kind: ChartKind, points: &[Point]) -> bool {
    points
        .iter()
        .any(|p| kind.series().iter().any(|s| (s.pick)(p).is_some()))
}

/// What a chart draws; `label` translates a series key. Missing values are gaps (`null`).
/// `time` names the time column (the legend's first entry), `x` is the points' times in
/// milliseconds, `y` one column per line in the chart's order,
/// `range` the time axis (the span of the points held, a minute before a lone point: a
/// library's rounded guess drew two days for a quarter of an hour), `percent` a fixed 0–100
/// axis. The browser draws it in its own time zone, as the tables' `<time>` do.
pub fn chart(kind: ChartKind, points: &[Point], label: impl Fn(&str) -> String) -> Value {
    let range = match (points.first(), points.last()) {
        // One point (a console that has just started): the minute before it.
        (Some(first), Some(last)) if last.t_ms > first.t_ms => json!([first.t_ms, last.t_ms]),
        (Some(_), Some(last)) => json!([last.t_ms - 60_000, last.t_ms]),
        _ => Value::Null,
    };
    let x: Vec<i64> = points.iter().map(|p| p.t_ms).collect();
    let y: Vec<Vec<Option<f64>>> = kind
        .series()
        .iter()
        .map(|spec| points.iter().map(|p| (spec.pick)(p).map(round)).collect())
        .collect();
    let labels: Vec<String> = kind.series().iter().map(|spec| label(spec.key)).collect();
    json!({
        "time": label("time"),
        "labels": labels,
        "x": x,
        "y": y,
        "range": range,
        "percent": kind.percent(),
    })
}

/// Three significant decimals are plenty on a chart and keep the option small.
fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Appends stream points newer than the last one held, dropping what falls out of the range.
pub fn merge(points: &mut Vec<Point>, new: Vec<Point>, range_secs: i64) {
    let last = points.last().map(|p| p.t_ms).unwrap_or(i64::MIN);
    points.extend(new.into_iter().filter(|p| p.t_ms > last));
    if let Some(newest) = points.last().map(|p| p.t_ms) {
        let horizon = newest - range_secs * 1000;
        let old = points.iter().take_while(|p| p.t_ms < horizon).count();
        points.drain(..old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::signals::Live;

    fn point(t_ms: i64, waiting: Option<f64>) -> Point {
        Point {
            t_ms,
            live: Live {
                waiting,
                running: Some(1.0),
                ..Default::default()
            },
            gpu: None,
        }
    }

    #[test]
    fn a_chart_carries_columns_of_times_and_values_with_gaps() {
        let pts = vec![point(1_000, Some(3.0)), point(2_000, None)];
        let json = chart(ChartKind::Queue, &pts, |k| format!("<{k}>"));
        assert_eq!(json["labels"], serde_json::json!(["<running>", "<waiting>"]));
        assert_eq!(json["time"], "<time>");
        assert_eq!(json["x"], serde_json::json!([1000, 2000]));
        assert_eq!(json["y"][0], serde_json::json!([1.0, 1.0]));
        assert_eq!(json["y"][1], serde_json::json!([3.0, null]));
        assert_eq!(json["range"], serde_json::json!([1000, 2000]));
        assert_eq!(json["percent"], false);
    }

    #[test]
    fn percent_charts_have_a_fixed_axis_and_values_are_rounded() {
        let mut p = point(1_000, None);
        p.live.kv_usage = Some(0.123_456_7);
        let json = chart(ChartKind::KvCache, &[p], |k| k.to_string());
        assert_eq!(json["percent"], true);
        assert_eq!(json["y"][0], serde_json::json!([12.346]));
        let empty = chart(ChartKind::KvCache, &[], |k| k.to_string());
        assert_eq!(empty["range"], Value::Null);
        assert_eq!(empty["x"], serde_json::json!([]));
    }

    #[test]
    fn a_lone_point_gets_the_minute_before_it_as_its_axis() {
        let json = chart(ChartKind::Queue, &[point(120_000, Some(1.0))], |k| k.to_string());
        assert_eq!(json["range"], serde_json::json!([60_000, 120_000]));
    }

    #[test]
    fn a_chart_without_any_value_has_no_source() {
        let pts = vec![point(1_000, Some(3.0))];
        assert!(has_source(ChartKind::Queue, &pts));
        assert!(!has_source(ChartKind::Preemptions, &pts));
        assert!(!has_source(ChartKind::GpuMemory, &pts));
        assert!(!has_source(ChartKind::Queue, &[]));
    }

    #[test]
    fn merging_keeps_order_and_the_range() {
        let mut pts = vec![point(1_000, None), point(2_000, None)];
        merge(
            &mut pts,
            vec![point(2_000, None), point(3_000, None), point(70_000, None)],
            68,
        );
        let t: Vec<i64> = pts.iter().map(|p| p.t_ms).collect();
        // 2 000 is not added twice; 1 000 fell out of the 68 s range ending at 70 000.
        assert_eq!(t, vec![2_000, 3_000, 70_000]);
    }
}
