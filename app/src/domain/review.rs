//! Review and approval of profile changes as a state machine: which step is allowed for whom,
//! and what state follows. The server enforces it, the change page offers the same steps.
//!
//! draft → submitted (with a reason) → approved | changes requested (by an approver who is not
//! the author) → gating (the candidate is served and checked) → active | gate failed; an
//! active change can be rolled back in one step while it is the profile's newest.

use super::auth::Role;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeState {
    Draft,
    Submitted,
    ChangesRequested,
    Approved,
    Gating,
    GateFailed,
    Active,
    RolledBack,
    Withdrawn,
}

impl ChangeState {
    pub const ALL: [ChangeState; 9] = [
        Self::Draft,
        Self::Submitted,
        Self::ChangesRequested,
        Self::Approved,
        Self::Gating,
        Self::GateFailed,
        Self::Active,
        Self::RolledBack,
        Self::Withdrawn,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Submitted => "submitted",
            Self::ChangesRequested => "changes-requested",
            Self::Approved => "approved",
            Self::Gating => "gating",
            Self::GateFailed => "gate-failed",
            Self::Active => "active",
            Self::RolledBack => "rolled-back",
            Self::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Still in review or gating: the profile has a change in flight.
    pub fn open(self) -> bool {
        !matches!(self, Self::Active | Self::RolledBack | Self::Withdrawn)
    }
}

/// A step somebody takes on a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeAction {
    /// Save new content (as a draft, or submitted for review).
    Edit,
    Approve,
    RequestChanges,
    Withdraw,
    StartGate,
    Rollback,
}

impl ChangeAction {
    pub const ALL: [ChangeAction; 6] = [
        Self::Edit,
        Self::Approve,
        Self::RequestChanges,
        Self::Withdraw,
        Self::StartGate,
        Self::Rollback,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Edit => "edit",
            Self::Approve => "approve",
            Self::RequestChanges => "request-changes",
            Self::Withdraw => "withdraw",
            Self::StartGate => "start-gate",
            Self::Rollback => "rollback",
        }
    }
}

/// What the rules need to know about a change and the person acting.
#[derive(Clone, Debug)]
pub struct Facts<'a> {
    pub state: ChangeState,
    pub author: &'a str,
    pub actor: &'a str,
    pub role: Role,
    /// The active profile differs from the one the change was written against.
    pub stale: bool,
    /// No later change of the same profile became active after this one.
    pub newest_active: bool,
}

/// Why a step is refused; each names what would make it possible.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize, crate::decode::FromWire)]
pub enum ReviewError {
    #[error("{action} needs the {needed} role (you are {have})")]
    Role {
        action: String,
        needed: String,
        have: String,
    },
    #[error("you wrote this change; another approver must review it")]
    SelfApproval,
    #[error("only the author ({author}) can {action} this change")]
    NotAuthor { author: String, action: String },
    #[error("{action} is not possible while the change is {state}")]
    State { action: String, state: String },
    #[error("the active profile changed since this change was written; edit it against the current profile and submit again")]
    Stale,
    #[error("a newer change of this profile is active; roll that one back instead")]
    NotNewest,
}

/// Checks one step and returns the state that follows (for `StartGate`, `Gating`; the gate's
/// outcome decides what comes after).
pub fn check(action: ChangeAction, f: &Facts<'_>) -> Result<ChangeState, ReviewError> {
    use ChangeAction as A;
    use ChangeState as S;
    let needed = match action {
        A::Approve | A::RequestChanges => Role::Approver,
        _ => Role::Operator,
    };
    if !f.role.allows(needed) {
        return Err(ReviewError::Role {
            action: action.as_str().into(),
            needed: needed.as_str().into(),
            have: f.role.as_str().into(),
        });
    }
    let state_err = || ReviewError::State {
        action: action.as_str().into(),
        state: f.state.as_str().into(),
    };
    let author_only = || {
        if f.actor == f.author || (action == A::Withdraw && f.role == Role::Admin) {
            Ok(())
        } else {
            Err(ReviewError::NotAuthor {
                author: f.author.into(),
                action: action.as_str().into(),
            })
        }
    };
    match action {
        A::Edit => {
            if !matches!(f.state, S::Draft | S::Submitted | S::ChangesRequested | S::GateFailed) {
                return Err(state_err());
            }
            author_only()?;
            Ok(S::Draft)
        }
        A::Approve | A::RequestChanges => {
            if f.state != S::Submitted {
                return Err(state_err());
            }
            if f.actor == f.author {
                return Err(ReviewError::SelfApproval);
            }
            if action == A::Approve && f.stale {
                return Err(ReviewError::Stale);
            }
            Ok(if action == A::Approve {
                S::Approved
            } else {
                S::ChangesRequested
            })
        }
        A::Withdraw => {
            if !matches!(
                f.state,
                S::Draft | S::Submitted | S::ChangesRequested | S::Approved | S::GateFailed
            ) {
                return Err(state_err());
            }
            author_only()?;
            Ok(S::Withdrawn)
        }
        A::StartGate => {
            if f.state != S::Approved {
                return Err(state_err());
            }
            if f.stale {
                return Err(ReviewError::Stale);
            }
            Ok(S::Gating)
        }
        A::Rollback => {
            if f.state != S::Active {
                return Err(state_err());
            }
            if !f.newest_active {
                return Err(ReviewError::NotNewest);
            }
            Ok(S::RolledBack)
        }
    }
}

