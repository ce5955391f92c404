//! An incident as the console keeps it: the evidence captured first, the diagnosis, a
//! timeline of every observation, action and note, and the postmortem with the runbook's
//! fields, exported as Markdown in either language.

use crate::domain::series::Point;
use crate::domain::triage::{Action, Diagnosis, Evidence, Reading, Rule, Step};
use crate::i18n::{tr, tr_args, Lang};
use serde::{Deserialize, Serialize};

/// What happened on an incident's timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Entry {
    /// Opened from the console, the CLI or an alert.
    Opened {
        source: String,
    },
    /// A triage step and what it found.
    Step {
        step: Step,
        readings: Vec<Reading>,
    },
    /// The diagnosis (the first finding's row), or none.
    Diagnosis {
        rule: Option<Rule>,
        after_upgrade: bool,
    },
    /// An action started by an operator, with the reason they gave.
    Action {
        action: Action,
        reason: String,
    },
    /// How the action ended.
    Outcome {
        action: String,
        ok: bool,
        detail: String,
    },
    /// Health and metrics again after an action.
    Recheck {
        rule: Option<Rule>,
        state: String,
    },
    /// An alert firing or resolving for this engine.
    Alert {
        name: String,
        status: String,
    },
    Note {
        text: String,
    },
    Resolved,
}

/// One timeline row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct TimelineEntry {
    pub at: String,
    pub who: String,
    pub entry: Entry,
}

/// The runbook's postmortem fields that people write; timeline and metrics come from the
/// incident itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(default)]
pub struct Postmortem {
    pub symptom: String,
    pub root_cause: String,
    pub what_changed: String,
    pub catch_earlier: String,
    #[serde(default)]
    pub fin: bool,
}

/// An incident with everything the wizard and the postmortem show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Incident {
    pub id: i64,
    pub profile: String,
    pub opened_at: String,
    pub opened_by: String,
    pub resolved: bool,
    pub evidence: Evidence,
    pub diagnosis: Diagnosis,
    /// Evidence and diagnosis after the last action, when there was one.
    pub latest: Option<(Evidence, Diagnosis)>,
    pub timeline: Vec<TimelineEntry>,
    pub postmortem: Postmortem,
}

/// A row of the incident list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct IncidentSummary {
    pub id: i64,
    pub profile: String,
    pub opened_at: String,
    pub opened_by: String,
    pub resolved: bool,
    pub rule: Option<Rule>,
}

/// The actions an incident offers now: those of its diagnosis and of the latest re-check,
/// smoke-toolcall after an upgrade, a restart to apply a profile changed during the incident,
/// and stop. Otherwise restart only where a runbook row allows it (operating rule 3). The
/// console offers exactly these and refuses any other.
pub fn offered_actions(inc: &Incident) -> Vec<Action> {
    let current = inc.latest.as_ref().map(|(_, d)| d).unwrap_or(&inc.diagnosis);
    let mut out: Vec<Action> = Vec::new();
    let mut offer = |a: &Action| {
        if !out.contains(a) {
            out.push(a.clone());
        }
    };
    if current.after_upgrade {
        offer(&Action::Smoke);
    }
    for f in current.findings.iter().chain(&inc.diagnosis.findings) {
        f.actions.iter().for_each(&mut offer);
    }
    let profile_changed = inc
        .timeline
        .iter()
        .any(|e| matches!(&e.entry, Entry::Outcome { action, ok: true, .. } if action == "edit-profile"));
    if profile_changed {
        offer(&Action::Restart);
    }
    offer(&Action::Stop);
    out
}

/// A reading in the operator's language.
pub fn reading_text(lang: Lang, r: &Reading) -> String {
    r.text(lang)
}

/// An action's label (`action-edit-profile` carries the suggested change).
pub fn action_text(lang: Lang, a: &Action) -> String {
    match a {
        Action::EditProfile { key, value } => tr_args(
            lang,
            "incident-action-edit-profile",
            &[("change", format!("{key}={value}").into())],
        ),
        other => tr(lang, &format!("incident-action-{}", other.id())),
    }
}

/// A timeline entry in words.
pub fn entry_text(lang: Lang, e: &Entry) -> String {
    let rule = |r: &Option<Rule>| match r {
        Some(r) => tr(lang, &format!("rule-{}-diagnosis", r.id())),
        None => tr(lang, "incident-no-finding"),
    };
    match e {
        Entry::Opened { source } => tr_args(lang, "timeline-opened", &[("source", source.clone().into())]),
        Entry::Step { step, readings } => {
            let found: Vec<String> = readings.iter().map(|r| reading_text(lang, r)).collect();
            format!("{}: {}", tr(lang, &format!("step-{}", step.id())), found.join("; "))
        }
        Entry::Diagnosis { rule: r, after_upgrade } => {
            let mut t = tr_args(lang, "timeline-diagnosis", &[("diagnosis", rule(r).into())]);
            if *after_upgrade {
                t.push_str(&format!(" ({})", tr(lang, "incident-after-upgrade")));
            }
            t
        }
        Entry::Action { action, reason } => tr_args(
            lang,
            "timeline-action",
            &[
                ("action", action_text(lang, action).into()),
                ("reason", reason.clone().into()),
            ],
        ),
        Entry::Outcome { action, ok, detail } => tr_args(
            lang,
            if *ok {
                "timeline-outcome-ok"
            } else {
                "timeline-outcome-failed"
            },
            &[("action", action.clone().into()), ("detail", detail.clone().into())],
        ),
        Entry::Recheck { rule: r, state } => tr_args(
            lang,
            "timeline-recheck",
            &[
                ("state", tr(lang, &format!("state-{state}")).into()),
                ("diagnosis", rule(r).into()),
            ],
        ),
        Entry::Alert { name, status } => tr_args(
            lang,
            "timeline-alert",
            &[("name", name.clone().into()), ("status", status.clone().into())],
        ),
        Entry::Note { text } => text.clone(),
        Entry::Resolved => tr(lang, "timeline-resolved"),
    }
}

