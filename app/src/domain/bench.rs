//! Serving-benchmark arithmetic with `vllm bench serve`'s definitions, so numbers diff cleanly
//! against it: TTFT (first event with `choices`), TPOT excluding the first token, ITL per
//! streamed event pooled over requests, E2EL to the last token event, throughput over the
//! whole run, DistServe goodput, and numpy-style linear-interpolation percentiles.
//! Arrivals are vLLM's: seeded gamma gaps, rescaled so the last arrival lands at N/rate.

use serde::{Deserialize, Serialize};

/// Which OpenAI endpoint to load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum Endpoint {
    Chat,
    Completions,
}

/// A run's parameters (stored with its result).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct BenchParams {
    pub url: String,
    pub model: String,
    pub endpoint: Endpoint,
    pub requests: usize,
    pub concurrency: Option<usize>,
    /// Requests per second; infinite sends everything at once (stored as `null`).
    #[serde(with = "infinite_as_null")]
    pub rate: f64,
    pub burstiness: f64,
    pub input_len: usize,
    pub output_len: u32,
    pub warmup: usize,
    pub seed: u64,
    pub goodput: Option<Slo>,
}

/// Live progress, for the CLI's bar and the engine page.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, crate::decode::FromWire)]
pub struct BenchProgress {
    pub done: usize,
    pub failed: usize,
    pub total: usize,
    pub warmup: bool,
}

impl std::str::FromStr for Endpoint {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "chat" => Ok(Self::Chat),
            "completions" => Ok(Self::Completions),
            other => Err(format!("unknown endpoint `{other}` (chat, completions)")),
        }
    }
}

/// JSON has no infinity: an unlimited rate is written as `null` and read back as infinite.
mod infinite_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_some(v)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
    }

    /// The browser's reading (`crate::decode`): `null` or missing is infinite.
    pub fn from_wire(v: Option<serde_json::Value>) -> Result<f64, crate::decode::WireError> {
        use crate::decode::FromWire;
        Ok(v.map(Option::<f64>::from_wire)
            .transpose()?
            .flatten()
            .unwrap_or(f64::INFINITY))
    }
}

/// One request as the client saw it. Times are seconds on a monotonic clock.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct RequestRecord {
    pub ok: bool,
    pub error: Option<String>,
    /// When the request was sent, from the start of the run.
    pub sent_at: f64,
    pub ttft: f64,
    pub e2el: f64,
    /// Gaps between streamed events after the first.
    pub itl: Vec<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// True when the server gave no `usage` and tokens were counted from events.
    pub tokens_approx: bool,
    /// How late the client sent it against the schedule.
    pub dispatch_lag: f64,
    /// Time spent waiting for a concurrency slot.
    pub client_queue: f64,
}

impl RequestRecord {
    /// TPOT excluding the first token; `None` for single-token answers (as vLLM).
    pub fn tpot(&self) -> Option<f64> {
        (self.output_tokens > 1).then(|| (self.e2el - self.ttft) / (self.output_tokens - 1) as f64)
    }
}

/// Mean, median, population standard deviation and percentiles of one metric, in ms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Stats {
    pub mean: f64,
    pub median: f64,
    pub std: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// numpy's default (`linear`) percentile of sorted values, q in [0, 100].
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q / 100.0).clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// The median of the finite values, none when there are none.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Some(percentile(&v, 50.0))
}

/// The mean of the finite values, none when there are none.
pub fn mean(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Statistics of values given in seconds, reported in milliseconds.
pub fn stats_ms(values: &[f64]) -> Stats {
    if values.is_empty() {
        return Stats::default();
    }
    let mut v: Vec<f64> = values.iter().map(|x| x * 1000.0).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let std = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    Stats {
        mean,
        median: percentile(&v, 50.0),
        std,
        p50: percentile(&v, 50.0),
        p95: percentile(&v, 95.0),
        p99: percentile(&v, 99.0),
        max: *v.last().unwrap_or(&0.0),
    }
}

/// Service-level objectives for goodput, in milliseconds (`ttft:500,tpot:50,e2el:2000`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Slo {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub e2el_ms: Option<f64>,
}

