//! The stall detector: is an engine hung, without crying wolf?
//!
//! Hung = work pending (running + waiting > 0) while every progress counter stays flat: the
//! generated tokens, the prompt tokens (chunked prefill moves them every step of a long
//! prompt) and the engine's iterations (vLLM's `iteration_tokens_total` histogram count). A
//! long prefill, a burst of a thousand requests or a slow first step all move one of them, or
//! stay under [`FLAT_S`]; a stuck collective moves none. The one-token probe is for an idle
//! engine only: a busy one is judged by its counters and gets no probe traffic (a probe queued
//! behind a burst would time out and call a healthy engine hung).

use crate::domain::signals::Signals;

/// Seconds of flat counters with work pending before an engine is called hung. Detection
/// takes this plus one scrape interval: 20 + 5 s with the default scrape, under the 30 s goal,
/// and above a cold engine's first-step warm-up.
pub const FLAT_S: f64 = 20.0;

fn pending(s: &Signals) -> f64 {
    s.running.unwrap_or(0.0) + s.waiting.unwrap_or(0.0)
}

/// The progress counters of one scrape: generated tokens, prompt tokens, engine steps.
pub fn counters(s: &Signals) -> [Option<f64>; 3] {
    [s.generation_tokens_total, s.prompt_tokens_total, s.iterations_total]
}

/// Whether anything moved from `a` to `b` (a counter that went down is a restart: movement).
fn moved(a: &Signals, b: &Signals) -> bool {
    counters(a).iter().zip(counters(b)).any(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => y != *x,
        (None, Some(_)) | (Some(_), None) => true,
        (None, None) => false,
    })
}

/// Seconds the engine has had work pending with no counter moving, over scrapes `(t_s,
/// signals)` oldest first; `None` when the last scrape has no work pending, or has no progress
/// counter at all (nothing to judge by: the probe decides).
pub fn flat_for(scrapes: &[(f64, &Signals)]) -> Option<f64> {
    let (t_last, last) = scrapes.last()?;
    if pending(last) <= 0.0 || counters(last).iter().all(Option::is_none) {
        return None;
    }
    let mut since = *t_last;
    for w in scrapes.windows(2).rev() {
        let ((t0, a), (_, b)) = (w[0], w[1]);
        if moved(a, b) || pending(a) <= 0.0 {
            break;
        }
        since = t0;
    }
    Some(t_last - since)
}

/// Whether the scrapes show a hang.
pub fn hung(scrapes: &[(f64, &Signals)]) -> bool {
    flat_for(scrapes).is_some_and(|s| s >= FLAT_S)
}

/// Whether a probe that got no answer shows a hang: nothing moved between the scrape before
/// it was sent (`baseline`) and the latest one. A busy engine that queued the probe behind its
/// work moved its counters meanwhile, and is judged by them instead.
pub fn probe_shows_hang(baseline: [Option<f64>; 3], latest: Option<&Signals>) -> bool {
    latest.is_none_or(|s| counters(s) == baseline)
}

/// Whether the engine is idle, so a probe is the only way to see a hang (and costs nothing).
pub fn idle(last: Option<&Signals>) -> bool {
    last.is_none_or(|s| pending(s) <= 0.0)
}

/// Why an engine was called hung; each kind is undone by its own evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HangKind {
    /// Work pending and no progress counter moved for [`FLAT_S`].
    Flat,
    /// Idle, `/health` answers, and a one-token completion got no answer.
    Probe,
    /// The API server accepts connections and answers none (stopped, wedged event loop).
    NoConnection,
}

impl HangKind {
    pub const ALL: [HangKind; 3] = [HangKind::Flat, HangKind::Probe, HangKind::NoConnection];

    /// The locale key a verdict of this kind is written with.
    pub fn key(self) -> &'static str {
        match self {
            HangKind::Flat => "hang-flat",
            HangKind::Probe => "hang-probe",
            HangKind::NoConnection => "hang-no-connection",
        }
    }

    /// The kind a verdict key names: a key from elsewhere (another host's console) is none.
    pub fn of_key(key: &str) -> Option<HangKind> {
        HangKind::ALL.into_iter().find(|k| k.key() == key)
    }
}

/// A hang verdict: once given it holds until the engine proves it moves (a token, a step, an
/// answered probe), so a hang does not flap back to healthy while a new probe is on its way.
#[derive(Clone, Debug, PartialEq)]
pub struct HangVerdict {
    pub kind: HangKind,
    /// The progress counters when the verdict was given.
    pub counters: [Option<f64>; 3],
    /// Why, as its kind's locale key ([`HangKind::key`]) and its figures; `held` (the seconds
    /// the verdict has held) is added each time it is shown.
    pub why: crate::domain::reading::Reading,
}

/// The evidence of one refresh that can undo a verdict.
#[derive(Clone, Copy, Debug, Default)]
pub struct Evidence<'a> {
    /// The newest scrape, if the last one answered.
    pub latest: Option<&'a Signals>,
    /// A probe sent after the verdict answered.
    pub probe_answered: bool,
    /// `/health` answered (any status).
    pub health_answered: bool,
}

