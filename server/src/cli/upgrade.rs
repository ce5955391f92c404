//! `roofline upgrade-check --profile P --to INSTALLATION`: what the profile meets on the new
//! installation, before a change is proposed. Exit 1 when something would stop the start.

use crate::context::Context;
use crate::control::flags::FlagsError;
use app::domain::upgrade::Finding;

/// One finding as a line of text.
pub fn describe(f: &Finding) -> String {
    let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "None".into());
    match f {
        Finding::Removed { flag, suggestion } => match suggestion {
            Some(s) => format!("{flag}: removed in the new version (closest flag: {s})"),
            None => format!("{flag}: removed in the new version"),
        },
        Finding::Renamed { flag, to } => format!("{flag}: renamed to {to}"),
        Finding::Retyped { flag, from, to } => format!("{flag}: was {from}, now {to}"),
        Finding::ValueGone {
            flag,
            value,
            suggestion,
        } => match suggestion {
            Some(s) => format!("{flag} {value}: no longer a choice (closest: {s})"),
            None => format!("{flag} {value}: no longer a choice"),
        },
        Finding::Deprecated { flag, help } => format!("{flag}: deprecated: {help}"),
        Finding::DefaultChanged { flag, from, to } => format!(
            "{flag}: left to the engine, whose default moves from {} to {}",
            or_none(from),
            or_none(to)
        ),
    }
}

pub async fn run(ctx: &Context, profile: &str, to: &str, json: bool) -> i32 {
    let check = match ctx.control.upgrade_check(profile, to).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return match e {
                FlagsError::Control(c) => super::code_of(&c),
                _ => 1,
            };
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&check).unwrap_or_default());
    } else {
        println!(
            "upgrade-check {}: {} ({}) -> {} ({})",
            check.profile, check.from_install, check.from_version, check.to_install, check.to_version
        );
        println!("  {} flags of the profile compared", check.flags.checked);
        for f in &check.flags.findings {
            let tag = if f.blocks() { "BLOCKS" } else { "WARN  " };
            println!("  {tag}  {}", describe(f));
        }
        if !check.flags.other_defaults.is_empty() {
            let n = check.flags.other_defaults.len() + check.flags.other_defaults_left_out;
            println!("  defaults moved on {n} flags this profile does not use (--json lists them)");
        }
        match &check.metrics {
            None => println!("  metrics: not checked yet; the change's gate scrapes the candidate"),
            Some(m) if m.missing.is_empty() => println!(
                "  metrics: the gate of change {} found every signal the console reads",
                m.change
            ),
            Some(m) => {
                for s in &m.missing {
                    println!(
                        "  {}  metrics: no {} signal (the console reads {})",
                        if s.core { "BLOCKS" } else { "WARN  " },
                        s.signal,
                        s.names.join(" or ")
                    );
                }
            }
        }
        let blocking = check.blocking();
        if blocking == 0 {
            println!("verdict: nothing stops the start; propose the change and let the gate run");
        } else {
            println!("verdict: {blocking} findings stop the start; fix the profile before proposing the change");
        }
    }
    if check.blocking() > 0 {
        1
    } else {
        0
    }
}
