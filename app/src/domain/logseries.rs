//! The engines' periodic stats lines, read into a time series.
//!
//! vLLM logs one stats line every few seconds (V0 `metrics.py`: `Avg prompt throughput: …,
//! Running: N reqs, Swapped: N reqs, Pending: N reqs, GPU KV cache usage: X%`; V1
//! `loggers.py`: `Engine 000: Avg prompt throughput: …, Running: N reqs, Waiting: N reqs,
//! [Preemptions: N,] GPU KV cache usage: X%`), SGLang one line per batch (`Prefill batch.` /
//! `Decode batch,` with `#running-req`, `#queue-req`, `token usage`, `gen throughput
//! (token/s)`). A log excerpt with no `/metrics` history behind it still carries the queue and
//! the KV cache, so the investigator evaluates the same symptom rows on these points as the
//! metrics path does on scrapes.
//!
//! Fields are read by their names, wherever the line starts (a pod prefix, a process tag, a
//! timestamp) and in any order; a field that is absent or unreadable stays `None`. Lines are
//! untrusted: numbers are parsed, never evaluated, and nothing here panics.

use serde::{Deserialize, Serialize};

/// Which engine wrote the stats line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum StatsSource {
    /// vLLM V0 `metrics.py` (Running / Swapped / Pending).
    VllmV0,
    /// vLLM V1 `loggers.py` (Running / Waiting, optional Preemptions).
    VllmV1,
    /// SGLang prefill batch line.
    SglangPrefill,
    /// SGLang decode batch line.
    SglangDecode,
}

/// One stats line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct StatsPoint {
    /// 1-based line number in the log.
    pub line: usize,
    pub source: Option<StatsSource>,
    pub running: Option<f64>,
    /// Waiting (V1), pending (V0) or queued (SGLang) requests.
    pub waiting: Option<f64>,
    /// KV cache usage as a fraction 0..=1 (vLLM `GPU KV cache usage`, SGLang `token usage`).
    pub kv: Option<f64>,
    pub generation_tps: Option<f64>,
    pub prompt_tps: Option<f64>,
    /// vLLM V1 `Preemptions: N` (per interval), V0 `Swapped: N reqs`.
    pub preemptions: Option<f64>,
    pub swapped: Option<f64>,
}

/// The value that follows `key` on the line, as a number (`98.9%` → 98.9, `1,234` is not a
/// number the engines print, so it is not read).
/// The number after `key` on a line (bounded: a run of over 32 characters is no reading).
pub fn number_after(line: &str, key: &str) -> Option<f64> {
    let at = line.find(key)? + key.len();
    let rest = line.get(at..)?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+'))
        .unwrap_or(rest.len());
    // An endless digit run is not a reading.
    if end > 32 {
        return None;
    }
    rest.get(..end)?.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Reads one line; `None` when it is not a stats line.
pub fn parse_line(n: usize, line: &str) -> Option<StatsPoint> {
    if line.contains("Avg prompt throughput:") {
        let v1 = line.contains("Waiting:");
        let kv = number_after(line, "GPU KV cache usage:").map(|p| p / 100.0);
        return Some(StatsPoint {
            line: n,
            source: Some(if v1 { StatsSource::VllmV1 } else { StatsSource::VllmV0 }),
            running: number_after(line, "Running:"),
            waiting: number_after(line, "Waiting:").or_else(|| number_after(line, "Pending:")),
            kv,
            generation_tps: number_after(line, "Avg generation throughput:"),
            prompt_tps: number_after(line, "Avg prompt throughput:"),
            preemptions: number_after(line, "Preemptions:"),
            swapped: number_after(line, "Swapped:"),
        });
    }
    let decode = line.contains("Decode batch");
    if decode || line.contains("Prefill batch") {
        // Both eras: `Decode batch. #running-req` (0.4) and `Decode batch, #running-req` (0.5).
        let point = StatsPoint {
            line: n,
            source: Some(if decode {
                StatsSource::SglangDecode
            } else {
                StatsSource::SglangPrefill
            }),
            running: number_after(line, "#running-req:"),
            waiting: number_after(line, "#queue-req:"),
            kv: number_after(line, "token usage:"),
            generation_tps: number_after(line, "gen throughput (token/s):"),
            prompt_tps: number_after(line, "input throughput (token/s):"),
            preemptions: None,
            swapped: None,
        };
        if point.running.is_some() || point.waiting.is_some() || point.kv.is_some() {
            return Some(point);
        }
    }
    None
}

/// The queue rows of the incident symptom table, as the metrics path and the log path both
/// evaluate them on a window of (waiting, KV usage) samples, oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueRow {
    /// Requests wait while the KV cache is above 90%.
    KvExhausted,
    /// Requests wait and the queue grows while the KV cache stays below 70%: the
    /// `max-num-seqs` cap or decode compute.
    SeqCapped,
}

