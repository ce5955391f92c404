//! Demo traffic: with `console --demo`, a light synthetic load against the console's own
//! simulated engines, so a first look shows what the console is for (queues, KV cache, prefix
//! hits and percentiles that move). Never sent to a real engine: a target is a healthy profile
//! whose installation host configuration marks `simulator = true`, re-read every few seconds.
//!
//! Arrivals are Poisson (exponential gaps) at three requests a second per engine, with a burst
//! at six times the rate for a few seconds about once a minute; prompts mix short, medium and
//! long ones behind one of a few shared system prompts (the prefix cache hits on those), and
//! half the requests stream. In-flight requests per engine are bounded, each with a deadline,
//! so a hung engine holds a bounded number of them. The task ends with the console.

use crate::context::Context;
use crate::demo::models::WORDS;
use app::domain::bench::SplitMix;
use app::domain::engine::EngineState;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Mean requests a second per engine outside a burst.
const RATE: f64 = 3.0;
/// A burst multiplies the rate by this, for [`BURST`].
const BURST_FACTOR: f64 = 6.0;
const BURST: Duration = Duration::from_secs(6);
/// Mean seconds between bursts (exponential too).
const BURST_EVERY_S: f64 = 60.0;
/// Requests in flight per engine; arrivals past it are dropped (the load never piles up).
const IN_FLIGHT: usize = 96;
/// One request's deadline.
const DEADLINE: Duration = Duration::from_secs(120);
/// How often the targets are read again (an engine stopped, restarted or added).
const REFRESH: Duration = Duration::from_secs(5);

/// What marks the requests as demo traffic in the engine's view (`user`) and on the wire.
pub const USER: &str = "roofline-demo";

/// The system prompts of the demo's "applications": requests behind the same one share a
/// prefix, as an assistant's or an agent's do (each longer than the part of a prompt the
/// simulator's prefix cache keys on, 256 characters, so the hit rate moves).
const SYSTEMS: [&str; 3] = [
    "You are the operations assistant of an inference platform team. Answer briefly and name the metric or log line that supports each claim. Prefer the runbook's wording when one step applies, say which step, and say what to check next if the evidence is not enough to decide. Never guess a number you cannot read from the evidence.",
    "You are a code review agent. Read the change, list risks in order of severity, and propose the smallest fix for each. Use the repository's conventions and never invent file names. When a test is missing, say which behaviour it should pin down and at which layer it belongs, and keep each comment to two sentences at most.",
    "You summarise customer support conversations for the on-call engineer: the customer's problem, what was tried, what is promised, and the next action with its owner. Keep the customer's own words for the symptom, convert every time to UTC, and flag any promise that has a deadline within the next business day.",
];

/// One engine to load: where it answers and the model name it serves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Target {
    base: String,
    model: String,
}

/// One request of the demo load.
#[derive(Debug, PartialEq)]
pub struct DemoRequest {
    pub system: usize,
    pub words: usize,
    pub max_tokens: u32,
    pub stream: bool,
}

/// Draws the next request: 70 % short (20–120 words), 25 % medium (300–800), 5 % long
/// (1,500–3,000); answers of 32–512 tokens, log-uniform; half stream.
pub fn draw(rng: &mut SplitMix) -> DemoRequest {
    let kind = rng.uniform();
    let (lo, hi) = if kind < 0.70 {
        (20.0, 120.0)
    } else if kind < 0.95 {
        (300.0, 800.0)
    } else {
        (1500.0, 3000.0)
    };
    let words = (lo + rng.uniform() * (hi - lo)) as usize;
    let max_tokens = (32f64.ln() + rng.uniform() * (512f64.ln() - 32f64.ln())).exp().round() as u32;
    DemoRequest {
        system: (rng.next_u64() % SYSTEMS.len() as u64) as usize,
        words,
        max_tokens,
        stream: rng.uniform() < 0.5,
    }
}

/// The gap before the next arrival at `rate` a second (exponential).
pub fn gap(rng: &mut SplitMix, rate: f64) -> Duration {
    Duration::from_secs_f64(-rng.uniform().ln() / rate.max(1e-3))
}