/// The steps this person can take now (what the change page offers).
pub fn allowed(f: &Facts<'_>) -> Vec<ChangeAction> {
    ChangeAction::ALL.into_iter().filter(|a| check(*a, f).is_ok()).collect()
}

/// The gate's steps, in order (`restore` and `activate` only when needed).
pub const GATE_STEPS: &[&str] = &[
    "model", "vram", "serve", "health", "metrics", "smoke", "bench", "restore", "activate",
];
/// The bench checks `judge_bench` makes.
pub const GATE_CHECKS: &[&str] = &["failed", "ttft-p95", "tpot-p95", "output-throughput", "client"];
/// What a change's history records.
pub const EVENT_KINDS: &[&str] = &[
    "drafted",
    "submitted",
    "approved",
    "changes-requested",
    "withdrawn",
    "gate-started",
    "gate-passed",
    "gate-failed",
    "rolled-back",
    "commented",
];

/// The longest comment kept (a review note, not a document).
pub const MAX_COMMENT: usize = 4000;

/// What the gate's bench must meet before a candidate becomes active (host configuration
/// `[gate]`; the defaults are loose enough for any healthy engine and catch broken ones).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(default, deny_unknown_fields)]
pub struct GateThresholds {
    pub requests: usize,
    pub concurrency: usize,
    pub input_len: usize,
    pub output_len: u32,
    pub max_failed: u64,
    pub max_ttft_p95_ms: f64,
    pub max_tpot_p95_ms: f64,
    pub min_output_tok_s: f64,
}

impl Default for GateThresholds {
    fn default() -> Self {
        Self {
            requests: 32,
            concurrency: 8,
            input_len: 256,
            output_len: 64,
            max_failed: 0,
            max_ttft_p95_ms: 5_000.0,
            max_tpot_p95_ms: 200.0,
            min_output_tok_s: 1.0,
        }
    }
}

/// One threshold against its measured value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct GateCheck {
    /// `failed`, `ttft-p95`, `tpot-p95`, `output-throughput`, `client`.
    pub name: String,
    /// In English with units, for the journal.
    pub limit: String,
    pub value: String,
    pub pass: bool,
    /// The same as numbers, for the UI to word in its language: `ms`, `tok/s`, `count` or
    /// `flag` (1 = the client was overloaded); `at_most` says which way the limit points.
    #[serde(default)]
    pub measured: f64,
    #[serde(default)]
    pub threshold: f64,
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub at_most: bool,
}

