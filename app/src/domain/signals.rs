//! One set of serving signals from either engine's `/metrics`, old names and new.
//!
//! vLLM and SGLang name the same things differently, and both renamed metrics over time
//! (`gpu_cache_usage_perc` → `kv_cache_usage_perc`, `gpu_prefix_cache_*` → `prefix_cache_*`,
//! `time_per_output_token_seconds` → `inter_token_latency_seconds`). Series are summed over
//! label sets (data-parallel engines, `is_streaming`, ranks); KV usage is averaged. A signal
//! with no source stays `None`, so a chart can say why it is empty.

use super::prometheus::Sample;
use serde::{Deserialize, Serialize};

/// A cumulative histogram: (upper bound, cumulative count) sorted by bound, +Inf last.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Histogram {
    pub buckets: Vec<(f64, f64)>,
    pub sum: f64,
    pub count: f64,
}

/// The signals of one scrape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Signals {
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    /// KV-cache usage, 0–1.
    pub kv_usage: Option<f64>,
    pub preemptions_total: Option<f64>,
    pub prefix_queries_total: Option<f64>,
    pub prefix_hits_total: Option<f64>,
    /// SGLang reports a hit rate gauge instead of counters.
    pub prefix_hit_rate_gauge: Option<f64>,
    pub prompt_tokens_total: Option<f64>,
    pub generation_tokens_total: Option<f64>,
    /// Engine steps so far (vLLM's `iteration_tokens_total` histogram count): moves with every
    /// step, even one that produces no token.
    #[serde(default)]
    pub iterations_total: Option<f64>,
    pub ttft: Option<Histogram>,
    /// Inter-token latency (vLLM's TPOT histogram in older releases).
    pub itl: Option<Histogram>,
    pub e2e: Option<Histogram>,
    pub queue: Option<Histogram>,
}

const RUNNING: &[&str] = &["vllm:num_requests_running", "sglang:num_running_reqs"];
const WAITING: &[&str] = &["vllm:num_requests_waiting", "sglang:num_queue_reqs"];
const KV: &[&str] = &[
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
];
const PREEMPTIONS: &[&str] = &[
    "vllm:num_preemptions_total",
    "vllm:num_preemptions",
    "sglang:num_retracted_requests_total",
];
const PREFIX_QUERIES: &[&str] = &["vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"];
const PREFIX_HITS: &[&str] = &["vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"];
const PREFIX_RATE: &[&str] = &["sglang:cache_hit_rate"];
const PROMPT: &[&str] = &["vllm:prompt_tokens_total", "sglang:prompt_tokens_total"];
const GENERATION: &[&str] = &["vllm:generation_tokens_total", "sglang:generation_tokens_total"];
const TTFT: &[&str] = &["vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds"];
const ITL: &[&str] = &[
    "vllm:inter_token_latency_seconds",
    "vllm:time_per_output_token_seconds",
    "sglang:inter_token_latency_seconds",
    "sglang:time_per_output_token_seconds",
];
const ITERATIONS: &[&str] = &["vllm:iteration_tokens_total_count"];
const E2E: &[&str] = &["vllm:e2e_request_latency_seconds", "sglang:e2e_request_latency_seconds"];
const QUEUE: &[&str] = &["vllm:request_queue_time_seconds", "sglang:queue_time_seconds"];

/// One signal the console reads and the metric names it reads it from, newest first: what an
/// upgrade's metrics check holds a candidate's scrape against.
#[derive(Clone, Copy, Debug)]
pub struct SignalSource {
    pub signal: &'static str,
    pub names: &'static [&'static str],
    /// The fleet state and the triage's queue rows go blind without it.
    pub core: bool,
    /// Histograms are read from their `_bucket` series.
    pub histogram: bool,
}

