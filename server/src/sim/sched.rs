//! The simulator's load model: a continuous-batching scheduler in real time.
//!
//! Requests wait until a running slot and KV blocks are free; prefill shares a per-step token
//! budget; each decode step adds one token per running request and takes longer the larger
//! the batch. When KV blocks run out a request is preempted (recomputed later). The numbers
//! an operator watches therefore move the way an engine's do: TTFT and TPOT grow with load,
//! the queue fills at the running limit, KV usage follows running requests and their length.

use super::faults::Fault;
use super::metrics::Metrics;
use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// KV cache block size in tokens (vLLM's default).
pub const BLOCK: u64 = 16;

/// What a request's stream receives.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenEvent {
    Token(String),
    Done(Finished),
}

/// How a request ended, with its token counts (the `usage` of the response).
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub finish_reason: &'static str,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub cached_tokens: u32,
}

/// A request inside the scheduler.
pub struct Req {
    pub id: u64,
    pub prompt: u32,
    pub max_tokens: u32,
    pub generated: u32,
    pub cached: u32,
    pub prefill_left: u32,
    pub prefix_key: u64,
    pub streaming: bool,
    pub arrival: Instant,
    pub scheduled: Option<Instant>,
    pub prefill_done: Option<Instant>,
    pub first_token: Option<Instant>,
    pub last_token: Option<Instant>,
    pub preemptions: u32,
    pub tx: mpsc::UnboundedSender<TokenEvent>,
}

/// The scheduler and its counters.
pub struct Sched {
    pub max_running: usize,
    pub max_batched_tokens: u32,
    pub kv_capacity: u64,
    pub prefix_caching: bool,
    pub faults: HashSet<Fault>,
    pub waiting: VecDeque<Req>,
    pub running: Vec<Req>,
    pub metrics: Metrics,
    prefix_seen: HashSet<u64>,
    next_id: u64,
    /// Generation tokens per second over the last steps (SGLang's `gen_throughput`).
    pub gen_throughput: f64,
    pub window_prompt: u64,
    pub window_gen: u64,
    pub window_hits: u64,
    pub window_queries: u64,
    /// Set when a fault ends the engine; the process exits shortly after.
    pub crashed: Option<&'static str>,
    /// The first step with work has run (`slow-warmup` makes that one slow).
    warmed: bool,
    /// How long `slow-warmup`'s first step takes (`ROOFLINE_SIM_WARMUP_S`, default 12 s).
    warmup: Duration,
    /// `long-prefill`'s step: its prefill (`ROOFLINE_SIM_PREFILL_S`, default 60 s) over 120 steps.
    prefill_step: Duration,
}

const WORDS: &[&str] = &[
    " the", " engine", " serves", " tokens", " quickly", " and", " the", " queue", " stays", " short", ".", " KV",
    " cache", " holds", " context", ",",
];