/// The bench summary against the thresholds, every check listed (passing or not).
pub fn judge_bench(s: &super::bench::BenchSummary, t: &GateThresholds) -> Vec<GateCheck> {
    let check = |name: &str,
                 (measured, threshold, unit, at_most): (f64, f64, &str, bool),
                 limit: String,
                 value: String,
                 pass: bool| GateCheck {
        name: name.into(),
        limit,
        value,
        pass,
        measured,
        threshold,
        unit: unit.into(),
        at_most,
    };
    vec![
        check(
            "failed",
            (s.failed as f64, t.max_failed as f64, "count", true),
            format!("≤ {}", t.max_failed),
            s.failed.to_string(),
            s.failed <= t.max_failed && s.completed > 0,
        ),
        check(
            "ttft-p95",
            (s.ttft_ms.p95, t.max_ttft_p95_ms, "ms", true),
            format!("≤ {:.0} ms", t.max_ttft_p95_ms),
            format!("{:.1} ms", s.ttft_ms.p95),
            s.ttft_ms.p95 <= t.max_ttft_p95_ms,
        ),
        check(
            "tpot-p95",
            (s.tpot_ms.p95, t.max_tpot_p95_ms, "ms", true),
            format!("≤ {:.0} ms", t.max_tpot_p95_ms),
            format!("{:.1} ms", s.tpot_ms.p95),
            s.tpot_ms.p95 <= t.max_tpot_p95_ms,
        ),
        check(
            "output-throughput",
            (s.output_throughput, t.min_output_tok_s, "tok/s", false),
            format!("≥ {:.1} tok/s", t.min_output_tok_s),
            format!("{:.1} tok/s", s.output_throughput),
            s.output_throughput >= t.min_output_tok_s,
        ),
        // A client that fell behind measured itself, not the engine: not a pass.
        check(
            "client",
            (f64::from(u8::from(s.client_overloaded)), 0.0, "flag", true),
            "not overloaded".into(),
            if s.client_overloaded { "overloaded" } else { "ok" }.into(),
            !s.client_overloaded,
        ),
    ]
}

/// A check's measured value and its limit in the UI's words (`unit-*` message keys hold the
/// units; the client check is worded whole).
pub fn check_texts(
    c: &GateCheck,
    tr: impl Fn(&str) -> String,
    number: impl Fn(f64, usize) -> String,
) -> (String, String) {
    let num = |v: f64| match c.unit.as_str() {
        "count" => number(v, 0),
        "ms" | "tok/s" => format!("{} {}", number(v, 1), tr(&format!("unit-{}", c.unit.replace('/', "-")))),
        _ => String::new(),
    };
    if c.unit == "flag" {
        let value = if c.measured > 0.0 {
            "change-check-client-overloaded"
        } else {
            "change-check-client-ok"
        };
        return (tr(value), tr("change-check-client-limit"));
    }
    let sign = if c.at_most { "≤" } else { "≥" };
    (num(c.measured), format!("{sign} {}", num(c.threshold)))
}

/// One step of a gate run: serve the candidate, health, smoke-toolcall, bench, and (on
/// failure) restoring the previous profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct GateStep {
    /// `serve`, `health`, `smoke`, `bench`, `restore`.
    pub name: String,
    /// `None` while it runs.
    pub pass: Option<bool>,
    /// In English, for the journal; an engine's or the network's own error text as it came.
    pub detail: String,
    /// The message key for the UI (`change-gate-…`) with its arguments, when the outcome is
    /// one the console words itself; otherwise the UI shows `detail`.
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub args: Vec<(String, String)>,
}

/// The localisable outcomes a gate step can have (message keys `change-gate-{id}`).
pub const GATE_OUTCOMES: &[&str] = &[
    "serve-started",
    "serve-running",
    "health-ok",
    "smoke-ok",
    "smoke-failed",
    "bench-ok",
    "bench-failed",
    "restore-ok",
];

