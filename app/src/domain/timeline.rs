//! An engine's state across a time range: the changes the console saw (each tick that found a
//! state different from the last one), drawn as spans on the engine page under the charts, so a
//! hang that flapped back to healthy or a run of restarts shows at a glance, not only as the
//! current state.

use crate::domain::engine::EngineState;
use serde::{Deserialize, Serialize};

/// A state the console saw an engine enter, at `at_ms` (Unix ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct StateChange {
    pub at_ms: i64,
    pub state: EngineState,
}

/// One stretch of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct StateSpan {
    pub state: EngineState,
    pub from_ms: i64,
    pub to_ms: i64,
}

/// The timeline of a range: its spans, oldest first, and the starts within it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct StateTimeline {
    pub from_ms: i64,
    pub to_ms: i64,
    pub spans: Vec<StateSpan>,
    /// Times the engine went into `starting` within the range after having run (restarts,
    /// the first start of a fresh console included when it falls in the range).
    pub starts: usize,
    /// Times it went into hung or dead within the range.
    pub incidents: usize,
}

/// Builds the timeline of `[from_ms, to_ms]` from the changes (any order; the last change
/// before the range gives its first span; time before the first known change is left out).
pub fn timeline(changes: &[StateChange], from_ms: i64, to_ms: i64) -> StateTimeline {
    let mut sorted: Vec<StateChange> = changes.iter().copied().filter(|c| c.at_ms <= to_ms).collect();
    sorted.sort_by_key(|c| c.at_ms);
    // Only the last change at or before the start matters for the first span.
    let before = sorted.iter().rposition(|c| c.at_ms <= from_ms);
    let relevant = &sorted[before.unwrap_or(0)..];
    let mut spans: Vec<StateSpan> = Vec::new();
    for (i, c) in relevant.iter().enumerate() {
        let start = c.at_ms.max(from_ms);
        let end = relevant.get(i + 1).map_or(to_ms, |n| n.at_ms.min(to_ms));
        if end <= start {
            continue;
        }
        match spans.last_mut() {
            // The same state seen again (a console restart records it anew): one span.
            Some(last) if last.state == c.state && last.to_ms == start => last.to_ms = end,
            _ => spans.push(StateSpan {
                state: c.state,
                from_ms: start,
                to_ms: end,
            }),
        }
    }
    let inside = |c: &&StateChange| c.at_ms > from_ms && c.at_ms <= to_ms;
    StateTimeline {
        from_ms,
        to_ms,
        starts: relevant
            .iter()
            .filter(inside)
            .filter(|c| c.state == EngineState::Starting)
            .count(),
        incidents: relevant
            .iter()
            .filter(inside)
            .filter(|c| matches!(c.state, EngineState::Hung | EngineState::Dead))
            .count(),
        spans,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EngineState::*;

    fn c(at_ms: i64, state: EngineState) -> StateChange {
        StateChange { at_ms, state }
    }

    #[test]
    fn a_hang_that_flapped_back_to_healthy_shows_as_its_own_span() {
        let changes = [c(0, Starting), c(10, Healthy), c(50, Hung), c(60, Healthy), c(90, Dead)];
        let t = timeline(&changes, 20, 100);
        let got: Vec<(EngineState, i64, i64)> = t.spans.iter().map(|s| (s.state, s.from_ms, s.to_ms)).collect();
        assert_eq!(
            got,
            [(Healthy, 20, 50), (Hung, 50, 60), (Healthy, 60, 90), (Dead, 90, 100)]
        );
        assert_eq!((t.starts, t.incidents), (0, 2));
    }

    #[test]
    fn restarts_are_counted_within_the_range_and_repeats_merge() {
        let changes = [
            c(100, Healthy),
            c(0, Starting),
            c(200, Starting),
            c(210, Healthy),
            c(220, Healthy),
            c(300, Stopped),
        ];
        let t = timeline(&changes, 0, 400);
        let got: Vec<(EngineState, i64, i64)> = t.spans.iter().map(|s| (s.state, s.from_ms, s.to_ms)).collect();
        assert_eq!(
            got,
            [
                (Starting, 0, 100),
                (Healthy, 100, 200),
                (Starting, 200, 210),
                (Healthy, 210, 300),
                (Stopped, 300, 400)
            ]
        );
        // The start at 0 is the range's edge, not inside it.
        assert_eq!(t.starts, 1);
    }

    #[test]
    fn nothing_known_draws_nothing_and_later_changes_are_ignored() {
        assert!(timeline(&[], 0, 100).spans.is_empty());
        let t = timeline(&[c(150, Healthy)], 0, 100);
        assert!(t.spans.is_empty());
        let t = timeline(&[c(50, Healthy)], 0, 100);
        assert_eq!(
            t.spans,
            [StateSpan {
                state: Healthy,
                from_ms: 50,
                to_ms: 100
            }]
        );
    }
}