/// Key figures of a metric window, for "metrics before and after".
pub fn window_summary(lang: Lang, points: &[Point]) -> String {
    let last = |f: fn(&Point) -> Option<f64>| points.iter().rev().find_map(f);
    let fmt = |v: Option<f64>, unit: &str| v.map(|v| format!("{v:.0}{unit}")).unwrap_or_else(|| "—".into());
    let ms = |v: Option<f64>| {
        v.map(|v| crate::i18n::with_unit(lang, "value-ms", v, 0))
            .unwrap_or_else(|| "—".into())
    };
    tr_args(
        lang,
        "postmortem-window",
        &[
            ("waiting", fmt(last(|p| p.live.waiting), "").into()),
            ("kv", fmt(last(|p| p.live.kv_usage.map(|k| k * 100.0)), "%").into()),
            ("ttft", ms(last(|p| p.live.ttft_p95_ms)).into()),
            ("tpot", ms(last(|p| p.live.itl_p95_ms)).into()),
            (
                "preemptions",
                fmt(last(|p| p.live.rates.preemptions_per_s), "/s").into(),
            ),
        ],
    )
}

/// The postmortem as Markdown, in `lang`, with the runbook's fields.
/// One alert of an Alertmanager webhook, as far as incidents care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlertEvent {
    /// The profile it names (label `profile`, else `engine`), a valid profile name.
    pub profile: String,
    /// `alertname`, at most 200 characters.
    pub name: String,
    pub firing: bool,
}

/// The alerts of an Alertmanager webhook payload (untrusted: at most 100 alerts, names
/// bounded, alerts without a valid profile name skipped).
pub fn alerts_of(payload: &serde_json::Value) -> Vec<AlertEvent> {
    let Some(alerts) = payload.get("alerts").and_then(|a| a.as_array()) else {
        return Vec::new();
    };
    alerts
        .iter()
        .take(100)
        .filter_map(|a| {
            let labels = a.get("labels")?;
            let profile = labels
                .get("profile")
                .and_then(|p| p.as_str())
                .or_else(|| labels.get("engine").and_then(|e| e.as_str()))
                .filter(|p| super::profile::valid_name(p))?;
            let name = labels
                .get("alertname")
                .and_then(|n| n.as_str())
                .unwrap_or("alert")
                .chars()
                .take(200)
                .collect();
            Some(AlertEvent {
                profile: profile.to_string(),
                name,
                firing: a.get("status").and_then(|s| s.as_str()) != Some("resolved"),
            })
        })
        .collect()
}

