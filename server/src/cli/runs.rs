//! `roofline bench | smoke-toolcall`: the run sequences of `crate::runs` with terminal
//! progress, stored like the console's.

use super::checks::Target;
use super::{OK, PROBLEM, USAGE};
use crate::context::Context;
use crate::runs::Runs;
use app::domain::bench::{BenchParams, BenchProgress};

/// The run target: a profile's engine (so smoke gets its preflight) or a URL.
fn run_target(t: &Target, model: String) -> crate::runs::Target {
    match &t.profile {
        Some(r) => crate::runs::Target {
            model,
            ..crate::runs::Target::profile(r.clone())
        },
        None => crate::runs::Target::url(&t.base, &model),
    }
}

pub async fn bench(ctx: &Context, t: &Target, params: BenchParams, json: bool) -> i32 {
    use std::io::IsTerminal;
    let tty = std::io::stderr().is_terminal() && !json;
    let total = params.requests;
    let progress = move |p: BenchProgress| {
        let step = (p.total / 10).max(1);
        if tty || p.done.is_multiple_of(step) || p.done == p.total {
            let width = 30;
            let filled = p.done * width / p.total.max(1);
            let label = if p.warmup { "warm-up" } else { "bench" };
            let end = if tty { "\r" } else { "\n" };
            eprint!(
                "{label} [{}{}] {}/{} failed {}{end}",
                "#".repeat(filled),
                " ".repeat(width - filled),
                p.done,
                p.total,
                p.failed
            );
        }
    };
    let target = run_target(t, params.model.clone());
    let run = match Runs::new(ctx.clone()).bench(&target, &params, progress).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return USAGE;
        }
    };
    if tty {
        eprintln!();
    }
    if json {
        println!(
            "{}",
            serde_json::json!({"id": run.id.as_ref().ok(), "params": params, "engine_version": run.engine_version, "summary": run.summary})
        );
    } else {
        print!(
            "{}",
            app::domain::bench::format_table(&run.summary, params.concurrency, Some(params.rate))
        );
        if let Some(e) = &run.summary.first_error {
            println!("first error: {e}");
        }
        match &run.id {
            Ok(id) => println!("stored as bench run {id} (total {total} requests)"),
            Err(e) => eprintln!("could not store the result: {e}"),
        }
    }
    if run.clean() {
        OK
    } else {
        PROBLEM
    }
}

pub async fn smoke(
    ctx: &Context,
    url: Option<String>,
    profile: Option<String>,
    model: Option<String>,
    json: bool,
) -> i32 {
    let (t, model) = match super::checks::target_with_model(ctx, "smoke-toolcall", url, profile, model).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let target = run_target(&t, model);
    let run = Runs::new(ctx.clone())
        .smoke(&target, |c| {
            if !json {
                let verdict = if c.skipped {
                    "SKIP"
                } else if c.pass {
                    "PASS"
                } else {
                    "FAIL"
                };
                println!("{verdict:<5} {}", c.case);
                for f in &c.failures {
                    println!("      {}: {}", f.check, f.detail);
                }
            }
        })
        .await;
    let report = &run.report;
    if json {
        println!(
            "{}",
            serde_json::json!({"id": run.id.as_ref().ok(), "passed": report.passed(), "report": report})
        );
    } else {
        let failed = report.cases.iter().filter(|c| !c.pass && !c.skipped).count();
        println!(
            "{}: {} of {} cases failed",
            if report.passed() { "PASS" } else { "FAIL" },
            failed,
            report.cases.len()
        );
        if let Ok(id) = run.id {
            println!("stored as smoke run {id} (raw answers kept)");
        }
    }
    if report.passed() {
        OK
    } else {
        PROBLEM
    }
}