/// KV usage above which waiting requests mean the cache is exhausted (the runbook's 90%).
pub const KV_EXHAUSTED: f64 = 0.90;
/// KV usage below which a growing queue is the sequence cap, not the cache (the runbook's 70%).
pub const KV_ROOM: f64 = 0.70;

/// Evaluates the queue rows on samples of `(waiting, kv)`.
///
/// A queue that drains while the cache stays full is still an exhausted cache (a busy engine
/// admits requests as others finish), so KV-exhausted asks for requests waiting at two or more
/// samples with the cache above 90% at those samples (or at one, with the queue growing), and
/// for a queue at the last sample. The
/// sequence cap asks for a queue that grows (by at least three) with the cache below 70%
/// throughout: with room in the cache, a steady queue is traffic, not a cap.
pub fn queue_row(samples: &[(f64, Option<f64>)]) -> Option<QueueRow> {
    let queued: Vec<(f64, Option<f64>)> = samples.iter().copied().filter(|(w, _)| *w >= 1.0).collect();
    let last_waiting = samples.last().map(|(w, _)| *w).unwrap_or(0.0);
    if queued.len() < 2 || last_waiting < 1.0 {
        return None;
    }
    let full = queued
        .iter()
        .filter(|(_, k)| k.is_some_and(|k| k >= KV_EXHAUSTED))
        .count();
    let first = samples.first().map(|(w, _)| *w).unwrap_or(0.0);
    let grows = last_waiting >= first + 3.0 && last_waiting >= 3.0;
    if full >= 2 || (full >= 1 && grows) {
        return Some(QueueRow::KvExhausted);
    }
    let roomy = queued.iter().all(|(_, k)| k.is_some_and(|k| k < KV_ROOM));
    (grows && roomy).then_some(QueueRow::SeqCapped)
}

