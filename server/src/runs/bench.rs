//! `roofline bench`: the serving benchmark client. Open-loop arrivals on a seeded gamma
//! schedule, an optional concurrency cap, streaming requests with `include_usage`, and
//! timestamps from the monotonic clock at the moment bytes arrive. The client measures its
//! own dispatch lag so a run it could not drive is flagged, not blamed on the engine.

use app::domain::bench::{
    schedule, summarize, BenchParams, BenchProgress, BenchSummary, Endpoint, RequestRecord, SplitMix,
};
use futures::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A prompt of about `tokens` tokens: seeded words, distinct per request so the prefix cache
/// does not flatter the engine (like vLLM's random dataset).
pub fn prompt(tokens: usize, seed: u64, i: usize) -> String {
    const WORDS: &[&str] = &[
        "gpu", "kv", "cache", "token", "batch", "queue", "tensor", "layer", "model", "serve", "graph", "prefill",
    ];
    let mut rng = SplitMix::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9));
    let mut out = format!("{i} ");
    while out.len() < tokens * 4 {
        out.push_str(WORDS[(rng.next_u64() % WORDS.len() as u64) as usize]);
        out.push(' ');
    }
    out
}

/// How the bench sizes its prompts.
#[derive(Clone)]
pub enum Prompts {
    /// Exactly `--input-len` tokens, by the model's own tokenizer.
    Tokens(Arc<super::tokens::PromptTokenizer>),
    /// About four characters a token, because there is no tokenizer to count with (why).
    Chars(String),
}

impl Prompts {
    /// What the bench's result says of its prompts.
    pub fn describe(&self, input_len: usize) -> String {
        match self {
            Prompts::Tokens(t) => format!("exactly {input_len} tokens each, counted by {}", t.source),
            Prompts::Chars(why) => format!("about {input_len} tokens each (4 characters a token, not counted: {why})"),
        }
    }
}

fn body(p: &BenchParams, prompts: &Prompts, i: usize) -> serde_json::Value {
    let text = match prompts {
        Prompts::Tokens(t) => t.prompt(p.input_len, p.seed, i).0,
        Prompts::Chars(_) => prompt(p.input_len, p.seed, i),
    };
    let mut b = match p.endpoint {
        Endpoint::Completions => serde_json::json!({"model": p.model, "prompt": text}),
        Endpoint::Chat => serde_json::json!({"model": p.model, "messages": [{"role": "user", "content": text}]}),
    };
    b["max_tokens"] = serde_json::json!(p.output_len);
    b["stream"] = serde_json::json!(true);
    b["stream_options"] = serde_json::json!({"include_usage": true});
    b["ignore_eos"] = serde_json::json!(true);
    b["temperature"] = serde_json::json!(0);
    b
}

/// Sends one streaming request and times it the way `vllm bench serve` does.
async fn one(client: &reqwest::Client, url: &str, body: &serde_json::Value) -> RequestRecord {
    let mut r = RequestRecord::default();
    let start = Instant::now();
    let resp = match client.post(url).json(body).send().await {
        Ok(resp) => resp,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    if !resp.status().is_success() {
        let status = resp.status().as_u16();
        let text = crate::engine::read_capped(resp, crate::engine::JSON_CAP)
            .await
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        r.error = Some(format!("HTTP {status}: {}", text.chars().take(200).collect::<String>()));
        return r;
    }
    let mut stream = resp.bytes_stream();
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut last_event: Option<Instant> = None;
    let mut events = 0u64;
    let mut usage: Option<(u64, u64)> = None;
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                r.error = Some(format!("stream broke: {e}"));
                return r;
            }
        };
        let now = Instant::now();
        buf.extend_from_slice(&chunk);
        // An engine's stream is untrusted: a "line" that never ends is an error, not memory.
        if buf.len() > MAX_SSE_LINE && !buf.contains(&b'\n') {
            r.error = Some(format!("stream line over {} KiB without an end", MAX_SSE_LINE >> 10));
            return r;
        }
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            let Some(data) = line.trim().strip_prefix("data:") else {
                continue;
            };
            let data = data.trim();
            if data == "[DONE]" || data.is_empty() {
                continue;
            }
            let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
                continue;
            };
            if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                let n = |k: &str| u.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
                usage = Some((n("prompt_tokens"), n("completion_tokens")));
            }
            if v.get("choices")
                .and_then(|c| c.as_array())
                .is_some_and(|c| !c.is_empty())
            {
                match last_event {
                    None => r.ttft = now.duration_since(start).as_secs_f64(),
                    Some(prev) => r.itl.push(now.duration_since(prev).as_secs_f64()),
                }
                last_event = Some(now);
                events += 1;
            }
        }
    }
    let Some(last) = last_event else {
        r.error = Some("no tokens streamed".into());
        return r;
    };
    r.e2el = last.duration_since(start).as_secs_f64();
    match usage {
        Some((p, c)) => {
            r.input_tokens = p;
            r.output_tokens = c;
        }
        None => {
            r.output_tokens = events;
            r.tokens_approx = true;
        }
    }
    r.ok = true;
    r
}