impl std::str::FromStr for Slo {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut slo = Slo::default();
        for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once(':')
                .ok_or_else(|| format!("goodput: `{part}` is not METRIC:MS"))?;
            let ms: f64 = v
                .parse()
                .map_err(|_| format!("goodput: `{v}` in `{part}` is not a number of milliseconds"))?;
            if ms.is_nan() || ms <= 0.0 {
                return Err(format!("goodput: `{part}` must be positive"));
            }
            match k {
                "ttft" => slo.ttft_ms = Some(ms),
                "tpot" => slo.tpot_ms = Some(ms),
                "e2el" => slo.e2el_ms = Some(ms),
                other => return Err(format!("goodput: unknown metric `{other}` (ttft, tpot, e2el)")),
            }
        }
        Ok(slo)
    }
}

impl Slo {
    fn met_by(&self, r: &RequestRecord) -> bool {
        let ok = |limit: Option<f64>, value_s: f64| limit.is_none_or(|l| value_s * 1000.0 <= l);
        ok(self.ttft_ms, r.ttft) && ok(self.tpot_ms, r.tpot().unwrap_or(0.0)) && ok(self.e2el_ms, r.e2el)
    }
}

/// The result of a run, with vLLM's names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct BenchSummary {
    pub completed: u64,
    pub failed: u64,
    pub duration_s: f64,
    pub total_input_tokens: u64,
    pub total_output_tokens: u64,
    pub tokens_approx: bool,
    pub request_throughput: f64,
    pub request_goodput: Option<f64>,
    pub output_throughput: f64,
    pub total_token_throughput: f64,
    pub peak_output_throughput: f64,
    pub peak_concurrent_requests: u64,
    pub ttft_ms: Stats,
    pub tpot_ms: Stats,
    pub itl_ms: Stats,
    pub e2el_ms: Stats,
    pub dispatch_lag_ms: Stats,
    pub client_queue_ms: Stats,
    /// The client fell behind its schedule (dispatch lag p99 over the limit): the latencies
    /// include the client's own delay and are not the engine's numbers.
    pub client_overloaded: bool,
    pub first_error: Option<String>,
    /// How the prompts were sized: exactly in the model's tokens (and by which tokenizer), or
    /// approximately by characters, with why.
    #[serde(default)]
    pub prompts: Option<String>,
}

/// The dispatch-lag p99 above which a run is flagged as limited by the client.
pub const CLIENT_LAG_LIMIT_MS: f64 = 10.0;

/// Summarises a run of `duration_s` seconds.
pub fn summarize(records: &[RequestRecord], duration_s: f64, slo: Option<&Slo>) -> BenchSummary {
    let ok: Vec<&RequestRecord> = records.iter().filter(|r| r.ok).collect();
    let d = duration_s.max(1e-9);
    let out_tokens: u64 = ok.iter().map(|r| r.output_tokens).sum();
    let in_tokens: u64 = ok.iter().map(|r| r.input_tokens).sum();
    let itl: Vec<f64> = ok.iter().flat_map(|r| r.itl.iter().copied()).collect();
    let tpot: Vec<f64> = ok.iter().filter_map(|r| r.tpot()).collect();
    let dispatch: Vec<f64> = records.iter().map(|r| r.dispatch_lag).collect();
    let dispatch_lag_ms = stats_ms(&dispatch);
    BenchSummary {
        completed: ok.len() as u64,
        failed: (records.len() - ok.len()) as u64,
        duration_s,
        total_input_tokens: in_tokens,
        total_output_tokens: out_tokens,
        tokens_approx: ok.iter().any(|r| r.tokens_approx),
        request_throughput: ok.len() as f64 / d,
        request_goodput: slo.map(|s| ok.iter().filter(|r| s.met_by(r)).count() as f64 / d),
        output_throughput: out_tokens as f64 / d,
        total_token_throughput: (in_tokens + out_tokens) as f64 / d,
        peak_output_throughput: peak_output(&ok),
        peak_concurrent_requests: peak_concurrency(&ok),
        ttft_ms: stats_ms(&ok.iter().map(|r| r.ttft).collect::<Vec<_>>()),
        tpot_ms: stats_ms(&tpot),
        itl_ms: stats_ms(&itl),
        e2el_ms: stats_ms(&ok.iter().map(|r| r.e2el).collect::<Vec<_>>()),
        client_overloaded: dispatch_lag_ms.p99 > CLIENT_LAG_LIMIT_MS,
        dispatch_lag_ms,
        client_queue_ms: stats_ms(&records.iter().map(|r| r.client_queue).collect::<Vec<_>>()),
        first_error: records.iter().find_map(|r| r.error.clone()),
        prompts: None,
    }
}