/// The chat completion body of a request.
pub fn body(req: &DemoRequest, model: &str, rng: &mut SplitMix) -> serde_json::Value {
    let text: Vec<&str> = (0..req.words)
        .map(|_| WORDS[(rng.next_u64() % WORDS.len() as u64) as usize])
        .collect();
    serde_json::json!({
        "model": model,
        "messages": [
            {"role": "system", "content": SYSTEMS[req.system]},
            {"role": "user", "content": text.join(" ")},
        ],
        "max_tokens": req.max_tokens,
        "stream": req.stream,
        "user": USER,
    })
}

/// `--demo-incident`: a runbook fault the simulator plays, switched on in one demo engine
/// this long after the console started.
#[derive(Clone, Copy, Debug)]
pub struct DemoIncident {
    pub fault: crate::sim::faults::Fault,
    pub after: Duration,
}

/// Starts the demo load (and the incident, when asked); it runs until the console exits.
pub fn spawn(ctx: Context, incident: Option<DemoIncident>) {
    if let Some(i) = incident {
        tokio::spawn(inject(ctx.clone(), i));
    }
    tokio::spawn(async move {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let http = crate::engine::client_builder()
            .timeout(DEADLINE)
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        let mut running: HashMap<Target, tokio::task::JoinHandle<()>> = HashMap::new();
        let mut n = 0u64;
        loop {
            let targets = targets(&ctx).await;
            running.retain(|t, h| {
                let keep = targets.contains(t) && !h.is_finished();
                if !keep {
                    h.abort();
                }
                keep
            });
            for t in targets {
                if let std::collections::hash_map::Entry::Vacant(slot) = running.entry(t) {
                    n += 1;
                    let t = slot.key().clone();
                    tracing::info!(engine = %t.base, model = %t.model, "demo traffic started");
                    slot.insert(tokio::spawn(drive(http.clone(), t, seed ^ n.wrapping_mul(0x9E37_79B9))));
                }
            }
            tokio::time::sleep(REFRESH).await;
        }
    });
}

/// The healthy engines of simulated installations, by profile name.
async fn targets(ctx: &Context) -> Vec<Target> {
    healthy_simulated(ctx).await.into_iter().map(|(_, t)| t).collect()
}

/// Demo traffic goes only to this console's own healthy engines of simulated installations:
/// never a real engine, never another host's.
pub fn is_target(s: &app::domain::engine::EngineStatus) -> bool {
    s.simulated && s.node.is_empty() && s.state == EngineState::Healthy
}