/// The gate's record on a change, updated as it runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct GateReport {
    pub steps: Vec<GateStep>,
    pub checks: Vec<GateCheck>,
    pub smoke_run: Option<i64>,
    pub bench_run: Option<i64>,
    /// `None` while the gate runs.
    pub passed: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChangeAction as A;
    use ChangeState as S;

    fn facts<'a>(state: ChangeState, actor: &'a str, role: Role) -> Facts<'a> {
        Facts {
            state,
            author: "alice",
            actor,
            role,
            stale: false,
            newest_active: true,
        }
    }

    #[test]
    fn second_person_approves() {
        assert_eq!(
            check(A::Approve, &facts(S::Submitted, "bob", Role::Approver)),
            Ok(S::Approved)
        );
        assert_eq!(
            check(A::RequestChanges, &facts(S::Submitted, "bob", Role::Admin)),
            Ok(S::ChangesRequested)
        );
    }

    #[test]
    fn self_approval_refused_even_for_admins() {
        assert_eq!(
            check(A::Approve, &facts(S::Submitted, "alice", Role::Admin)),
            Err(ReviewError::SelfApproval)
        );
    }

    #[test]
    fn operators_cannot_approve_and_viewers_cannot_propose() {
        assert!(matches!(
            check(A::Approve, &facts(S::Submitted, "bob", Role::Operator)),
            Err(ReviewError::Role { .. })
        ));
        assert!(matches!(
            check(A::Edit, &facts(S::Draft, "alice", Role::Viewer)),
            Err(ReviewError::Role { .. })
        ));
    }

    #[test]
    fn only_the_author_edits_and_withdraws() {
        assert!(matches!(
            check(A::Edit, &facts(S::ChangesRequested, "bob", Role::Approver)),
            Err(ReviewError::NotAuthor { .. })
        ));
        assert_eq!(
            check(A::Edit, &facts(S::ChangesRequested, "alice", Role::Operator)),
            Ok(S::Draft)
        );
        assert_eq!(
            check(A::Withdraw, &facts(S::Submitted, "root", Role::Admin)),
            Ok(S::Withdrawn)
        );
    }

    #[test]
    fn stale_changes_are_not_approved_or_gated() {
        let mut f = facts(S::Submitted, "bob", Role::Approver);
        f.stale = true;
        assert_eq!(check(A::Approve, &f), Err(ReviewError::Stale));
        f.state = S::Approved;
        assert_eq!(check(A::StartGate, &f), Err(ReviewError::Stale));
    }

    #[test]
    fn gate_and_rollback_follow_the_states() {
        assert_eq!(
            check(A::StartGate, &facts(S::Approved, "alice", Role::Operator)),
            Ok(S::Gating)
        );
        assert!(check(A::StartGate, &facts(S::Submitted, "alice", Role::Operator)).is_err());
        assert_eq!(
            check(A::Rollback, &facts(S::Active, "carol", Role::Operator)),
            Ok(S::RolledBack)
        );
        let mut f = facts(S::Active, "carol", Role::Operator);
        f.newest_active = false;
        assert_eq!(check(A::Rollback, &f), Err(ReviewError::NotNewest));
        assert!(check(A::Approve, &facts(S::Gating, "bob", Role::Approver)).is_err());
    }

    #[test]
    fn bench_thresholds_name_each_check() {
        let mut s = super::super::bench::BenchSummary {
            completed: 32,
            output_throughput: 500.0,
            ..Default::default()
        };
        s.ttft_ms.p95 = 120.0;
        s.tpot_ms.p95 = 12.0;
        let t = GateThresholds::default();
        assert!(judge_bench(&s, &t).iter().all(|c| c.pass));
        s.failed = 2;
        s.tpot_ms.p95 = 250.0;
        let failing: Vec<_> = judge_bench(&s, &t)
            .into_iter()
            .filter(|c| !c.pass)
            .map(|c| c.name)
            .collect();
        assert_eq!(failing, vec!["failed", "tpot-p95"]);
        s.completed = 0;
        s.failed = 0;
        assert!(!judge_bench(&s, &t)[0].pass, "nothing completed is not a pass");
    }

    #[test]
    fn checks_are_worded_with_the_uis_units() {
        let s = super::super::bench::BenchSummary {
            completed: 4,
            client_overloaded: true,
            ..Default::default()
        };
        let checks = judge_bench(&s, &GateThresholds::default());
        let tr = |k: &str| format!("<{k}>");
        let en = |v: f64, d: usize| crate::i18n::number(crate::i18n::Lang::En, v, d);
        let ru = |v: f64, d: usize| crate::i18n::number(crate::i18n::Lang::Ru, v, d);
        assert_eq!(
            check_texts(&checks[1], tr, en),
            ("0.0 <unit-ms>".into(), "≤ 5000.0 <unit-ms>".into())
        );
        assert_eq!(check_texts(&checks[3], tr, ru).1, "≥ 1,0 <unit-tok-s>");
        assert_eq!(check_texts(&checks[4], tr, en).0, "<change-check-client-overloaded>");
        assert!(!checks[4].pass);
    }

    #[test]
    fn allowed_lists_what_the_page_offers() {
        assert_eq!(
            allowed(&facts(S::Submitted, "bob", Role::Approver)),
            vec![A::Approve, A::RequestChanges]
        );
        assert_eq!(
            allowed(&facts(S::Submitted, "alice", Role::Operator)),
            vec![A::Edit, A::Withdraw]
        );
        assert!(allowed(&facts(S::Withdrawn, "alice", Role::Admin)).is_empty());
    }
}