/// Most output tokens in any one-second bucket, tokens placed at their event times.
fn peak_output(ok: &[&RequestRecord]) -> f64 {
    let mut buckets: std::collections::BTreeMap<i64, u64> = Default::default();
    for r in ok {
        let events = 1 + r.itl.len() as u64;
        let per_event = r.output_tokens as f64 / events as f64;
        let mut t = r.sent_at + r.ttft;
        let mut acc = 0.0;
        let mut put = |t: f64, acc: &mut f64| {
            *acc += per_event;
            let whole = acc.floor();
            *acc -= whole;
            *buckets.entry(t.floor() as i64).or_default() += whole as u64;
        };
        put(t, &mut acc);
        for gap in &r.itl {
            t += gap;
            put(t, &mut acc);
        }
    }
    buckets.values().copied().max().unwrap_or(0) as f64
}

/// Most requests in flight at once.
fn peak_concurrency(ok: &[&RequestRecord]) -> u64 {
    let mut edges: Vec<(f64, i64)> = ok
        .iter()
        .flat_map(|r| [(r.sent_at, 1), (r.sent_at + r.e2el, -1)])
        .collect();
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut cur, mut peak) = (0i64, 0i64);
    for (_, d) in edges {
        cur += d;
        peak = peak.max(cur);
    }
    peak as u64
}

/// A small deterministic generator (splitmix64), so schedules are reproducible from a seed
/// on every platform, the browser included.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    /// Gamma(shape, scale) by Marsaglia and Tsang.
    pub fn gamma(&mut self, shape: f64, scale: f64) -> f64 {
        if shape < 1.0 {
            let u = self.uniform();
            return self.gamma(shape + 1.0, scale) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.uniform();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v * scale;
            }
        }
    }
}

/// Send times (seconds from start) of `n` requests at `rate` per second with gamma gaps of
/// shape `burstiness` (1 = Poisson), rescaled so the last one is at exactly n/rate, as vLLM
/// does. An infinite rate sends everything at once.
pub fn schedule(n: usize, rate: f64, burstiness: f64, seed: u64) -> Vec<f64> {
    if !rate.is_finite() || n == 0 {
        return vec![0.0; n];
    }
    let mut rng = SplitMix::new(seed);
    let theta = 1.0 / (rate * burstiness);
    let mut t = 0.0;
    let mut out: Vec<f64> = (0..n)
        .map(|_| {
            t += rng.gamma(burstiness, theta);
            t
        })
        .collect();
    let target = n as f64 / rate;
    if let Some(&last) = out.last() {
        if last > 0.0 {
            let k = target / last;
            out.iter_mut().for_each(|x| *x *= k);
        }
    }
    out
}