const fn source(signal: &'static str, names: &'static [&'static str], core: bool, histogram: bool) -> SignalSource {
    SignalSource {
        signal,
        names,
        core,
        histogram,
    }
}

/// Every signal `normalise` reads.
pub const SOURCES: &[SignalSource] = &[
    source("running", RUNNING, true, false),
    source("waiting", WAITING, true, false),
    source("kv", KV, true, false),
    source("preemptions", PREEMPTIONS, false, false),
    source("prefix-queries", PREFIX_QUERIES, false, false),
    source("prefix-hits", PREFIX_HITS, false, false),
    source("prefix-rate", PREFIX_RATE, false, false),
    source("prompt", PROMPT, false, false),
    source("generation", GENERATION, true, false),
    source("iterations", ITERATIONS, false, false),
    source("ttft", TTFT, false, true),
    source("itl", ITL, false, true),
    source("e2e", E2E, false, true),
    source("queue", QUEUE, false, true),
];

/// Sum of the first name (in preference order) that has any series.
fn sum_of(samples: &[Sample], names: &[&str]) -> Option<f64> {
    names.iter().find_map(|n| {
        let v: Vec<f64> = samples
            .iter()
            .filter(|s| s.name == *n && s.value.is_finite())
            .map(|s| s.value)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    })
}

fn mean_of(samples: &[Sample], names: &[&str]) -> Option<f64> {
    names.iter().find_map(|n| {
        let v: Vec<f64> = samples
            .iter()
            .filter(|s| s.name == *n && s.value.is_finite())
            .map(|s| s.value)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    })
}

fn histogram_of(samples: &[Sample], names: &[&str]) -> Option<Histogram> {
    names.iter().find_map(|n| {
        let bucket = format!("{n}_bucket");
        let mut buckets: Vec<(f64, f64)> = Vec::new();
        for s in samples.iter().filter(|s| s.name == bucket) {
            let Some(le) = s.label("le").and_then(super::prometheus::parse_value) else {
                continue;
            };
            match buckets.iter_mut().find(|(b, _)| *b == le) {
                Some((_, c)) => *c += s.value,
                None => buckets.push((le, s.value)),
            }
        }
        if buckets.is_empty() {
            return None;
        }
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total = |suffix: &str| {
            samples
                .iter()
                .filter(|s| s.name == format!("{n}{suffix}"))
                .map(|s| s.value)
                .sum::<f64>()
        };
        Some(Histogram {
            buckets,
            sum: total("_sum"),
            count: total("_count"),
        })
    })
}

/// Normalises one scrape.
pub fn normalise(samples: &[Sample]) -> Signals {
    Signals {
        running: sum_of(samples, RUNNING),
        waiting: sum_of(samples, WAITING),
        kv_usage: mean_of(samples, KV),
        preemptions_total: sum_of(samples, PREEMPTIONS),
        prefix_queries_total: sum_of(samples, PREFIX_QUERIES),
        prefix_hits_total: sum_of(samples, PREFIX_HITS),
        prefix_hit_rate_gauge: mean_of(samples, PREFIX_RATE),
        prompt_tokens_total: sum_of(samples, PROMPT),
        generation_tokens_total: sum_of(samples, GENERATION),
        iterations_total: sum_of(samples, ITERATIONS),
        ttft: histogram_of(samples, TTFT),
        itl: histogram_of(samples, ITL),
        e2e: histogram_of(samples, E2E),
        queue: histogram_of(samples, QUEUE),
    }
}

/// The `q` quantile (0–1) of the observations made between two scrapes, from the bucket
/// deltas, interpolating linearly inside the bucket as Prometheus' `histogram_quantile`
/// does. `None` when nothing was observed; a counter reset (a restarted engine) uses the
/// newer histogram alone.
pub fn quantile_between(prev: Option<&Histogram>, cur: &Histogram, q: f64) -> Option<f64> {
    let reset = prev.is_some_and(|p| p.count > cur.count);
    let delta: Vec<(f64, f64)> = cur
        .buckets
        .iter()
        .map(|(le, c)| {
            let before = match prev {
                Some(p) if !reset => p.buckets.iter().find(|(b, _)| b == le).map(|(_, c)| *c).unwrap_or(0.0),
                _ => 0.0,
            };
            (*le, (c - before).max(0.0))
        })
        .collect();
    let total = delta.last().map(|(_, c)| *c)?;
    if total <= 0.0 {
        return None;
    }
    let rank = q.clamp(0.0, 1.0) * total;
    let mut lower = 0.0;
    let mut below = 0.0;
    for (le, c) in &delta {
        if *c >= rank {
            if le.is_infinite() {
                // Above the largest finite bound: report that bound, as Prometheus does.
                return Some(lower);
            }
            let in_bucket = c - below;
            let frac = if in_bucket > 0.0 {
                (rank - below) / in_bucket
            } else {
                1.0
            };
            return Some(lower + (le - lower) * frac);
        }
        lower = *le;
        below = *c;
    }
    Some(lower)
}

/// Rates between two scrapes `dt` seconds apart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Rates {
    pub preemptions_per_s: Option<f64>,
    pub prompt_tokens_per_s: Option<f64>,
    pub generation_tokens_per_s: Option<f64>,
    /// Prefix-cache hit rate over the window, 0–1.
    pub prefix_hit_rate: Option<f64>,
}

