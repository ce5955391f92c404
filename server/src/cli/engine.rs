//! `roofline serve | stop | restart | logs | status`: engine control from the shell, with
//! progress, the startup-failure row on a failed start, and a journal entry for each action.

use super::{cli_actor, code_of, lang, OK, PROBLEM, USAGE};
use crate::context::Context;
use crate::control::{ControlError, ServeOutcome, StopOutcome};
use app::i18n::{tr, Lang};
use std::io::Write;
use std::time::Duration;

fn print_failure(lang: Lang, e: &ControlError) {
    eprintln!("{e}");
    let (failure, lines) = match e {
        ControlError::StartupFailed {
            failure, last_lines, ..
        } => (failure.as_ref(), last_lines),
        ControlError::Timeout { last_lines, .. } => (None, last_lines),
        _ => return,
    };
    eprintln!("--- last log lines ---");
    for l in lines {
        eprintln!("{l}");
    }
    eprintln!("----------------------");
    match failure {
        Some(f) => {
            let id = f.row.id();
            eprintln!(
                "{}: {}",
                tr(lang, "failure-symptom"),
                tr(lang, &format!("startup-failure-{id}-symptom"))
            );
            eprintln!(
                "{}: {}",
                tr(lang, "failure-cause"),
                tr(lang, &format!("startup-failure-{id}-cause"))
            );
            eprintln!(
                "{}: {}",
                tr(lang, "failure-action"),
                tr(lang, &format!("startup-failure-{id}-action"))
            );
        }
        None => eprintln!("{}", tr(lang, "startup-failure-none")),
    }
}

/// Records a CLI engine action in the change journal, with its outcome, what the action found
/// (a stop's processes and its proof of stop, a serve's preflight) and the context.
pub async fn journal_action_with(
    ctx: &Context,
    kind: &str,
    profile: &str,
    reason: &str,
    code: i32,
    mut detail: serde_json::Value,
) {
    if code == USAGE {
        return;
    }
    detail["ok"] = (code == OK).into();
    ctx.record(&cli_actor(), kind, profile, reason, detail).await;
}

/// The checks before a start (`preflight`): `Ok` with what the journal records when the start
/// may go ahead, `Err` with the exit code and the journal's detail when it is refused.
pub async fn preflight(
    ctx: &Context,
    profile: &str,
    skip: bool,
    json: bool,
) -> Result<serde_json::Value, (i32, serde_json::Value)> {
    if skip {
        return Ok(serde_json::json!({"preflight": "skipped (--no-preflight)"}));
    }
    // An engine that already runs is not started again: nothing to check.
    if ctx.control.is_running(profile) {
        return Ok(serde_json::json!({}));
    }
    let found = crate::preflight::check(ctx, profile).await;
    for s in &found.skipped {
        tracing::info!(profile, "preflight check not made: {s}");
    }
    if found.refusals.is_empty() {
        return Ok(serde_json::json!({"preflight": "passed", "preflight_skipped": found.skipped}));
    }
    if json {
        println!(
            "{}",
            serde_json::json!({"profile": profile, "result": "refused", "preflight": found.refusals})
        );
    } else {
        eprintln!("{profile}: not started: the preflight knows this start would fail");
        for r in &found.refusals {
            eprintln!("  {r}");
        }
        eprintln!("(fix the profile, or `roofline serve --no-preflight` to start anyway)");
    }
    Err((PROBLEM, serde_json::json!({"preflight": found.refusals})))
}

pub async fn serve(ctx: &Context, profile: &str, json: bool) -> i32 {
    let lang = lang();
    let tty = !json;
    let mut last_phase = None;
    let mut stall_told = false;
    let result = crate::engines::serve(ctx, profile, |p| {
        if let (true, false, Some(st)) = (tty, stall_told, p.stall) {
            stall_told = true;
            let _ = writeln!(
                std::io::stderr(),
                "[{:>5.1}s] {}",
                p.elapsed.as_secs_f64(),
                app::i18n::tr_args(
                    lang,
                    "ev-stalled-phase",
                    &[
                        ("phase", st.phase.as_str().into()),
                        ("elapsed", format!("{:.0}", st.elapsed_s).into()),
                        ("median", format!("{:.1}", st.median_s).into()),
                        ("starts", (st.starts as i64).into()),
                    ]
                )
            );
        }
        if tty && last_phase != Some(p.phase) {
            last_phase = Some(p.phase);
            let _ = writeln!(
                std::io::stderr(),
                "[{:>5.1}s] {}",
                p.elapsed.as_secs_f64(),
                tr(lang, &format!("phase-{}", p.phase.as_str()))
            );
        }
    })
    .await;
    match result {
        Ok(outcome) => {
            let (what, pid) = match outcome {
                ServeOutcome::Started { pid } => {
                    // Calibration and the pinned set, as the console's monitor records them
                    // (once per start: the monitor may see the same start).
                    let recorded = crate::monitor::on_healthy_start(ctx, profile).await;
                    if let Err(e) = recorded.pinned {
                        eprintln!("the known-good set is not recorded: {e}");
                    }
                    ("started", pid)
                }
                ServeOutcome::AlreadyRunning { pid } => ("already-running", pid),
            };
            if json {
                println!(
                    "{}",
                    serde_json::json!({"profile": profile, "result": what, "pid": pid})
                );
            } else {
                println!("{profile}: {what} (pid {pid}), healthy");
            }
            OK
        }
        Err((e, incident)) => {
            if let (Some(id), false) = (incident, json) {
                eprintln!("opened incident #{id}");
            }
            if json {
                let failure = match &e {
                    ControlError::StartupFailed {
                        failure, last_lines, ..
                    } => {
                        serde_json::json!({"row": failure.as_ref().map(|f| f.row.id()), "line": failure.as_ref().map(|f| f.line.clone()), "last_lines": last_lines})
                    }
                    _ => serde_json::Value::Null,
                };
                println!(
                    "{}",
                    serde_json::json!({"profile": profile, "result": "error", "error": e.to_string(), "failure": failure})
                );
            } else {
                print_failure(lang, &e);
            }
            code_of(&e)
        }
    }
}

