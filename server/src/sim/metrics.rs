//! The simulator's `/metrics`: the engines' real exposition as a template, values from the
//! load model.
//!
//! The templates are the bodies captured from vllm 0.33.0 and sglang 0.5.23 (names, HELP,
//! TYPE, label sets and bucket boundaries exact). Rendering keeps every line and replaces the
//! values the simulator models; activity series it does not model read 0, process and info
//! series keep their captured values, and `_created` series carry the simulator's start time.

use app::domain::engine::EngineKind;
use app::domain::prometheus::{escape_label, format_value, parse_line, Line, Sample};
use std::collections::HashMap;

const VLLM_TEMPLATE: &str = include_str!("templates/vllm.prom");
const SGLANG_TEMPLATE: &str = include_str!("templates/sglang.prom");

/// Which histogram family each modelled signal feeds, per engine.
fn histogram_family(kind: EngineKind, signal: &str) -> &'static [&'static str] {
    match (kind, signal) {
        (EngineKind::Vllm, "ttft") => &["vllm:time_to_first_token_seconds"],
        (EngineKind::Vllm, "itl") => &["vllm:inter_token_latency_seconds"],
        (EngineKind::Vllm, "tpot") => &["vllm:request_time_per_output_token_seconds"],
        (EngineKind::Vllm, "e2e") => &["vllm:e2e_request_latency_seconds"],
        (EngineKind::Vllm, "queue_time") => &["vllm:request_queue_time_seconds"],
        (EngineKind::Vllm, "inference_time") => &["vllm:request_inference_time_seconds"],
        (EngineKind::Vllm, "prefill_time") => &["vllm:request_prefill_time_seconds"],
        (EngineKind::Vllm, "decode_time") => &["vllm:request_decode_time_seconds"],
        (EngineKind::Vllm, "prompt_len") => &["vllm:request_prompt_tokens"],
        (EngineKind::Vllm, "gen_len") => &["vllm:request_generation_tokens"],
        (EngineKind::Vllm, "num_preemptions") => &["vllm:request_num_preemptions"],
        (EngineKind::Vllm, "iteration_tokens") => &["vllm:iteration_tokens_total"],
        (EngineKind::Vllm, "params_max_tokens") => &[
            "vllm:request_params_max_tokens",
            "vllm:request_max_num_generation_tokens",
        ],
        (EngineKind::Sglang, "ttft") => &["sglang:time_to_first_token_seconds"],
        (EngineKind::Sglang, "itl") => &["sglang:inter_token_latency_seconds"],
        (EngineKind::Sglang, "tpot") => &["sglang:request_time_per_output_token_seconds"],
        (EngineKind::Sglang, "e2e") => &["sglang:e2e_request_latency_seconds"],
        (EngineKind::Sglang, "queue_time") => &["sglang:queue_time_seconds"],
        (EngineKind::Sglang, "prompt_len") => &["sglang:prompt_tokens_histogram"],
        (EngineKind::Sglang, "gen_len") => &["sglang:generation_tokens_histogram"],
        _ => &[],
    }
}

const SIGNALS: &[&str] = &[
    "ttft",
    "itl",
    "tpot",
    "e2e",
    "queue_time",
    "inference_time",
    "prefill_time",
    "decode_time",
    "prompt_len",
    "gen_len",
    "num_preemptions",
    "iteration_tokens",
    "params_max_tokens",
];

/// A cumulative histogram over fixed upper bounds.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    bounds: Vec<f64>,
    counts: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

impl Hist {
    fn new(bounds: Vec<f64>) -> Self {
        let counts = vec![0; bounds.len()];
        Self {
            bounds,
            counts,
            sum: 0.0,
            count: 0,
        }
    }
    fn observe(&mut self, v: f64) {
        self.sum += v;
        self.count += 1;
        if let Some(i) = self.bounds.iter().position(|b| v <= *b) {
            self.counts[i] += 1;
        }
    }
    /// Observations at or below `le` (cumulative, as Prometheus buckets are).
    fn cumulative(&self, le: f64) -> u64 {
        if le.is_infinite() {
            return self.count;
        }
        self.bounds
            .iter()
            .zip(&self.counts)
            .filter(|(b, _)| **b <= le + 1e-12)
            .map(|(_, c)| c)
            .sum()
    }
}

