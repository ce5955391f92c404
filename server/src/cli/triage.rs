//! `roofline triage`: the incident runbook from a terminal. With `--profile` it captures the
//! evidence, walks the triage and records the incident (the console shows it too); with
//! `--log FILE` it runs the investigator on a log alone.

use crate::context::Context;
use crate::incidents::Incidents;
use app::domain::incident::{action_text, reading_text};
use app::domain::logscan::investigate;
use app::i18n::{tr, tr_args, Lang};

const OK: i32 = 0;
const PROBLEM: i32 = 1;
const USAGE: i32 = 2;

pub async fn triage(
    ctx: Context,
    profile: &str,
    clients_see_errors: bool,
    window: std::time::Duration,
    json: bool,
    lang: Lang,
) -> i32 {
    let incidents = Incidents::new(ctx, None, None).with_window(window);
    let (id, ev, d) = match incidents
        .open(profile, &super::cli_actor(), "cli", clients_see_errors)
        .await
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return match e {
                crate::incidents::IncidentServiceError::Control(crate::control::ControlError::NoSuchProfile(_)) => {
                    USAGE
                }
                _ => PROBLEM,
            };
        }
    };
    if json {
        println!(
            "{}",
            serde_json::json!({"incident": id, "diagnosis": d, "evidence": ev})
        );
    } else {
        println!(
            "{}",
            tr_args(
                lang,
                "incident-title",
                &[("id", id.into()), ("profile", profile.into())]
            )
        );
        for s in &d.steps {
            println!("\n[{}]", tr(lang, &format!("step-{}", s.step.id())));
            if s.readings.is_empty() {
                println!("  {}", tr(lang, "step-nothing"));
            }
            for r in &s.readings {
                println!("  {}", reading_text(lang, r));
            }
        }
        println!();
        match d.primary() {
            None => println!("{}", tr(lang, "incident-no-finding")),
            Some(f) => {
                println!(
                    "{}: {}",
                    tr(lang, "incident-diagnosis"),
                    tr(lang, &format!("rule-{}-diagnosis", f.rule.id()))
                );
                for r in &f.evidence {
                    println!("  - {}", reading_text(lang, r));
                }
                println!(
                    "{}: {}",
                    tr(lang, "incident-action-col"),
                    tr(lang, &format!("rule-{}-action", f.rule.id()))
                );
                for a in &f.actions {
                    println!("  > {}", action_text(lang, a));
                }
                for other in d.findings.iter().skip(1) {
                    println!(
                        "{}: {}",
                        tr(lang, "incident-also"),
                        tr(lang, &format!("rule-{}-diagnosis", other.rule.id()))
                    );
                }
            }
        }
        if d.after_upgrade {
            println!("\n{}", tr(lang, "incident-after-upgrade-note"));
        }
    }
    if d.primary().is_some() {
        PROBLEM
    } else {
        OK
    }
}

pub fn triage_log(path: &std::path::Path, json: bool, lang: Lang) -> i32 {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("--log {}: {e}", path.display());
            return USAGE;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let inv = investigate(&text, false);
    let id = inv.row.map(|r| r.id()).unwrap_or("healthy");
    let diagnosis = inv.row.map(|r| tr(lang, &format!("rule-{}-diagnosis", r.id())));
    let action = inv.row.map(|r| tr(lang, &format!("rule-{}-action", r.id())));
    if json {
        println!(
            "{}",
            serde_json::json!({
                "verdict": id,
                "row": inv.row,
                "diagnosis": diagnosis,
                "action": action,
                "investigation": inv,
            })
        );
    } else {
        let verdict = diagnosis.unwrap_or_else(|| tr(lang, "investigator-no-row"));
        println!("{}", tr_args(lang, "incident-verdict", &[("verdict", verdict.into())]));
        for h in &inv.evidence {
            println!("  {}: {}", h.line, h.text);
        }
        if let Some(a) = action {
            println!("{}", tr_args(lang, "investigator-action", &[("action", a.into())]));
        }
    }
    if inv.row.is_none() {
        OK
    } else {
        PROBLEM
    }
}