/// The longest server-sent-event line read from an engine.
const MAX_SSE_LINE: usize = 1 << 20;

/// Errors that stop a run before it starts.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("--requests must be at least 1")]
    NoRequests,
    #[error("--concurrency must be at least 1")]
    ZeroConcurrency,
    #[error("--rate must be positive")]
    BadRate,
    #[error("--burstiness must be positive")]
    BadBurstiness,
    #[error("{field} must be at most {max}")]
    TooLarge { field: &'static str, max: u64 },
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

/// The largest run the bench client takes (prompts are built in memory, one per request).
const MAX_REQUESTS: u64 = 1_000_000;
/// Prompt tokens of a run built before it starts (about 4 bytes a token: 256 MiB).
const PREBUILD_TOKENS: usize = 64 << 20;
const MAX_CONCURRENCY: u64 = 100_000;
const MAX_INPUT_LEN: u64 = 1 << 20;
const MAX_OUTPUT_LEN: u64 = 1 << 20;
/// The most tokens a run may ask for in all, prompts and answers, warm-up included: each bound
/// alone let a run multiply them (10^6 requests of 2^20-token prompts).
const MAX_TOTAL_TOKENS: u64 = 1 << 32;

/// Checks a run's parameters before anything is allocated; the error names the field.
pub fn validate(p: &BenchParams) -> Result<(), BenchError> {
    if p.requests == 0 {
        return Err(BenchError::NoRequests);
    }
    if p.concurrency == Some(0) {
        return Err(BenchError::ZeroConcurrency);
    }
    if p.rate.is_nan() || p.rate <= 0.0 {
        return Err(BenchError::BadRate);
    }
    if p.burstiness.is_nan() || p.burstiness <= 0.0 || p.burstiness.is_infinite() {
        return Err(BenchError::BadBurstiness);
    }
    for (field, value, max) in [
        ("--requests", p.requests as u64, MAX_REQUESTS),
        ("--warmup", p.warmup as u64, MAX_REQUESTS),
        ("--concurrency", p.concurrency.unwrap_or(0) as u64, MAX_CONCURRENCY),
        ("--input-len", p.input_len as u64, MAX_INPUT_LEN),
        ("--output-len", u64::from(p.output_len), MAX_OUTPUT_LEN),
    ] {
        if value > max {
            return Err(BenchError::TooLarge { field, max });
        }
    }
    let asked = (p.requests as u64)
        .saturating_add(p.warmup as u64)
        .saturating_mul((p.input_len as u64).saturating_add(u64::from(p.output_len)));
    if asked > MAX_TOTAL_TOKENS {
        return Err(BenchError::TooLarge {
            field: "(--requests + --warmup) × (--input-len + --output-len)",
            max: MAX_TOTAL_TOKENS,
        });
    }
    Ok(())
}

/// Builds request `i`'s body off the async runtime (sizing a prompt with a tokenizer takes
/// milliseconds), once the request holds its slot: prompts waiting for a slot are not held.
async fn build_body(make: &Arc<(BenchParams, Prompts)>, i: usize) -> serde_json::Value {
    let make = make.clone();
    tokio::task::spawn_blocking(move || body(&make.0, &make.1, i))
        .await
        .unwrap_or(serde_json::Value::Null)
}

/// Runs the benchmark; `progress` is called as requests finish.
pub async fn run(
    p: &BenchParams,
    prompts: &Prompts,
    progress: impl Fn(BenchProgress) + Send + Sync + 'static,
) -> Result<(BenchSummary, Vec<RequestRecord>), BenchError> {
    validate(p)?;
    let slots = p.concurrency.unwrap_or(p.requests.max(p.warmup));
    // A pool at least as large as the concurrency: no hidden cap of its own.
    let client = crate::engine::client_builder()
        .pool_max_idle_per_host(slots)
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(3600))
        .build()
        .map_err(|e| BenchError::Client(e.to_string()))?;
    let url = format!(
        "{}/v1/{}",
        p.url.trim_end_matches('/'),
        match p.endpoint {
            Endpoint::Chat => "chat/completions",
            Endpoint::Completions => "completions",
        }
    );
    let progress = Arc::new(progress);
    let make = Arc::new((p.clone(), prompts.clone()));
    // Warm-up at the run's concurrency, excluded from the statistics.
    if p.warmup > 0 {
        let sem = Arc::new(tokio::sync::Semaphore::new(slots));
        let mut handles = Vec::new();
        for i in 0..p.warmup {
            let (client, url, make, sem) = (client.clone(), url.clone(), make.clone(), sem.clone());
            handles.push(tokio::spawn(async move {
                let _permit = sem.acquire_owned().await;
                let body = build_body(&make, usize::MAX - i).await;
                one(&client, &url, &body).await
            }));
        }
        for (k, h) in handles.into_iter().enumerate() {
            let _ = h.await;
            progress(BenchProgress {
                done: k + 1,
                failed: 0,
                total: p.warmup,
                warmup: true,
            });
        }
    }
    // Prompts are built before the clock starts where they fit in memory: sizing one with a
    // tokenizer takes milliseconds, which would otherwise count as the client's dispatch lag.
    let mut prebuilt: Option<Vec<serde_json::Value>> = (p.requests.saturating_mul(p.input_len) <= PREBUILD_TOKENS)
        .then(|| (0..p.requests).map(|i| body(p, prompts, i)).collect());
    let arrivals = schedule(p.requests, p.rate, p.burstiness, p.seed);
    let sem = Arc::new(tokio::sync::Semaphore::new(slots));
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let failed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let t0 = Instant::now();
    let mut handles = Vec::with_capacity(p.requests);
    for (i, at) in arrivals.iter().enumerate() {
        let due = t0 + Duration::from_secs_f64(*at);
        // The timer wheel ticks in milliseconds: sleep to just before the due time, then
        // yield until it, so requests leave within microseconds of their schedule.
        if let Some(early) = due.checked_sub(Duration::from_millis(2)) {
            tokio::time::sleep_until(early.into()).await;
        }
        while Instant::now() < due {
            tokio::task::yield_now().await;
        }
        let lag = Instant::now().saturating_duration_since(due).as_secs_f64();
        let built = prebuilt.as_mut().and_then(|all| all.get_mut(i)).map(std::mem::take);
        let (client, url, make, sem) = (client.clone(), url.clone(), make.clone(), sem.clone());
        let (done, failed, progress, total) = (done.clone(), failed.clone(), progress.clone(), p.requests);
        handles.push(tokio::spawn(async move {
            let queued = Instant::now();
            let _permit = sem.acquire_owned().await;
            let client_queue = queued.elapsed().as_secs_f64();
            let body = match built {
                Some(b) => b,
                None => build_body(&make, i).await,
            };
            let sent_at = t0.elapsed().as_secs_f64();
            let mut r = one(&client, &url, &body).await;
            r.sent_at = sent_at;
            r.dispatch_lag = lag;
            r.client_queue = client_queue;
            let d = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let f = failed.load(std::sync::atomic::Ordering::SeqCst) + usize::from(!r.ok);
            if !r.ok {
                failed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            progress(BenchProgress {
                done: d,
                failed: f,
                total,
                warmup: false,
            });
            r
        }));
    }
    let mut records = Vec::with_capacity(handles.len());
    for h in handles {
        if let Ok(r) = h.await {
            records.push(r);
        }
    }
    let duration = t0.elapsed().as_secs_f64();
    let mut summary = summarize(&records, duration, p.goodput.as_ref());
    summary.prompts = Some(prompts.describe(p.input_len));
    Ok((summary, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11: an engine's stream that never ends a line is an error, not unbounded memory.
    #[tokio::test]
    async fn an_endless_stream_line_is_refused() {
        use axum::routing::post;
        let app = axum::Router::new().route(
            "/v1/completions",
            post(|| async {
                (
                    [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
                    "data: ".to_string() + &"x".repeat(3 << 20),
                )
            }),
        );
        let base = crate::engine::loopback(app).await;
        let client = crate::engine::client_builder().build().unwrap();
        let r = one(&client, &format!("{base}/v1/completions"), &serde_json::json!({})).await;
        assert!(
            r.error.as_deref().is_some_and(|e| e.contains("without an end")),
            "{:?}",
            r.error
        );
    }

    #[test]
    fn parameters_beyond_the_bounds_are_refused_naming_the_field() {
        let ok = BenchParams {
            url: "http://127.0.0.1:1".into(),
            model: "m".into(),
            endpoint: app::domain::bench::Endpoint::Completions,
            requests: 10,
            concurrency: Some(2),
            rate: f64::INFINITY,
            burstiness: 1.0,
            input_len: 16,
            output_len: 4,
            warmup: 0,
            seed: 0,
            goodput: None,
        };
        assert!(validate(&ok).is_ok());
        for (bad, field) in [
            (
                BenchParams {
                    input_len: usize::MAX,
                    ..ok.clone()
                },
                "--input-len",
            ),
            (
                BenchParams {
                    requests: 10_000_000,
                    ..ok.clone()
                },
                "--requests",
            ),
            (
                BenchParams {
                    concurrency: Some(1 << 40),
                    ..ok.clone()
                },
                "--concurrency",
            ),
            (
                BenchParams {
                    output_len: u32::MAX,
                    ..ok.clone()
                },
                "--output-len",
            ),
            // Each within its bound, the product not (the audit's 10^6 × 2^20).
            (
                BenchParams {
                    requests: 1_000_000,
                    input_len: 1 << 20,
                    ..ok.clone()
                },
                "--input-len",
            ),
            (
                BenchParams {
                    requests: 5_000,
                    warmup: 5_000,
                    input_len: 1 << 19,
                    ..ok.clone()
                },
                "--warmup",
            ),
        ] {
            let e = validate(&bad).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
    }

    #[test]
    fn prompts_are_sized_and_distinct() {
        let a = prompt(100, 1, 0);
        let b = prompt(100, 1, 1);
        assert_ne!(a, b);
        assert!((400..420).contains(&a.len()), "{}", a.len());
        assert_eq!(a, prompt(100, 1, 0));
    }
}