/// The result table, laid out like `vllm bench serve`'s.
pub fn format_table(s: &BenchSummary, max_concurrency: Option<usize>, rate: Option<f64>) -> String {
    let mut out = String::new();
    let row = |out: &mut String, k: &str, v: String| out.push_str(&format!("{k:<40} {v:<10}\n"));
    let f = |v: f64| format!("{v:.2}");
    out.push_str(&format!("{:=^50}\n", " Serving Benchmark Result "));
    row(&mut out, "Successful requests:", s.completed.to_string());
    row(&mut out, "Failed requests:", s.failed.to_string());
    if let Some(c) = max_concurrency {
        row(&mut out, "Maximum request concurrency:", c.to_string());
    }
    if let Some(r) = rate.filter(|r| r.is_finite()) {
        row(&mut out, "Request rate configured (RPS):", f(r));
    }
    row(&mut out, "Benchmark duration (s):", f(s.duration_s));
    row(&mut out, "Total input tokens:", s.total_input_tokens.to_string());
    if let Some(p) = &s.prompts {
        out.push_str(&format!("{:<40} {p}\n", "Prompts:"));
    }
    let approx = if s.tokens_approx { " (approx.)" } else { "" };
    row(
        &mut out,
        "Total generated tokens:",
        format!("{}{approx}", s.total_output_tokens),
    );
    row(&mut out, "Request throughput (req/s):", f(s.request_throughput));
    if let Some(g) = s.request_goodput {
        row(&mut out, "Request goodput (req/s):", f(g));
    }
    row(&mut out, "Output token throughput (tok/s):", f(s.output_throughput));
    row(
        &mut out,
        "Peak output token throughput (tok/s):",
        f(s.peak_output_throughput),
    );
    row(
        &mut out,
        "Peak concurrent requests:",
        s.peak_concurrent_requests.to_string(),
    );
    row(&mut out, "Total token throughput (tok/s):", f(s.total_token_throughput));
    for (title, short, st) in [
        ("Time to First Token", "TTFT", &s.ttft_ms),
        ("Time per Output Token (excl. 1st token)", "TPOT", &s.tpot_ms),
        ("Inter-token Latency", "ITL", &s.itl_ms),
        ("End-to-end Latency", "E2EL", &s.e2el_ms),
    ] {
        out.push_str(&format!("{:-^50}\n", title));
        row(&mut out, &format!("Mean {short} (ms):"), f(st.mean));
        row(&mut out, &format!("Median {short} (ms):"), f(st.median));
        row(&mut out, &format!("P95 {short} (ms):"), f(st.p95));
        row(&mut out, &format!("P99 {short} (ms):"), f(st.p99));
    }
    out.push_str(&format!("{:-^50}\n", "Client"));
    row(&mut out, "P99 dispatch lag (ms):", f(s.dispatch_lag_ms.p99));
    if s.client_overloaded {
        out.push_str("WARNING: the client fell behind its schedule; latencies include client delay.\n");
    }
    out.push_str(&"=".repeat(50));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4], [50, 95, 99]) = [2.5, 3.85, 3.97]
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.5);
        assert!((percentile(&v, 95.0) - 3.85).abs() < 1e-12);
        assert!((percentile(&v, 99.0) - 3.97).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    fn rec(sent: f64, ttft: f64, e2el: f64, out: u64, itl: Vec<f64>) -> RequestRecord {
        RequestRecord {
            ok: true,
            sent_at: sent,
            ttft,
            e2el,
            output_tokens: out,
            input_tokens: 10,
            itl,
            ..Default::default()
        }
    }

    #[test]
    fn summary_by_hand() {
        // Two requests over 2 s: TTFT 100 and 300 ms; 5 and 1 output tokens.
        let a = rec(0.0, 0.1, 0.5, 5, vec![0.1, 0.1, 0.1, 0.1]);
        let b = rec(1.0, 0.3, 0.3, 1, vec![]);
        let s = summarize(&[a, b], 2.0, Some(&"ttft:200".parse().unwrap()));
        assert_eq!((s.completed, s.failed), (2, 0));
        assert!((s.ttft_ms.mean - 200.0).abs() < 1e-9);
        assert!((s.ttft_ms.std - 100.0).abs() < 1e-9, "population std");
        // TPOT only for a: (0.5 - 0.1) / 4 = 100 ms.
        assert!((s.tpot_ms.mean - 100.0).abs() < 1e-9);
        assert_eq!(s.itl_ms.p50, 100.0);
        assert_eq!(s.request_throughput, 1.0);
        assert_eq!(s.output_throughput, 3.0);
        assert_eq!(s.total_token_throughput, 13.0);
        assert_eq!(s.request_goodput, Some(0.5), "only a meets TTFT 200 ms");
        assert_eq!(s.peak_concurrent_requests, 1);
        assert_eq!(s.peak_output_throughput, 5.0);
    }

    #[test]
    fn failed_requests_count_but_do_not_skew_latency() {
        let bad = RequestRecord {
            ok: false,
            error: Some("HTTP 500".into()),
            ..Default::default()
        };
        let s = summarize(&[rec(0.0, 0.2, 0.2, 1, vec![]), bad], 1.0, None);
        assert_eq!((s.completed, s.failed), (1, 1));
        assert_eq!(s.ttft_ms.mean, 200.0);
        assert_eq!(s.first_error.as_deref(), Some("HTTP 500"));
    }

    #[test]
    fn schedule_is_seeded_and_rescaled_like_vllm() {
        let a = schedule(100, 10.0, 1.0, 42);
        assert_eq!(a, schedule(100, 10.0, 1.0, 42));
        assert_ne!(a, schedule(100, 10.0, 1.0, 43));
        assert!((a[99] - 10.0).abs() < 1e-9, "last arrival at N/rate");
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(schedule(3, f64::INFINITY, 1.0, 0), vec![0.0; 3]);
        // Burstier traffic (shape < 1) has more variable gaps than Poisson.
        let cv = |v: &[f64]| {
            let gaps: Vec<f64> = v.windows(2).map(|w| w[1] - w[0]).collect();
            let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
            (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt() / m
        };
        assert!(cv(&schedule(2000, 10.0, 0.25, 1)) > cv(&schedule(2000, 10.0, 1.0, 1)));
        assert!(cv(&schedule(2000, 10.0, 100.0, 1)) < 0.3);
    }

    #[test]
    fn gamma_mean_is_shape_times_scale() {
        let mut r = SplitMix::new(7);
        for shape in [0.5, 1.0, 3.0] {
            let n = 20000;
            let mean = (0..n).map(|_| r.gamma(shape, 2.0)).sum::<f64>() / n as f64;
            assert!((mean - shape * 2.0).abs() < 0.1 * shape * 2.0, "shape {shape}: {mean}");
        }
    }

    #[test]
    fn params_with_an_unlimited_rate_survive_json() {
        let p = BenchParams {
            url: "http://x".into(),
            model: "m".into(),
            endpoint: Endpoint::Chat,
            requests: 1,
            concurrency: None,
            rate: f64::INFINITY,
            burstiness: 1.0,
            input_len: 1,
            output_len: 1,
            warmup: 0,
            seed: 0,
            goodput: None,
        };
        let back: BenchParams = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        let finite = BenchParams { rate: 2.5, ..p };
        assert_eq!(
            serde_json::from_value::<BenchParams>(serde_json::to_value(&finite).unwrap())
                .unwrap()
                .rate,
            2.5
        );
    }

    #[test]
    fn goodput_parsing_names_the_bad_part() {
        let s: Slo = "ttft:500,tpot:50,e2el:2000".parse().unwrap();
        assert_eq!(
            (s.ttft_ms, s.tpot_ms, s.e2el_ms),
            (Some(500.0), Some(50.0), Some(2000.0))
        );
        assert!("ttft=5".parse::<Slo>().unwrap_err().contains("ttft=5"));
        assert!("itl:5".parse::<Slo>().unwrap_err().contains("itl"));
        assert!("ttft:x".parse::<Slo>().unwrap_err().contains("`x`"));
    }

    #[test]
    fn table_is_laid_out_like_vllm() {
        let s = summarize(&[rec(0.0, 0.1, 0.5, 5, vec![0.1; 4])], 1.0, None);
        let t = format_table(&s, Some(4), None);
        assert!(t.starts_with("============ Serving Benchmark Result ============\n"));
        assert!(t.contains("Successful requests:                     1         \n"));
        assert!(t.contains("---------------Time to First Token----------------"));
        assert!(t.contains("Maximum request concurrency:             4"));
    }
}