async fn healthy_simulated(ctx: &Context) -> Vec<(String, Target)> {
    let mut out: Vec<(String, Target)> = ctx
        .control
        .statuses()
        .await
        .into_iter()
        .filter(is_target)
        .map(|s| {
            let t = Target {
                base: crate::engine::base_url(&s.host, s.port),
                model: s.model_name,
            };
            (s.profile, t)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Switches the fault on in the first healthy simulated engine (by profile name) once
/// `after` has passed, through the simulator's loopback fault switch, and journals it: the
/// operator then finds it as at 3 a.m., from the charts and the incident wizard.
async fn inject(ctx: Context, incident: DemoIncident) {
    tokio::time::sleep(incident.after).await;
    let name = incident.fault.name();
    for _ in 0..60 {
        if let Some((profile, t)) = healthy_simulated(&ctx).await.into_iter().next() {
            let answer = crate::engine::shared_client()
                .post(format!("{}/sim/faults", t.base))
                .json(&serde_json::json!({"enable": [name]}))
                .timeout(Duration::from_secs(5))
                .send()
                .await;
            let ok = answer.as_ref().is_ok_and(|r| r.status().is_success());
            tracing::warn!(profile = %profile, fault = name, ok, "demo: a runbook fault switched on (--demo-incident)");
            ctx.journal
                .record(
                    "console",
                    "demo-fault",
                    &profile,
                    "--demo-incident: a runbook fault played by the simulator, for trying the incident wizard",
                    serde_json::json!({"fault": name, "ok": ok}),
                )
                .await;
            return;
        }
        tokio::time::sleep(REFRESH).await;
    }
}

/// One engine's arrivals, forever (the caller aborts it when the engine leaves).
async fn drive(http: reqwest::Client, target: Target, seed: u64) {
    let mut rng = SplitMix::new(seed);
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let url = format!("{}/v1/chat/completions", target.base);
    let mut burst_at = tokio::time::Instant::now() + gap(&mut rng, 1.0 / BURST_EVERY_S);
    loop {
        let now = tokio::time::Instant::now();
        if now >= burst_at + BURST {
            burst_at = now + gap(&mut rng, 1.0 / BURST_EVERY_S);
        }
        let rate = if now >= burst_at { RATE * BURST_FACTOR } else { RATE };
        tokio::time::sleep(gap(&mut rng, rate)).await;
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let req = draw(&mut rng);
        let body = body(&req, &target.model, &mut rng);
        let http = http.clone();
        let url = url.clone();
        tokio::spawn(async move {
            let _permit = permit;
            // The answer is read to its end (a stream included) so the engine finishes the
            // request as a client's; what it says is not kept.
            if let Ok(mut resp) = http.post(&url).json(&body).send().await {
                while let Ok(Some(_)) = resp.chunk().await {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_mix_lengths_answers_and_streaming() {
        let mut rng = SplitMix::new(42);
        let reqs: Vec<DemoRequest> = (0..2000).map(|_| draw(&mut rng)).collect();
        let short = reqs.iter().filter(|r| r.words <= 120).count();
        let long = reqs.iter().filter(|r| r.words >= 1500).count();
        assert!((1300..1500).contains(&short), "{short}");
        assert!((50..160).contains(&long), "{long}");
        assert!(reqs.iter().all(|r| (32..=512).contains(&r.max_tokens)));
        let streamed = reqs.iter().filter(|r| r.stream).count();
        assert!((900..1100).contains(&streamed), "{streamed}");
        for s in 0..SYSTEMS.len() {
            assert!(reqs.iter().any(|r| r.system == s));
        }
    }

    #[test]
    fn only_this_consoles_healthy_simulated_engines_get_demo_traffic() {
        use app::domain::engine::{EngineKind, EngineStatus};
        let row = |simulated: bool, node: &str, state: EngineState| EngineStatus {
            simulated,
            node: node.into(),
            ..EngineStatus::blank("p", EngineKind::Vllm, state)
        };
        assert!(is_target(&row(true, "", EngineState::Healthy)));
        assert!(!is_target(&row(false, "", EngineState::Healthy)), "a real engine");
        assert!(
            !is_target(&row(true, "gpu-b", EngineState::Healthy)),
            "another console's"
        );
        for state in [
            EngineState::Starting,
            EngineState::Hung,
            EngineState::Dead,
            EngineState::Stopped,
        ] {
            assert!(!is_target(&row(true, "", state)), "{state:?}");
        }
    }

    #[test]
    fn gaps_are_exponential_at_the_rate() {
        let mut rng = SplitMix::new(7);
        let n = 5000;
        let total: f64 = (0..n).map(|_| gap(&mut rng, RATE).as_secs_f64()).sum();
        let mean = total / n as f64;
        assert!((mean - 1.0 / RATE).abs() < 0.05, "{mean}");
    }

    #[test]
    fn a_body_is_a_chat_completion_marked_as_demo_traffic() {
        let mut rng = SplitMix::new(1);
        let req = DemoRequest {
            system: 1,
            words: 30,
            max_tokens: 64,
            stream: true,
        };
        let b = body(&req, "llama-3.1-8b", &mut rng);
        assert_eq!(b["model"], "llama-3.1-8b");
        assert_eq!(b["user"], USER);
        assert_eq!(b["messages"][0]["content"], SYSTEMS[1]);
        assert_eq!(b["messages"][1]["content"].as_str().unwrap().split(' ').count(), 30);
        assert_eq!(b["stream"], true);
    }
}
