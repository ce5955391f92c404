//! History from the team's Prometheus (`[prometheus] url`, issue 16): the charts' 1 h and 24 h
//! ranges, and the minutes before a symptom that the console's own memory does not hold (it
//! restarted, or the engine ran on another host), read with `query_range` over the series
//! Prometheus scraped from the engines (found through the console's service discovery, which
//! labels each with its `profile` and `host`). History is then as long as Prometheus keeps it.
//!
//! The queries use the metric names the console itself reads (`app::domain::signals::SOURCES`,
//! old and new vLLM and SGLang names, the first that has series); the answer is untrusted:
//! size-capped, a bounded number of points, non-finite values dropped, a clear error that
//! names the query's signal.

use crate::engine::AnswerError;
use app::domain::series::Point;
use app::domain::signals::{Live, SOURCES};
use std::collections::BTreeMap;
use std::time::Duration;

/// The largest answer read from Prometheus.
const CAP: usize = 16 << 20;
/// The most points one series may carry (a day at 5 s is 17,280).
const MAX_POINTS: usize = 20_000;
const TIMEOUT: Duration = Duration::from_secs(10);

/// One field of a chart point and the PromQL that gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Field {
    Running,
    Waiting,
    Kv,
    Preemptions,
    Prompt,
    Generation,
    PrefixHit,
    Ttft(u8),
    Itl(u8),
    E2e95,
    Queue95,
}

fn names(signal: &str) -> &'static [&'static str] {
    SOURCES.iter().find(|s| s.signal == signal).map_or(&[], |s| s.names)
}

/// The first of `names` that has series: `a or b or …` over aggregates (an aggregate has no
/// labels, so `or` keeps the first present).
fn either(signal: &str, f: impl Fn(&str) -> String) -> String {
    names(signal).iter().map(|n| f(n)).collect::<Vec<_>>().join(" or ")
}

/// The queries of a chart point for the engine `profile` on `host`, rates over `window_s`.
fn queries(profile: &str, host: &str, window_s: i64) -> Vec<(Field, String)> {
    // Profile and host names are validated ([a-z0-9_-.]): nothing to escape in a label value.
    let sel = format!("{{profile=\"{profile}\",host=\"{host}\"}}");
    let w = format!("{window_s}s");
    let quantile = |signal: &str, q: f64| {
        either(signal, |n| {
            format!("histogram_quantile({q}, sum by (le) (rate({n}_bucket{sel}[{w}]))) * 1000")
        })
    };
    let prefix = {
        let pairs: Vec<String> = names("prefix-hits")
            .iter()
            .zip(names("prefix-queries"))
            .map(|(h, q)| format!("sum(rate({h}{sel}[{w}])) / sum(rate({q}{sel}[{w}]))"))
            .chain(names("prefix-rate").iter().map(|n| format!("avg({n}{sel})")))
            .collect();
        pairs.join(" or ")
    };
    vec![
        (Field::Running, either("running", |n| format!("sum({n}{sel})"))),
        (Field::Waiting, either("waiting", |n| format!("sum({n}{sel})"))),
        (Field::Kv, either("kv", |n| format!("avg({n}{sel})"))),
        (
            Field::Preemptions,
            either("preemptions", |n| format!("sum(rate({n}{sel}[{w}]))")),
        ),
        (Field::Prompt, either("prompt", |n| format!("sum(rate({n}{sel}[{w}]))"))),
        (
            Field::Generation,
            either("generation", |n| format!("sum(rate({n}{sel}[{w}]))")),
        ),
        (Field::PrefixHit, prefix),
        (Field::Ttft(50), quantile("ttft", 0.5)),
        (Field::Ttft(95), quantile("ttft", 0.95)),
        (Field::Ttft(99), quantile("ttft", 0.99)),
        (Field::Itl(50), quantile("itl", 0.5)),
        (Field::Itl(95), quantile("itl", 0.95)),
        (Field::Itl(99), quantile("itl", 0.99)),
        (Field::E2e95, quantile("e2e", 0.95)),
        (Field::Queue95, quantile("queue", 0.95)),
    ]
}