/// Stops a profile's engine; the exit code and what the journal entry records (the processes
/// found and ended, and whether the GPUs let go of them).
pub async fn stop(ctx: &Context, profile: &str, json: bool) -> (i32, serde_json::Value) {
    // Cut off from the shared database the profile cannot be read: what runs under the name
    // (its record in the state directory) is stopped all the same.
    let known_here =
        crate::db::away() && app::domain::profile::valid_name(profile) && ctx.control.running(profile).is_some();
    if let Err(e) = ctx
        .control
        .resolve(profile)
        .await
        .map(drop)
        .or_else(|e| if known_here { Ok(()) } else { Err(e) })
    {
        eprintln!("{e}");
        return (code_of(&e), serde_json::json!({"error": e.to_string()}));
    }
    match ctx.control.stop(profile).await {
        Ok(StopOutcome::Stopped {
            pid,
            killed,
            leader_gone,
            processes,
            gpu,
        }) => {
            let ended: Vec<serde_json::Value> = processes
                .iter()
                .map(|p| serde_json::json!({"pid": p.pid, "name": p.name}))
                .collect();
            let detail = serde_json::json!({
                "outcome": "stopped", "pid": pid, "killed": killed, "leader_gone": leader_gone,
                "processes": ended, "gpu": gpu, "proof_of_stop": gpu.to_string(),
            });
            if json {
                let mut out = detail.clone();
                out["profile"] = profile.into();
                out["result"] = "stopped".into();
                println!("{out}");
            } else {
                let names: Vec<String> = processes.iter().map(|p| format!("{} {}", p.pid, p.name)).collect();
                println!(
                    "{profile}: stopped (pid {pid}{}{}); ended {} process(es): {}; {gpu}",
                    if leader_gone {
                        ", which had already exited: its survivors were stopped"
                    } else {
                        ""
                    },
                    if killed { ", SIGKILL after the grace period" } else { "" },
                    processes.len(),
                    if names.is_empty() {
                        "-".to_string()
                    } else {
                        names.join(", ")
                    },
                );
            }
            // Memory a stopped engine's processes still hold is not a clean stop.
            let code = if matches!(gpu, crate::control::GpuRelease::StillHeld { .. }) {
                PROBLEM
            } else {
                OK
            };
            (code, detail)
        }
        Ok(StopOutcome::NotRunning) => {
            if json {
                println!("{}", serde_json::json!({"profile": profile, "result": "not-running"}));
            } else {
                println!("{profile}: not running");
            }
            (OK, serde_json::json!({"outcome": "not-running"}))
        }
        Err(e) => {
            eprintln!("{e}");
            (code_of(&e), serde_json::json!({"error": e.to_string()}))
        }
    }
}

pub async fn logs(ctx: &Context, profile: &str, lines: usize, follow: bool) -> i32 {
    let path = ctx.control.log_path(profile);
    // Cut off from the shared database: the log this host keeps under the name.
    let known_here = crate::db::away() && app::domain::profile::valid_name(profile) && path.is_file();
    if let Err(e) = ctx.control.resolve(profile).await {
        if !known_here {
            eprintln!("{e}");
            return code_of(&e);
        }
    }
    let tail = match crate::control::logs::tail(&path, lines) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return PROBLEM;
        }
    };
    let mut out = std::io::stdout().lock();
    for l in tail {
        let _ = writeln!(out, "{l}");
    }
    drop(out);
    if follow {
        let mut offset = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            if let Ok((new, next, _)) = crate::control::logs::read_since(&path, offset) {
                offset = next;
                let mut out = std::io::stdout().lock();
                for l in new {
                    if writeln!(out, "{l}").is_err() {
                        return OK;
                    }
                }
            }
        }
    }
    OK
}

pub async fn status(ctx: &Context, json: bool) -> i32 {
    let mut rows = ctx.control.statuses().await;
    ctx.control.apply_verdicts(&mut rows);
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
        return OK;
    }
    println!(
        "{:<24} {:<10} {:<16} {:<22} {:>8}",
        "PROFILE", "STATE", "ENGINE", "ADDRESS", "PID"
    );
    for r in rows {
        let engine = if r.simulated {
            format!("{} (sim)", r.engine)
        } else {
            r.engine.clone()
        };
        println!(
            "{:<24} {:<10} {:<16} {:<22} {:>8}",
            r.profile,
            r.state.as_str(),
            engine,
            format!("{}:{}", r.host, r.port),
            r.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into())
        );
    }
    OK
}