/// What the load model measured: histograms per signal (split by streaming) and counters.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    bounds: HashMap<&'static str, Vec<f64>>,
    hist: HashMap<(&'static str, bool), Hist>,
    counters: HashMap<&'static str, f64>,
}

impl Metrics {
    /// Metrics whose histograms use the bucket bounds of `kind`'s template.
    pub fn for_engine(kind: EngineKind, template: &Template) -> Self {
        let mut bounds = HashMap::new();
        for signal in SIGNALS {
            if let Some(family) = histogram_family(kind, signal).first() {
                bounds.insert(*signal, template.bounds(family));
            }
        }
        Self {
            bounds,
            ..Default::default()
        }
    }

    pub fn observe(&mut self, signal: &'static str, v: f64, streaming: bool) {
        let bounds = self.bounds.get(signal).cloned().unwrap_or_default();
        self.hist
            .entry((signal, streaming))
            .or_insert_with(|| Hist::new(bounds))
            .observe(v);
    }

    pub fn observe_request_params(&mut self, max_tokens: u32) {
        self.observe("params_max_tokens", max_tokens as f64, false);
    }

    pub fn count(&mut self, name: &'static str, by: f64) {
        *self.counters.entry(name).or_default() += by;
    }

    pub fn counter(&self, name: &str) -> f64 {
        self.counters.get(name).copied().unwrap_or(0.0)
    }

    fn hist_value(&self, signal: &'static str, streaming: Option<bool>, part: &str, le: Option<f64>) -> f64 {
        let parts: Vec<&Hist> = match streaming {
            Some(s) => self.hist.get(&(signal, s)).into_iter().collect(),
            None => [true, false]
                .iter()
                .filter_map(|s| self.hist.get(&(signal, *s)))
                .collect(),
        };
        parts
            .iter()
            .map(|h| match part {
                "sum" => h.sum,
                "count" => h.count as f64,
                _ => h.cumulative(le.unwrap_or(f64::INFINITY)) as f64,
            })
            .sum()
    }
}

/// Gauges the scheduler reports at scrape time.
#[derive(Clone, Debug, Default)]
pub struct Gauges {
    pub running: f64,
    pub waiting: f64,
    pub kv_usage: f64,
    pub kv_used_tokens: f64,
    pub kv_capacity_tokens: f64,
    pub gen_throughput: f64,
    pub cache_hit_rate: f64,
    pub context_len: f64,
}

/// A parsed exposition template.
pub struct Template {
    kind: EngineKind,
    lines: Vec<Line>,
    histograms: Vec<String>,
}