/// Text from operators, alerts and engine logs, made literal for Markdown: the characters
/// that open Markdown constructs (links and images `[ ] !`, HTML and autolinks `< >`,
/// emphasis and code ``* _ ` ~``, headings `#`, tables `|`, the escape itself) are
/// backslash-escaped (CommonMark renders `\x` as `x`), so a note cannot become a link, an
/// image that fetches from outside, HTML or a heading, and the file stays readable as text.
/// Single-line contexts fold newlines into spaces.
pub fn md_escape(text: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '\n' if keep_newlines => out.push('\n'),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '!' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

pub fn postmortem_markdown(lang: Lang, inc: &Incident) -> String {
    let t = |k: &str| tr(lang, k);
    let mut md = String::new();
    md.push_str(&format!(
        "# {}\n\n",
        tr_args(
            lang,
            "postmortem-heading",
            &[
                ("id", inc.id.to_string().into()),
                ("profile", inc.profile.clone().into())
            ]
        )
    ));
    md.push_str(&format!(
        "{}: {} · {}: {}\n\n",
        t("incident-opened"),
        inc.opened_at,
        t("postmortem-status"),
        if inc.postmortem.fin {
            t("postmortem-final")
        } else {
            t("postmortem-draft")
        }
    ));
    let field = |md: &mut String, key: &str, text: &str| {
        md.push_str(&format!("## {}\n\n", t(key)));
        if text.trim().is_empty() {
            md.push('—');
        } else {
            md.push_str(&md_escape(text.trim(), true));
        }
        md.push_str("\n\n");
    };
    field(&mut md, "postmortem-symptom", &inc.postmortem.symptom);
    md.push_str(&format!("## {}\n\n", t("postmortem-timeline")));
    for e in &inc.timeline {
        md.push_str(&format!(
            "- {} · {} · {}\n",
            md_escape(&e.at, false),
            md_escape(&e.who, false),
            md_escape(&entry_text(lang, &e.entry), false)
        ));
    }
    md.push('\n');
    md.push_str(&format!("## {}\n\n", t("postmortem-metrics")));
    md.push_str(&format!(
        "- {}: {}\n",
        t("postmortem-before"),
        window_summary(lang, &inc.evidence.points)
    ));
    let after = inc.latest.as_ref().map(|(e, _)| window_summary(lang, &e.points));
    md.push_str(&format!(
        "- {}: {}\n\n",
        t("postmortem-after"),
        after.unwrap_or_else(|| "—".into())
    ));
    if let Some(f) = inc.diagnosis.primary() {
        md.push_str(&format!("## {}\n\n", t("incident-diagnosis")));
        md.push_str(&format!("**{}**\n\n", t(&format!("rule-{}-diagnosis", f.rule.id()))));
        for r in &f.evidence {
            md.push_str(&format!("- {}\n", md_escape(&reading_text(lang, r), false)));
        }
        md.push('\n');
    }
    field(&mut md, "postmortem-root-cause", &inc.postmortem.root_cause);
    field(&mut md, "postmortem-what-changed", &inc.postmortem.what_changed);
    if !inc.evidence.recent_changes.is_empty() {
        for c in &inc.evidence.recent_changes {
            md.push_str(&format!("- {}\n", md_escape(&c.what, false)));
        }
        md.push('\n');
    }
    field(&mut md, "postmortem-catch-earlier", &inc.postmortem.catch_earlier);
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::triage::diagnose;

    fn incident() -> Incident {
        let ev = Evidence {
            profile: "qwen".into(),
            health_status: None,
            ..Default::default()
        };
        let diagnosis = diagnose(&ev);
        Incident {
            id: 7,
            profile: "qwen".into(),
            opened_at: "2026-12-02T03:00:00Z".into(),
            opened_by: "cli".into(),
            resolved: false,
            evidence: ev,
            diagnosis,
            latest: None,
            timeline: vec![
                TimelineEntry {
                    at: "2026-12-02T03:00:00Z".into(),
                    who: "ops".into(),
                    entry: Entry::Opened { source: "cli".into() },
                },
                TimelineEntry {
                    at: "2026-12-02T03:01:00Z".into(),
                    who: "ops".into(),
                    entry: Entry::Action {
                        action: Action::Restart,
                        reason: "process dead".into(),
                    },
                },
            ],
            postmortem: Postmortem {
                symptom: "Clients got connection refused".into(),
                ..Default::default()
            },
        }
    }

    /// Issue 11: notes, alert names, log lines and the postmortem fields went into the
    /// Markdown as they were: a note could be a link, an image fetched from outside, or HTML.
    #[test]
    fn markdown_export_makes_user_text_literal() {
        let mut inc = incident();
        inc.timeline.push(TimelineEntry {
            at: "2026-12-02T03:02:00Z".into(),
            who: "alertmanager".into(),
            entry: Entry::Note {
                text: "![x](http://evil.example/p.png) <script>alert(1)</script>\n# not a heading".into(),
            },
        });
        inc.postmortem.root_cause = "[click](http://evil.example)\n<img src=x onerror=y>".into();
        let md = postmortem_markdown(Lang::En, &inc);
        // Unescaped: an occurrence not preceded by a backslash.
        let unescaped = |raw: &str| md.match_indices(raw).any(|(i, _)| !md[..i].ends_with('\\'));
        for raw in ["![x](", "<script>", "[click](", "<img", "\n# not a heading"] {
            assert!(!unescaped(raw), "{raw:?} left as Markdown/HTML in:\n{md}");
        }
        assert!(md.contains("\\!\\[x\\](http"), "{md}");
        assert!(md.contains("\\<script\\>"), "{md}");
        // Still readable: ordinary punctuation stays as it is, and the root cause keeps its lines.
        assert!(md.contains("http://evil.example"), "{md}");
        assert_eq!(md_escape("a\nb", true), "a\nb");
        assert_eq!(md_escape("a\nb", false), "a b");
    }

    #[test]
    fn markdown_has_every_runbook_field_in_both_languages() {
        let inc = incident();
        for lang in [Lang::En, Lang::Ru] {
            let md = postmortem_markdown(lang, &inc);
            for key in [
                "postmortem-symptom",
                "postmortem-timeline",
                "postmortem-metrics",
                "postmortem-root-cause",
                "postmortem-what-changed",
                "postmortem-catch-earlier",
            ] {
                assert!(md.contains(&format!("## {}", tr(lang, key))), "{lang:?} {key}\n{md}");
            }
            assert!(md.contains("Clients got connection refused"));
            assert!(md.contains("process dead"), "the action's reason is on the timeline");
            assert!(!md.contains("???"), "no missing keys:\n{md}");
        }
        assert!(postmortem_markdown(Lang::Ru, &inc).contains("Таймлайн"));
    }
}