fn set(live: &mut Live, field: Field, v: f64) {
    let v = Some(v);
    match field {
        Field::Running => live.running = v,
        Field::Waiting => live.waiting = v,
        Field::Kv => live.kv_usage = v,
        Field::Preemptions => live.rates.preemptions_per_s = v,
        Field::Prompt => live.rates.prompt_tokens_per_s = v,
        Field::Generation => live.rates.generation_tokens_per_s = v,
        Field::PrefixHit => live.rates.prefix_hit_rate = v,
        Field::Ttft(50) => live.ttft_p50_ms = v,
        Field::Ttft(95) => live.ttft_p95_ms = v,
        Field::Ttft(_) => live.ttft_p99_ms = v,
        Field::Itl(50) => live.itl_p50_ms = v,
        Field::Itl(95) => live.itl_p95_ms = v,
        Field::Itl(_) => live.itl_p99_ms = v,
        Field::E2e95 => live.e2e_p95_ms = v,
        Field::Queue95 => live.queue_p95_ms = v,
    }
}

/// Why Prometheus gave no points: the answer could not be had, it refused the query, or its
/// shape is not a `query_range` matrix (an untrusted peer: each case names what was wrong).
#[derive(Debug, thiserror::Error)]
pub enum PromError {
    #[error(transparent)]
    Answer(#[from] AnswerError),
    /// Prometheus' own `errorType: error` (the reason cut to 300 characters).
    #[error("{kind}: {reason}")]
    Refused { kind: String, reason: String },
    #[error("{0}")]
    Shape(String),
    /// One of a chart's queries failed: which field, at which Prometheus.
    #[error("Prometheus {base}: {field}: {source}")]
    Query {
        base: String,
        field: String,
        source: Box<PromError>,
    },
}

/// A `query_range` answer's points: `(unix seconds, value)` of its one series (an aggregate),
/// or an error that says what was wrong.
fn matrix(body: &[u8]) -> Result<Vec<(f64, f64)>, PromError> {
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|e| AnswerError::not_json(&e))?;
    if v["status"] != "success" {
        return Err(PromError::Refused {
            kind: v["errorType"].as_str().unwrap_or("error").chars().take(64).collect(),
            reason: v["error"]
                .as_str()
                .unwrap_or("no reason given")
                .chars()
                .take(300)
                .collect::<String>(),
        });
    }
    let Some(result) = v["data"]["result"].as_array() else {
        return Err(PromError::Shape("no data.result".into()));
    };
    let mut out = Vec::new();
    for series in result.iter().take(1) {
        let Some(values) = series["values"].as_array() else {
            return Err(PromError::Shape("a series without values".into()));
        };
        if values.len() > MAX_POINTS {
            return Err(PromError::Shape(format!(
                "{} points in one series (at most {MAX_POINTS})",
                values.len()
            )));
        }
        for pair in values {
            let (Some(t), Some(x)) = (pair[0].as_f64(), pair[1].as_str().and_then(|s| s.parse::<f64>().ok())) else {
                return Err(PromError::Shape(format!(
                    "a value that is not [time, \"number\"]: {}",
                    pair.to_string().chars().take(80).collect::<String>()
                )));
            };
            if t.is_finite() && x.is_finite() {
                out.push((t, x));
            }
        }
    }
    Ok(out)
}