impl Template {
    pub fn for_engine(kind: EngineKind) -> Self {
        let text = match kind {
            EngineKind::Vllm => VLLM_TEMPLATE,
            EngineKind::Sglang => SGLANG_TEMPLATE,
        };
        let lines: Vec<Line> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| {
                !l.starts_with("# source")
                    && !l.starts_with("# Names")
                    && !l.starts_with("# Served")
                    && !l.starts_with("# Not shown")
                    && !l.starts_with("# Names,")
            })
            .filter_map(|(i, l)| parse_line(l, i + 1).ok())
            .filter(|l| !matches!(l, Line::Comment | Line::Blank))
            .collect();
        let histograms = lines
            .iter()
            .filter_map(|l| match l {
                Line::Type { name, kind } if kind == "histogram" => Some(name.clone()),
                _ => None,
            })
            .collect();
        Self {
            kind,
            lines,
            histograms,
        }
    }

    /// The bucket bounds of a histogram family, in template order.
    pub fn bounds(&self, family: &str) -> Vec<f64> {
        let bucket = format!("{family}_bucket");
        let mut out: Vec<f64> = self
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Sample(s) if s.name == bucket => s.label("le").and_then(app::domain::prometheus::parse_value),
                _ => None,
            })
            .filter(|b| b.is_finite())
            .collect();
        out.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        out.dedup();
        out
    }

    fn histogram_of(&self, name: &str) -> Option<(&'static str, &'static str)> {
        for suffix in ["_bucket", "_sum", "_count"] {
            if let Some(base) = name.strip_suffix(suffix) {
                if self.histograms.iter().any(|h| h == base) {
                    for signal in SIGNALS {
                        if histogram_family(self.kind, signal).contains(&base) {
                            return Some((signal, &suffix[1..]));
                        }
                    }
                }
            }
        }
        None
    }

    fn scalar(&self, s: &Sample, m: &Metrics, g: &Gauges) -> Option<f64> {
        let streaming_false = s.label("is_streaming") == Some("false");
        let v = match (self.kind, s.name.as_str()) {
            (EngineKind::Vllm, "vllm:num_requests_running") => g.running,
            (EngineKind::Vllm, "vllm:num_requests_waiting") => g.waiting,
            (EngineKind::Vllm, "vllm:num_requests_waiting_by_reason") => {
                if s.label("reason") == Some("capacity") {
                    g.waiting
                } else {
                    0.0
                }
            }
            (EngineKind::Vllm, "vllm:kv_cache_usage_perc") => g.kv_usage,
            (EngineKind::Vllm, "vllm:prefix_cache_queries_total") => m.counter("prefix_queries"),
            (EngineKind::Vllm, "vllm:prefix_cache_hits_total") => m.counter("prefix_hits"),
            (EngineKind::Vllm, "vllm:num_preemptions_total") => m.counter("preemptions"),
            (EngineKind::Vllm, "vllm:prompt_tokens_total") => m.counter("prompt_tokens"),
            (EngineKind::Vllm, "vllm:generation_tokens_total") => m.counter("generation_tokens"),
            (EngineKind::Vllm, "vllm:prompt_tokens_cached_total") => m.counter("prefix_hits"),
            (EngineKind::Vllm, "vllm:prompt_tokens_by_source_total") => match s.label("source") {
                Some("local_compute") => m.counter("prompt_tokens"),
                Some("local_cache_hit") => m.counter("prefix_hits"),
                _ => 0.0,
            },
            (EngineKind::Vllm, "vllm:prompt_tokens_cached_by_source_total") => {
                if s.label("source") == Some("device") {
                    m.counter("prefix_hits")
                } else {
                    0.0
                }
            }
            (EngineKind::Vllm, "vllm:request_success_total") => match s.label("finished_reason") {
                Some("length") => m.counter("finished_length"),
                Some("abort") => m.counter("finished_abort"),
                _ => 0.0,
            },
            (EngineKind::Sglang, "sglang:num_running_reqs") => g.running,
            (EngineKind::Sglang, "sglang:num_queue_reqs") => g.waiting,
            (EngineKind::Sglang, "sglang:token_usage") | (EngineKind::Sglang, "sglang:full_token_usage") => g.kv_usage,
            (EngineKind::Sglang, "sglang:num_used_tokens") | (EngineKind::Sglang, "sglang:kv_used_tokens") => {
                g.kv_used_tokens
            }
            (EngineKind::Sglang, "sglang:kv_available_tokens") => (g.kv_capacity_tokens - g.kv_used_tokens).max(0.0),
            (EngineKind::Sglang, "sglang:max_total_num_tokens") => g.kv_capacity_tokens,
            (EngineKind::Sglang, "sglang:cache_hit_rate") => g.cache_hit_rate,
            (EngineKind::Sglang, "sglang:gen_throughput") => g.gen_throughput,
            (EngineKind::Sglang, "sglang:context_len") => g.context_len,
            (EngineKind::Sglang, "sglang:prompt_tokens_total") => {
                if streaming_false {
                    0.0
                } else {
                    m.counter("prompt_tokens")
                }
            }
            (EngineKind::Sglang, "sglang:generation_tokens_total") => {
                if streaming_false {
                    0.0
                } else {
                    m.counter("generation_tokens")
                }
            }
            (EngineKind::Sglang, "sglang:num_requests_total") => match s.label("is_streaming") {
                Some("true") => m.counter("requests_streaming"),
                Some("false") => m.counter("requests_plain"),
                _ => m.counter("finished_length"),
            },
            (EngineKind::Sglang, "sglang:num_retracted_requests_total") => m.counter("preemptions"),
            _ => return None,
        };
        Some(v)
    }

    /// The exposition body.
    pub fn render(&self, model_name: &str, started_unix: f64, m: &Metrics, g: &Gauges) -> String {
        let prefix = match self.kind {
            EngineKind::Vllm => "vllm:",
            EngineKind::Sglang => "sglang:",
        };
        let mut out = String::with_capacity(64 * 1024);
        for line in &self.lines {
            match line {
                Line::Help { name, text } => out.push_str(&format!("# HELP {name} {text}\n")),
                Line::Type { name, kind } => out.push_str(&format!("# TYPE {name} {kind}\n")),
                Line::Sample(s) => {
                    let value = if s.name.ends_with("_created") {
                        started_unix
                    } else if let Some((signal, part)) = self.histogram_of(&s.name) {
                        let streaming = s.label("is_streaming").map(|v| v == "true");
                        let le = s.label("le").and_then(app::domain::prometheus::parse_value);
                        m.hist_value(signal, streaming, part, le)
                    } else if let Some(v) = self.scalar(s, m, g) {
                        v
                    } else if s.name.starts_with(prefix) && !s.name.contains("info") && !s.name.contains("sleep_state")
                    {
                        0.0
                    } else {
                        s.value
                    };
                    out.push_str(&s.name);
                    if !s.labels.is_empty() {
                        out.push('{');
                        for (i, (k, v)) in s.labels.iter().enumerate() {
                            if i > 0 {
                                out.push(',');
                            }
                            let v = if k == "model_name" { model_name } else { v.as_str() };
                            out.push_str(&format!("{k}=\"{}\"", escape_label(v)));
                        }
                        out.push('}');
                    }
                    out.push(' ');
                    out.push_str(&format_value(value));
                    out.push('\n');
                }
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::prometheus::parse;

    fn names(body: &str) -> Vec<String> {
        let mut v: Vec<String> = body
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
            .collect();
        v.dedup();
        v
    }

    #[test]
    fn exposition_keeps_every_series_of_the_captured_body() {
        for (kind, fixture) in [(EngineKind::Vllm, VLLM_TEMPLATE), (EngineKind::Sglang, SGLANG_TEMPLATE)] {
            let t = Template::for_engine(kind);
            let m = Metrics::for_engine(kind, &t);
            let body = t.render("Qwen/Qwen3-8B", 1.0, &m, &Gauges::default());
            let parsed = parse(&body);
            assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
            let original = parse(fixture);
            assert_eq!(parsed.samples.len(), original.samples.len(), "{kind:?}");
            assert_eq!(
                names(&body),
                names(
                    &fixture
                        .lines()
                        .filter(|l| !l.starts_with('#'))
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            );
        }
    }

    #[test]
    fn histograms_follow_observations() {
        let t = Template::for_engine(EngineKind::Vllm);
        let mut m = Metrics::for_engine(EngineKind::Vllm, &t);
        assert_eq!(t.bounds("vllm:time_to_first_token_seconds")[..3], [0.001, 0.005, 0.01]);
        m.observe("ttft", 0.03, true);
        m.observe("ttft", 0.3, false);
        let g = Gauges {
            running: 3.0,
            waiting: 7.0,
            kv_usage: 0.5,
            ..Default::default()
        };
        let p = parse(&t.render("m", 1.0, &m, &g));
        let get = |name: &str, le: Option<&str>| {
            p.samples
                .iter()
                .find(|s| s.name == name && le.is_none_or(|l| s.label("le") == Some(l)))
                .unwrap()
                .value
        };
        assert_eq!(get("vllm:time_to_first_token_seconds_count", None), 2.0);
        assert_eq!(get("vllm:time_to_first_token_seconds_bucket", Some("0.04")), 1.0);
        assert_eq!(get("vllm:time_to_first_token_seconds_bucket", Some("+Inf")), 2.0);
        assert_eq!(get("vllm:num_requests_waiting", None), 7.0);
        assert_eq!(get("vllm:kv_cache_usage_perc", None), 0.5);
        assert!(p
            .samples
            .iter()
            .filter(|s| s.label("model_name").is_some())
            .all(|s| s.label("model_name") == Some("m")));
    }
}