impl Sched {
    pub fn new(
        max_running: u32,
        max_batched_tokens: u32,
        kv_capacity: u64,
        prefix_caching: bool,
        metrics: Metrics,
    ) -> Self {
        Self {
            max_running: max_running as usize,
            max_batched_tokens,
            kv_capacity,
            prefix_caching,
            faults: HashSet::new(),
            waiting: VecDeque::new(),
            running: Vec::new(),
            metrics,
            prefix_seen: HashSet::new(),
            next_id: 1,
            warmed: false,
            warmup: Duration::from_secs_f64(
                std::env::var("ROOFLINE_SIM_WARMUP_S")
                    .ok()
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|v| v.is_finite() && *v >= 0.0 && *v <= 3600.0)
                    .unwrap_or(12.0),
            ),
            prefill_step: Duration::from_secs_f64(
                std::env::var("ROOFLINE_SIM_PREFILL_S")
                    .ok()
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|v| v.is_finite() && *v > 0.0 && *v <= 3600.0)
                    .unwrap_or(60.0)
                    / 120.0,
            ),
            gen_throughput: 0.0,
            window_prompt: 0,
            window_gen: 0,
            window_hits: 0,
            window_queries: 0,
            crashed: None,
        }
    }

    /// Effective KV capacity in tokens (the kv-exhaustion fault shrinks it to a tenth).
    pub fn capacity(&self) -> u64 {
        if self.faults.contains(&Fault::KvExhaustion) {
            (self.kv_capacity / 10).max(BLOCK * 4)
        } else {
            self.kv_capacity
        }
    }

    fn blocks(tokens: u64) -> u64 {
        tokens.div_ceil(BLOCK)
    }

    /// KV tokens in use, in whole blocks.
    pub fn kv_used(&self) -> u64 {
        self.running
            .iter()
            .map(|r| Self::blocks((r.prompt + r.generated) as u64 + 1) * BLOCK)
            .sum()
    }

    pub fn kv_usage(&self) -> f64 {
        let cap = self.capacity();
        if cap == 0 {
            0.0
        } else {
            (self.kv_used() as f64 / cap as f64).min(1.0)
        }
    }

    /// Queues a request; returns its id.
    pub fn submit(
        &mut self,
        prompt: u32,
        max_tokens: u32,
        prefix_key: u64,
        streaming: bool,
        tx: mpsc::UnboundedSender<TokenEvent>,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.metrics.observe_request_params(max_tokens);
        self.waiting.push_back(Req {
            id,
            prompt: prompt.max(1),
            max_tokens: max_tokens.max(1),
            generated: 0,
            cached: 0,
            prefill_left: 0,
            prefix_key,
            streaming,
            arrival: Instant::now(),
            scheduled: None,
            prefill_done: None,
            first_token: None,
            last_token: None,
            preemptions: 0,
            tx,
        });
        id
    }

    /// Drops requests whose client went away.
    fn reap_closed(&mut self) {
        self.waiting.retain(|r| !r.tx.is_closed());
        let before = self.running.len();
        self.running.retain(|r| !r.tx.is_closed());
        if self.running.len() != before {
            self.metrics.count("finished_abort", 1.0);
        }
    }

    /// How long the next step takes: decode cost grows with the batch.
    pub fn step_duration(&self) -> Duration {
        let has_work = !self.running.is_empty() || !self.waiting.is_empty();
        if self.faults.contains(&Fault::SlowWarmup) && !self.warmed && has_work {
            return self.warmup;
        }
        let running = self.running.len() as f64;
        let mut ms = 10.0 + 0.35 * running;
        if self.faults.contains(&Fault::LongPrefill) && self.running.iter().any(|r| r.prefill_left > 0) {
            return self.prefill_step;
        }
        if self.faults.contains(&Fault::TpotSlowdown) {
            ms *= 4.0;
        }
        Duration::from_micros((ms * 1000.0) as u64)
    }

    /// One engine step. Returns the tokens processed (for the iteration histogram).
    pub fn step(&mut self, now: Instant, step_time: Duration) -> u64 {
        if self.faults.contains(&Fault::Hang) || self.crashed.is_some() {
            return 0;
        }
        self.reap_closed();
        self.admit(now);
        let mut budget = self.max_batched_tokens;
        let mut processed = 0u64;
        let mut finished = Vec::new();
        // Preemption storm: the newest running request is evicted every step.
        if self.faults.contains(&Fault::PreemptionStorm) && self.running.len() > 1 {
            self.preempt_newest();
        }
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].prefill_left > 0 {
                let mut take = self.running[i].prefill_left.min(budget);
                if self.faults.contains(&Fault::LongPrefill) {
                    // A prompt takes 120 steps of 500 ms: a minute without a generated token,
                    // with the prompt tokens and the step count moving every step.
                    take = take.min(self.running[i].prompt.div_ceil(120).max(1));
                }
                if self.faults.contains(&Fault::OomUnderLoad) && self.running[i].prompt >= 1024 && take > 0 {
                    self.crashed = Some("oom-under-load");
                    return processed;
                }
                budget -= take;
                self.running[i].prefill_left -= take;
                processed += take as u64;
                self.window_prompt += take as u64;
                self.metrics.count("prompt_tokens", take as f64);
                if self.running[i].prefill_left == 0 {
                    let r = &mut self.running[i];
                    r.prefill_done = Some(now);
                    if r.first_token.is_none() {
                        r.first_token = Some(now);
                        let ttft = now.duration_since(r.arrival).as_secs_f64();
                        let streaming = r.streaming;
                        self.metrics.observe("ttft", ttft, streaming);
                    }
                    self.emit_token(i, now);
                }
            } else {
                // Decode needs one more KV slot; without it the newest request is preempted.
                let need = Self::blocks((self.running[i].prompt + self.running[i].generated) as u64 + 2) * BLOCK;
                let have = Self::blocks((self.running[i].prompt + self.running[i].generated) as u64 + 1) * BLOCK;
                if need > have && self.kv_used() + BLOCK > self.capacity() {
                    let victim = self.running.len() - 1;
                    self.preempt(victim);
                    if victim == i {
                        continue;
                    }
                }
                if let Some(last) = self.running[i].last_token {
                    let itl = now.duration_since(last).as_secs_f64();
                    let streaming = self.running[i].streaming;
                    self.metrics.observe("itl", itl, streaming);
                }
                self.emit_token(i, now);
                processed += 1;
            }
            if self.running[i].generated >= self.running[i].max_tokens {
                finished.push(self.running[i].id);
            }
            i += 1;
        }
        for id in finished {
            if let Some(pos) = self.running.iter().position(|r| r.id == id) {
                let r = self.running.remove(pos);
                self.finish(r, now);
            }
        }
        self.metrics.observe("iteration_tokens", processed as f64, false);
        if processed > 0 {
            self.warmed = true;
        }
        let secs = step_time.as_secs_f64().max(1e-6);
        let gen_now = self.running.len() as f64 / secs;
        self.gen_throughput = 0.9 * self.gen_throughput + 0.1 * gen_now;
        processed
    }

    fn emit_token(&mut self, i: usize, now: Instant) {
        let r = &mut self.running[i];
        let word = WORDS[(r.id as usize + r.generated as usize) % WORDS.len()];
        r.generated += 1;
        r.last_token = Some(now);
        self.window_gen += 1;
        self.metrics.count("generation_tokens", 1.0);
        let _ = r.tx.send(TokenEvent::Token(word.to_string()));
    }

    fn admit(&mut self, now: Instant) {
        while self.running.len() < self.max_running {
            let Some(front) = self.waiting.front() else {
                break;
            };
            let need = Self::blocks((front.prompt + front.generated) as u64 + 1) * BLOCK;
            if self.kv_used() + need > self.capacity() {
                break;
            }
            let Some(mut r) = self.waiting.pop_front() else {
                break;
            };
            if r.scheduled.is_none() {
                r.scheduled = Some(now);
                let queue = now.duration_since(r.arrival).as_secs_f64();
                self.metrics.observe("queue_time", queue, r.streaming);
                // Prefix cache: a prompt whose prefix was seen before hits for most of it.
                let hit = self.prefix_caching
                    && !self.faults.contains(&Fault::PrefixCacheMiss)
                    && !self.prefix_seen.insert(r.prefix_key);
                r.cached = if hit {
                    (r.prompt * 3 / 4) / BLOCK as u32 * BLOCK as u32
                } else {
                    0
                };
                if !self.faults.contains(&Fault::PrefixCacheMiss) {
                    self.prefix_seen.insert(r.prefix_key);
                }
                self.window_queries += r.prompt as u64;
                self.window_hits += r.cached as u64;
                self.metrics.count("prefix_queries", r.prompt as f64);
                self.metrics.count("prefix_hits", r.cached as f64);
            }
            // A preempted request recomputes its prompt and what it had generated.
            r.prefill_left = if r.generated == 0 {
                r.prompt - r.cached
            } else {
                r.prompt + r.generated
            };
            self.running.push(r);
        }
    }

    fn preempt_newest(&mut self) {
        if let Some(last) = self.running.len().checked_sub(1) {
            self.preempt(last);
        }
    }

    fn preempt(&mut self, idx: usize) {
        let mut r = self.running.remove(idx);
        r.preemptions += 1;
        r.prefill_left = 0;
        self.metrics.count("preemptions", 1.0);
        self.waiting.push_front(r);
    }

    fn finish(&mut self, r: Req, now: Instant) {
        let e2e = now.duration_since(r.arrival).as_secs_f64();
        let ttft = r
            .first_token
            .map(|t| t.duration_since(r.arrival).as_secs_f64())
            .unwrap_or(e2e);
        let s = r.streaming;
        self.metrics.observe("e2e", e2e, s);
        if r.generated > 1 {
            self.metrics.observe("tpot", (e2e - ttft) / (r.generated - 1) as f64, s);
        }
        let scheduled = r.scheduled.unwrap_or(r.arrival);
        self.metrics
            .observe("inference_time", now.duration_since(scheduled).as_secs_f64(), s);
        if let Some(pd) = r.prefill_done {
            self.metrics
                .observe("prefill_time", pd.duration_since(scheduled).as_secs_f64(), s);
            self.metrics
                .observe("decode_time", now.duration_since(pd).as_secs_f64(), s);
        }
        self.metrics.observe("prompt_len", r.prompt as f64, s);
        self.metrics.observe("gen_len", r.generated as f64, s);
        self.metrics.observe("num_preemptions", r.preemptions as f64, s);
        self.metrics.count("finished_length", 1.0);
        self.metrics
            .count(if s { "requests_streaming" } else { "requests_plain" }, 1.0);
        let _ = r.tx.send(TokenEvent::Done(Finished {
            finish_reason: "length",
            prompt_tokens: r.prompt,
            completion_tokens: r.generated,
            cached_tokens: r.cached,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(max_running: u32, kv: u64) -> Sched {
        Sched::new(max_running, 8192, kv, true, Metrics::default())
    }

    fn run(s: &mut Sched, steps: usize) {
        let mut now = Instant::now();
        for _ in 0..steps {
            now += Duration::from_millis(10);
            s.step(now, Duration::from_millis(10));
        }
    }

    #[test]
    fn requests_wait_at_the_running_limit() {
        let mut s = sched(2, 1_000_000);
        let mut rxs = Vec::new();
        for i in 0..5 {
            let (tx, rx) = mpsc::unbounded_channel();
            s.submit(100, 50, i, true, tx);
            rxs.push(rx);
        }
        run(&mut s, 1);
        assert_eq!(s.running.len(), 2);
        assert_eq!(s.waiting.len(), 3);
        run(&mut s, 400);
        assert!(s.running.is_empty() && s.waiting.is_empty());
        let mut rx = rxs.remove(0);
        let mut tokens = 0;
        while let Ok(ev) = rx.try_recv() {
            match ev {
                TokenEvent::Token(_) => tokens += 1,
                TokenEvent::Done(f) => assert_eq!(f.completion_tokens, 50),
            }
        }
        assert_eq!(tokens, 50);
    }

    #[test]
    fn kv_exhaustion_preempts_and_usage_follows_load() {
        let mut s = sched(64, 64 * BLOCK);
        let mut rxs = Vec::new();
        for i in 0..8 {
            let (tx, rx) = mpsc::unbounded_channel();
            s.submit(200, 400, i, false, tx);
            rxs.push(rx);
        }
        run(&mut s, 30);
        assert!(s.kv_usage() > 0.8, "usage {}", s.kv_usage());
        assert!(!s.waiting.is_empty());
        run(&mut s, 300);
        assert!(s.metrics.counter("preemptions") > 0.0);
    }

    #[test]
    fn hang_stops_progress() {
        let mut s = sched(4, 100_000);
        s.faults.insert(Fault::Hang);
        let (tx, mut rx) = mpsc::unbounded_channel();
        s.submit(10, 5, 1, true, tx);
        run(&mut s, 50);
        assert!(rx.try_recv().is_err());
        assert_eq!(s.waiting.len(), 1);
    }

    #[test]
    fn repeated_prefix_hits_the_cache() {
        let mut s = sched(4, 100_000);
        for _ in 0..2 {
            let (tx, _rx) = mpsc::unbounded_channel();
            s.submit(256, 2, 42, false, tx);
            run(&mut s, 20);
        }
        assert!(s.metrics.counter("prefix_hits") > 0.0);
        s.faults.insert(Fault::PrefixCacheMiss);
        let before = s.metrics.counter("prefix_hits");
        let (tx, _rx) = mpsc::unbounded_channel();
        s.submit(256, 2, 42, false, tx);
        run(&mut s, 20);
        assert_eq!(s.metrics.counter("prefix_hits"), before);
    }
}