/// Per-second rates of the counters; a counter that went down (engine restart) gives `None`.
pub fn rates(prev: &Signals, cur: &Signals, dt: f64) -> Rates {
    let per_s = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b >= a && dt > 0.0 => Some((b - a) / dt),
        _ => None,
    };
    let hit_rate = match (
        per_s(prev.prefix_queries_total, cur.prefix_queries_total),
        per_s(prev.prefix_hits_total, cur.prefix_hits_total),
    ) {
        (Some(q), Some(h)) if q > 0.0 => Some(h / q),
        (Some(_), Some(_)) => None,
        _ => cur.prefix_hit_rate_gauge,
    };
    Rates {
        preemptions_per_s: per_s(prev.preemptions_total, cur.preemptions_total),
        prompt_tokens_per_s: per_s(prev.prompt_tokens_total, cur.prompt_tokens_total),
        generation_tokens_per_s: per_s(prev.generation_tokens_total, cur.generation_tokens_total),
        prefix_hit_rate: hit_rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::prometheus::parse;

    fn fixture(name: &str) -> Vec<Sample> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/fixtures")
            .join(name);
        parse(&std::fs::read_to_string(p).unwrap()).samples
    }

    #[test]
    fn vllm_fixture_normalises() {
        let s = normalise(&fixture("vllm-v1-metrics.prom"));
        assert_eq!(s.running, Some(12.0));
        assert!(s.waiting.is_some() && s.kv_usage.is_some_and(|k| (0.0..=1.0).contains(&k)));
        assert!(s.preemptions_total.is_some() && s.prefix_hits_total.is_some());
        let ttft = s.ttft.unwrap();
        assert_eq!(ttft.buckets.first().unwrap().0, 0.001);
        assert!(ttft.buckets.last().unwrap().0.is_infinite());
        assert!(s.itl.is_some() && s.e2e.is_some() && s.queue.is_some());
    }

    #[test]
    fn sglang_fixture_normalises() {
        let s = normalise(&fixture("sglang-metrics.prom"));
        assert!(s.running.is_some() && s.waiting.is_some() && s.kv_usage.is_some());
        assert!(s.prefix_hit_rate_gauge.is_some());
        assert!(s.prefix_hits_total.is_none(), "SGLang has a gauge, not counters");
        let ttft = s.ttft.unwrap();
        assert_eq!(ttft.buckets.first().unwrap().0, 0.1, "SGLang's own TTFT buckets");
        // is_streaming=true and false series are summed into one histogram.
        assert!(ttft.count > 0.0);
    }

    #[test]
    fn old_vllm_names_still_count() {
        let body = "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\nvllm:gpu_prefix_cache_queries_total{model_name=\"m\"} 100\nvllm:gpu_prefix_cache_hits_total{model_name=\"m\"} 40\nvllm:time_per_output_token_seconds_bucket{le=\"0.1\",model_name=\"m\"} 3\nvllm:time_per_output_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 4\n";
        let s = normalise(&parse(body).samples);
        assert_eq!(s.kv_usage, Some(0.5));
        assert_eq!((s.prefix_queries_total, s.prefix_hits_total), (Some(100.0), Some(40.0)));
        assert_eq!(s.itl.unwrap().buckets, vec![(0.1, 3.0), (f64::INFINITY, 4.0)]);
        assert!(s.running.is_none(), "no source: None, not zero");
    }

    #[test]
    fn data_parallel_engines_are_summed_and_kv_averaged() {
        let body = "vllm:num_requests_running{engine=\"0\"} 3\nvllm:num_requests_running{engine=\"1\"} 4\nvllm:kv_cache_usage_perc{engine=\"0\"} 0.2\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.6\n";
        let s = normalise(&parse(body).samples);
        assert_eq!(s.running, Some(7.0));
        assert!((s.kv_usage.unwrap() - 0.4).abs() < 1e-12);
    }

    fn h(buckets: &[(f64, f64)]) -> Histogram {
        Histogram {
            buckets: buckets.to_vec(),
            sum: 0.0,
            count: buckets.last().unwrap().1,
        }
    }

    #[test]
    fn percentiles_from_bucket_deltas_by_hand() {
        let prev = h(&[(0.1, 10.0), (0.5, 20.0), (1.0, 20.0), (f64::INFINITY, 20.0)]);
        // In the window: 0 new ≤0.1, 10 new in (0.1,0.5], 10 new in (0.5,1].
        let cur = h(&[(0.1, 10.0), (0.5, 30.0), (1.0, 40.0), (f64::INFINITY, 40.0)]);
        // p50: rank 10 of 20 → end of the (0.1,0.5] bucket = 0.5.
        assert!((quantile_between(Some(&prev), &cur, 0.5).unwrap() - 0.5).abs() < 1e-12);
        // p25: rank 5 → halfway through (0.1,0.5] = 0.3.
        assert!((quantile_between(Some(&prev), &cur, 0.25).unwrap() - 0.3).abs() < 1e-12);
        // p95: rank 19 → 9/10 through (0.5,1] = 0.95.
        assert!((quantile_between(Some(&prev), &cur, 0.95).unwrap() - 0.95).abs() < 1e-12);
        // Nothing new: no value.
        assert_eq!(quantile_between(Some(&cur), &cur, 0.5), None);
        // Everything above the last finite bound reports that bound.
        let over = h(&[(0.1, 0.0), (f64::INFINITY, 5.0)]);
        assert_eq!(quantile_between(None, &over, 0.99), Some(0.1));
        // A restarted engine (counts went down) uses the new histogram alone.
        let restarted = h(&[(0.1, 2.0), (0.5, 2.0), (1.0, 2.0), (f64::INFINITY, 2.0)]);
        assert!((quantile_between(Some(&cur), &restarted, 0.5).unwrap() - 0.05).abs() < 1e-12);
    }

    #[test]
    fn rates_and_hit_rate_over_a_window() {
        let a = Signals {
            preemptions_total: Some(10.0),
            prefix_queries_total: Some(1000.0),
            prefix_hits_total: Some(100.0),
            generation_tokens_total: Some(50.0),
            ..Default::default()
        };
        let b = Signals {
            preemptions_total: Some(20.0),
            prefix_queries_total: Some(2000.0),
            prefix_hits_total: Some(600.0),
            generation_tokens_total: Some(30.0),
            ..Default::default()
        };
        let r = rates(&a, &b, 5.0);
        assert_eq!(r.preemptions_per_s, Some(2.0));
        assert_eq!(r.prefix_hit_rate, Some(0.5));
        assert_eq!(
            r.generation_tokens_per_s, None,
            "a counter reset is not a negative rate"
        );
        let sg = Signals {
            prefix_hit_rate_gauge: Some(0.7),
            ..Default::default()
        };
        assert_eq!(rates(&sg, &sg, 5.0).prefix_hit_rate, Some(0.7));
    }
}