/// Whether the points show a stalled step: requests running while neither prompt nor
/// generation tokens move, at two consecutive vLLM stats lines (one interval of zero can be a
/// long prefill between two logging ticks).
pub fn stalled(points: &[StatsPoint]) -> Option<(usize, usize)> {
    let flat = |p: &StatsPoint| {
        matches!(p.source, Some(StatsSource::VllmV0 | StatsSource::VllmV1))
            && p.running.is_some_and(|r| r >= 1.0)
            && p.generation_tps == Some(0.0)
            && p.prompt_tps == Some(0.0)
    };
    points
        .windows(2)
        .find(|w| flat(&w[0]) && flat(&w[1]))
        .map(|w| (w[0].line, w[1].line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_engines_wording() {
        let v0 = "INFO 05-04 15:15:56 metrics.py:229] Avg prompt throughput: 635.9 tokens/s, Avg generation throughput: 1234.8 tokens/s, Running: 92 reqs, Swapped: 0 reqs, Pending: 323 reqs, GPU KV cache usage: 98.9%, CPU KV cache usage: 0.0%";
        let p = parse_line(3, v0).unwrap();
        assert_eq!(p.source, Some(StatsSource::VllmV0));
        assert_eq!((p.running, p.waiting, p.swapped), (Some(92.0), Some(323.0), Some(0.0)));
        assert!((p.kv.unwrap() - 0.989).abs() < 1e-9);
        let v1 = "pod-x vllm (APIServer pid=117) INFO 09-02 06:26:02 [loggers.py:123] Engine 000: Avg prompt throughput: 408.8 tokens/s, Avg generation throughput: 6.3 tokens/s, Running: 2 reqs, Waiting: 8 reqs, Preemptions: 3, GPU KV cache usage: 31.6%, Prefix cache hit rate: 33.2%";
        let p = parse_line(1, v1).unwrap();
        assert_eq!(p.source, Some(StatsSource::VllmV1));
        assert_eq!(
            (p.waiting, p.preemptions, p.generation_tps),
            (Some(8.0), Some(3.0), Some(6.3))
        );
        let sg_old = "[2025-09-03 18:33:19 TP0] Decode batch. #running-req: 1, #token: 137, token usage: 0.00, cuda graph: True, gen throughput (token/s): 1.06, #queue-req: 0, ";
        let p = parse_line(1, sg_old).unwrap();
        assert_eq!((p.running, p.waiting, p.kv), (Some(1.0), Some(0.0), Some(0.0)));
        let sg_new = "[2026-09-13 16:06:32] Prefill batch, #new-seq: 2, #new-token: 704, #cached-token: 70, token usage: 0.79, #running-req: 28, #queue-req: 57, #pending-token: 33767, cuda graph: True, input throughput (token/s): 21.59";
        let p = parse_line(1, sg_new).unwrap();
        assert_eq!(p.source, Some(StatsSource::SglangPrefill));
        assert_eq!(
            (p.running, p.waiting, p.kv, p.prompt_tps),
            (Some(28.0), Some(57.0), Some(0.79), Some(21.59))
        );
        assert!(parse_line(1, "INFO Application startup complete.").is_none());
        assert!(parse_line(1, "Decode batch").is_none());
    }

    #[test]
    fn hostile_numbers_stay_none() {
        let p = parse_line(
            1,
            &format!(
                "Avg prompt throughput: {} tokens/s, Running: NaN reqs, GPU KV cache usage: inf%",
                "9".repeat(5000)
            ),
        )
        .unwrap();
        assert_eq!((p.prompt_tps, p.running, p.kv), (None, None, None));
        assert!(parse_line(1, "Decode batch, #running-req: -").is_none());
    }

    #[test]
    fn queue_rows() {
        // Draining but full: exhausted.
        let draining = [(323.0, Some(0.989)), (292.0, Some(0.99)), (162.0, Some(0.994))];
        assert_eq!(queue_row(&draining), Some(QueueRow::KvExhausted));
        // Growing with room: capped.
        let capped = [(1.0, Some(0.3)), (4.0, Some(0.35)), (9.0, Some(0.4))];
        assert_eq!(queue_row(&capped), Some(QueueRow::SeqCapped));
        // Steady queue with room, a single full sample, an empty queue at the end: nothing.
        assert_eq!(queue_row(&[(5.0, Some(0.3)), (5.0, Some(0.3))]), None);
        assert_eq!(queue_row(&[(5.0, Some(0.95)), (5.0, Some(0.5))]), None);
        // One full sample with a growing queue (preemption freed blocks in between): exhausted.
        assert_eq!(
            queue_row(&[(35.0, Some(0.97)), (65.0, Some(0.80))]),
            Some(QueueRow::KvExhausted)
        );
        assert_eq!(
            queue_row(&[(5.0, Some(0.95)), (5.0, Some(0.95)), (0.0, Some(0.95))]),
            None
        );
        assert_eq!(queue_row(&[]), None);
    }

    #[test]
    fn stall_needs_two_flat_intervals() {
        let flat = "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 8 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 3.5%";
        let moving = flat.replace("generation throughput: 0.0", "generation throughput: 12.0");
        let pts = |ls: &[&str]| {
            ls.iter()
                .enumerate()
                .filter_map(|(i, l)| parse_line(i + 1, l))
                .collect::<Vec<_>>()
        };
        assert_eq!(stalled(&pts(&[flat, flat])), Some((1, 2)));
        assert_eq!(stalled(&pts(&[flat, &moving, flat])), None);
        let idle = flat.replace("Running: 8", "Running: 0");
        assert_eq!(stalled(&pts(&[&idle, &idle])), None);
    }
}