/// Whether the evidence proves a hung engine moves again: a counter moved since the verdict
/// (a token or a step) or a probe answered; for an API server that answered no connection,
/// that it answers again.
pub fn recovered(v: &HangVerdict, e: Evidence<'_>) -> bool {
    match v.kind {
        HangKind::NoConnection => e.health_answered,
        HangKind::Flat | HangKind::Probe => {
            e.probe_answered
                || e.latest.is_some_and(|s| {
                    counters(s)
                        .iter()
                        .zip(v.counters)
                        .any(|(now, then)| matches!((now, then), (Some(a), Some(b)) if *a != b))
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(pending: f64, gen: f64, prompt: f64, iters: f64) -> Signals {
        Signals {
            running: Some(pending),
            waiting: Some(0.0),
            generation_tokens_total: Some(gen),
            prompt_tokens_total: Some(prompt),
            iterations_total: Some(iters),
            ..Default::default()
        }
    }

    fn run(v: &[(f64, Signals)]) -> Option<f64> {
        let refs: Vec<(f64, &Signals)> = v.iter().map(|(t, s)| (*t, s)).collect();
        flat_for(&refs)
    }

    #[test]
    fn a_stuck_engine_is_flat_with_work_pending() {
        let v: Vec<(f64, Signals)> = (0..7).map(|i| (i as f64 * 5.0, s(8.0, 100.0, 50.0, 30.0))).collect();
        assert_eq!(run(&v), Some(30.0));
        let refs: Vec<(f64, &Signals)> = v.iter().map(|(t, s)| (*t, s)).collect();
        assert!(hung(&refs));
        // It began when the counters last moved.
        let mut v2 = vec![(0.0, s(8.0, 90.0, 50.0, 29.0))];
        v2.extend((1..4).map(|i| (i as f64 * 5.0, s(8.0, 100.0, 50.0, 30.0))));
        assert_eq!(run(&v2), Some(10.0));
    }

    #[test]
    fn a_long_prefill_moves_prompt_tokens_and_iterations() {
        // No token generated for a minute, but the chunked prefill advances every step.
        let v: Vec<(f64, Signals)> = (0..13)
            .map(|i| (i as f64 * 5.0, s(1.0, 0.0, i as f64 * 4096.0, i as f64 * 8.0)))
            .collect();
        assert_eq!(run(&v), Some(0.0));
    }

    #[test]
    fn an_unanswered_probe_counts_only_when_nothing_moved() {
        let before = s(0.0, 100.0, 50.0, 30.0);
        assert!(probe_shows_hang(counters(&before), Some(&s(1.0, 100.0, 50.0, 30.0))));
        assert!(!probe_shows_hang(counters(&before), Some(&s(900.0, 180.0, 90.0, 41.0))));
    }

    #[test]
    fn idle_and_unjudgeable_engines_are_not_flat() {
        let idle_v: Vec<(f64, Signals)> = (0..7).map(|i| (i as f64 * 5.0, s(0.0, 100.0, 50.0, 30.0))).collect();
        assert_eq!(run(&idle_v), None);
        assert!(idle(Some(&idle_v[0].1)));
        let no_counters = Signals {
            running: Some(3.0),
            ..Default::default()
        };
        assert_eq!(run(&[(0.0, no_counters.clone()), (30.0, no_counters)]), None);
        // A restart (counters reset) is movement.
        assert_eq!(
            run(&[(0.0, s(4.0, 1000.0, 10.0, 9.0)), (5.0, s(4.0, 0.0, 0.0, 0.0))]),
            Some(0.0)
        );
    }

    #[test]
    fn a_verdict_holds_until_the_engine_moves() {
        let frozen = s(0.0, 100.0, 50.0, 10.0);
        let v = HangVerdict {
            kind: HangKind::Probe,
            counters: counters(&frozen),
            why: crate::domain::reading::Reading::new(HangKind::Probe.key(), &[]),
        };
        // A new probe on its way, the same counters, /health still answering: still hung.
        let same = Evidence {
            latest: Some(&frozen),
            probe_answered: false,
            health_answered: true,
        };
        assert!(!recovered(&v, same));
        // No scrape at all is no proof either.
        assert!(!recovered(&v, Evidence::default()));
        // A token moved, or a probe answered: it moves.
        let moved = s(0.0, 101.0, 50.0, 11.0);
        assert!(recovered(
            &v,
            Evidence {
                latest: Some(&moved),
                ..same
            }
        ));
        assert!(recovered(
            &v,
            Evidence {
                probe_answered: true,
                ..same
            }
        ));
        // An API server that answered no connection recovers when it answers again.
        let nc = HangVerdict {
            kind: HangKind::NoConnection,
            ..v
        };
        assert!(!recovered(
            &nc,
            Evidence {
                health_answered: false,
                ..same
            }
        ));
        assert!(recovered(&nc, same));
    }
}