/// An `application/x-www-form-urlencoded` body (a query is too long for a URL).
fn form(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The team's Prometheus, as the history of this host's engines.
#[derive(Clone)]
pub struct Prometheus {
    base: String,
    host: String,
    http: reqwest::Client,
}

impl Prometheus {
    /// `url` from `[prometheus] url`; `host` the `host` label this console's service discovery
    /// gives its engines.
    pub fn new(url: &str, host: &str) -> Self {
        Self {
            base: url.trim_end_matches('/').to_string(),
            host: host.to_string(),
            http: crate::engine::shared_client(),
        }
    }

    /// Chart points of `profile` from `from_ms` to `to_ms`, one every `step_s`, oldest first.
    pub async fn points(&self, profile: &str, from_ms: i64, to_ms: i64, step_s: i64) -> Result<Vec<Point>, PromError> {
        let step_s = step_s.max(1);
        // A rate needs two samples: at least a minute, and two steps.
        let window_s = (2 * step_s).max(60);
        let asks = queries(profile, &self.host, window_s)
            .into_iter()
            .map(|(field, q)| async move {
                let r = self.range(&q, from_ms, to_ms, step_s).await;
                (field, r)
            });
        let mut by_t: BTreeMap<i64, Live> = BTreeMap::new();
        for (field, answer) in futures::future::join_all(asks).await {
            let values = answer.map_err(|e| PromError::Query {
                base: self.base.clone(),
                field: format!("{field:?}"),
                source: Box::new(e),
            })?;
            for (t, v) in values {
                let live = by_t.entry((t * 1000.0) as i64).or_insert_with(|| Live {
                    window_s: window_s as f64,
                    ..Live::default()
                });
                set(live, field, v);
            }
        }
        Ok(by_t
            .into_iter()
            .map(|(t_ms, live)| Point { t_ms, live, gpu: None })
            .collect())
    }

    async fn range(&self, query: &str, from_ms: i64, to_ms: i64, step_s: i64) -> Result<Vec<(f64, f64)>, PromError> {
        let resp = self
            .http
            .post(format!("{}/api/v1/query_range", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("query", query),
                ("start", &format!("{:.3}", from_ms as f64 / 1000.0)),
                ("end", &format!("{:.3}", to_ms as f64 / 1000.0)),
                ("step", &format!("{step_s}s")),
            ]))
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| AnswerError::sending(&e, TIMEOUT))?;
        let status = resp.status();
        let body = crate::engine::read_capped(resp, CAP).await?;
        if !status.is_success() && status.as_u16() != 400 && status.as_u16() != 422 {
            return Err(AnswerError::Status(status.as_u16()).into());
        }
        matrix(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_read_every_name_the_console_reads() {
        let q = queries("llama", "gpu-a", 60);
        let running = &q.iter().find(|(f, _)| *f == Field::Running).unwrap().1;
        assert_eq!(
            running,
            "sum(vllm:num_requests_running{profile=\"llama\",host=\"gpu-a\"}) or sum(sglang:num_running_reqs{profile=\"llama\",host=\"gpu-a\"})"
        );
        let ttft = &q.iter().find(|(f, _)| *f == Field::Ttft(95)).unwrap().1;
        assert!(ttft.starts_with("histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{profile=\"llama\",host=\"gpu-a\"}[60s]))) * 1000 or "));
        let prefix = &q.iter().find(|(f, _)| *f == Field::PrefixHit).unwrap().1;
        assert!(
            prefix.contains("vllm:gpu_prefix_cache_hits_total")
                && prefix.ends_with("avg(sglang:cache_hit_rate{profile=\"llama\",host=\"gpu-a\"})")
        );
        assert_eq!(q.len(), 15);
    }

    #[test]
    fn a_form_body_encodes_promql() {
        assert_eq!(
            form(&[("query", "sum(a{b=\"c\"}) or x"), ("step", "15s")]),
            "query=sum%28a%7Bb%3D%22c%22%7D%29%20or%20x&step=15s"
        );
    }

    #[test]
    fn answers_are_read_as_untrusted() {
        let ok = br#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1700000000,"3"],[1700000060,"NaN"],[1700000120,"+Inf"],[1700000180,"2.5"]]}]}}"#;
        assert_eq!(
            matrix(ok).unwrap(),
            vec![(1_700_000_000.0, 3.0), (1_700_000_180.0, 2.5)]
        );
        let empty = br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        assert!(matrix(empty).unwrap().is_empty());
        let err = br#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#;
        assert_eq!(matrix(err).unwrap_err().to_string(), "bad_data: parse error at char 3");
        assert!(matrix(b"<html>").unwrap_err().to_string().starts_with("not JSON"));
        let odd = br#"{"status":"success","data":{"result":[{"values":[[1,2]]}]}}"#;
        assert!(matrix(odd).unwrap_err().to_string().contains("not [time, \"number\"]"));
        let many = format!(
            r#"{{"status":"success","data":{{"result":[{{"values":[{}]}}]}}}}"#,
            vec!["[1,\"1\"]"; MAX_POINTS + 1].join(",")
        );
        assert!(matrix(many.as_bytes())
            .unwrap_err()
            .to_string()
            .contains("points in one series"));
    }
}