/// What an operator watches, derived from two scrapes: gauges from the newer one, rates and
/// percentiles over the window between them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Live {
    pub window_s: f64,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    pub rates: Rates,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p95_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    pub itl_p50_ms: Option<f64>,
    pub itl_p95_ms: Option<f64>,
    pub itl_p99_ms: Option<f64>,
    pub e2e_p95_ms: Option<f64>,
    pub queue_p95_ms: Option<f64>,
}

/// Derives the live view from an older and a newer scrape.
pub fn live(prev: &Signals, cur: &Signals, window_s: f64) -> Live {
    let q = |pick: fn(&Signals) -> Option<&Histogram>, p: f64| {
        pick(cur)
            .and_then(|c| quantile_between(pick(prev), c, p))
            .map(|s| s * 1000.0)
    };
    Live {
        window_s,
        running: cur.running,
        waiting: cur.waiting,
        kv_usage: cur.kv_usage,
        rates: rates(prev, cur, window_s),
        ttft_p50_ms: q(|s| s.ttft.as_ref(), 0.5),
        ttft_p95_ms: q(|s| s.ttft.as_ref(), 0.95),
        ttft_p99_ms: q(|s| s.ttft.as_ref(), 0.99),
        itl_p50_ms: q(|s| s.itl.as_ref(), 0.5),
        itl_p95_ms: q(|s| s.itl.as_ref(), 0.95),
        itl_p99_ms: q(|s| s.itl.as_ref(), 0.99),
        e2e_p95_ms: q(|s| s.e2e.as_ref(), 0.95),
        queue_p95_ms: q(|s| s.queue.as_ref(), 0.95),
    }
}

impl Live {
    /// A queue that does not move: requests present, no tokens generated over the window.
    /// `/health` alone cannot see this (vLLM answers 200 while a collective is stuck).
    pub fn looks_hung(&self) -> bool {
        let queued = self.running.unwrap_or(0.0) + self.waiting.unwrap_or(0.0);
        queued > 0.0 && self.rates.generation_tokens_per_s == Some(0.0) && self.window_s >= 5.0
    }
}
