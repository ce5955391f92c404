//! `roofline health | metrics | gpu | flags`: read-only checks of an engine (by profile or
//! URL) and of this host's GPUs.

use super::{code_of, OK, PROBLEM, USAGE};
use crate::context::Context;
use crate::control::Resolved;
use crate::engine::{Engine, HealthCheck};
use std::time::Duration;

/// Where a check goes: `--url` as given, or the profile's address and served model name.
pub struct Target {
    pub base: String,
    pub model: Option<String>,
    pub profile: Option<Resolved>,
}

pub async fn target(ctx: &Context, cmd: &str, url: Option<String>, profile: Option<String>) -> Result<Target, i32> {
    match (url, profile) {
        (Some(u), _) => Ok(Target {
            base: u.trim_end_matches('/').to_string(),
            model: None,
            profile: None,
        }),
        (None, Some(p)) => match ctx.control.resolve(&p).await {
            Ok(r) => Ok(Target {
                base: r.base_url(),
                model: Some(r.profile.model_name().to_string()),
                profile: Some(r),
            }),
            Err(e) => {
                eprintln!("{e}");
                Err(code_of(&e))
            }
        },
        (None, None) => {
            eprintln!("{cmd}: give --url URL or --profile NAME (or INFER_URL / INFER_PROFILE)");
            Err(USAGE)
        }
    }
}

/// The target and the model name to ask for: `--model`, else the profile's served name, else
/// the first model the server lists.
pub async fn target_with_model(
    ctx: &Context,
    cmd: &str,
    url: Option<String>,
    profile: Option<String>,
    model: Option<String>,
) -> Result<(Target, String), i32> {
    let t = target(ctx, cmd, url, profile).await?;
    let model = match model.or(t.model.clone()) {
        Some(m) => m,
        None => Engine::at(&t.base).served_model().await.ok_or_else(|| {
            eprintln!("{cmd}: {} lists no model; give --model", t.base);
            PROBLEM
        })?,
    };
    Ok((t, model))
}

pub async fn health(ctx: &Context, url: Option<String>, profile: Option<String>, json: bool) -> i32 {
    let (base, model) = match target(ctx, "health", url, profile).await {
        Ok(t) => (t.base, t.model),
        Err(code) => return code,
    };
    let HealthCheck {
        health_code,
        health_ms,
        completion,
        completion_ms,
    } = Engine::at(&base).health_check(model).await;
    let ok = health_code == 200 && completion.is_ok();
    if json {
        println!(
            "{}",
            serde_json::json!({"url": base, "health": health_code, "health_ms": health_ms, "completion": completion.as_ref().map_or_else(ToString::to_string, |_| "ok".to_string()), "completion_ms": completion_ms, "ok": ok})
        );
    } else {
        let shown = if health_code == 0 {
            "000".to_string()
        } else {
            health_code.to_string()
        };
        println!("/health {shown} ({health_ms:.0} ms)");
        match &completion {
            Ok(()) => println!("completion OK ({completion_ms:.0} ms)"),
            Err(e) => println!("completion FAIL: {e}"),
        }
    }
    if ok {
        OK
    } else {
        PROBLEM
    }
}

pub async fn metrics(ctx: &Context, url: Option<String>, profile: Option<String>, window: f64, json: bool) -> i32 {
    if !(window > 0.0 && window <= 600.0) {
        eprintln!("metrics: --window must be in (0, 600] seconds");
        return USAGE;
    }
    let t = match target(ctx, "metrics", url, profile).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    let engine = Engine::at(&t.base);
    let first = engine.scrape().await;
    tokio::time::sleep(Duration::from_secs_f64(window)).await;
    let second = engine.scrape().await;
    let ((a, _), (b, bad_lines)) = match (first, second) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return PROBLEM;
        }
    };
    let live = app::domain::signals::live(&a, &b, window);
    if json {
        println!(
            "{}",
            serde_json::json!({"url": t.base, "live": live, "skipped_lines": bad_lines, "hung": live.looks_hung()})
        );
        return if live.looks_hung() { PROBLEM } else { OK };
    }
    let f = |v: Option<f64>, unit: &str| v.map(|v| format!("{v:.1}{unit}")).unwrap_or_else(|| "n/a".into());
    let pct = |v: Option<f64>| v.map(|v| format!("{:.1}%", v * 100.0)).unwrap_or_else(|| "n/a".into());
    println!("{} over {window:.0} s", t.base);
    println!(
        "  running {}   waiting {}   KV cache {}",
        f(live.running, ""),
        f(live.waiting, ""),
        pct(live.kv_usage)
    );
    println!(
        "  preemptions {}   prefix-cache hit rate {}   prompt {}   generation {}",
        f(live.rates.preemptions_per_s, "/s"),
        pct(live.rates.prefix_hit_rate),
        f(live.rates.prompt_tokens_per_s, " tok/s"),
        f(live.rates.generation_tokens_per_s, " tok/s")
    );
    println!(
        "  TTFT p50/p95/p99 {} / {} / {}",
        f(live.ttft_p50_ms, " ms"),
        f(live.ttft_p95_ms, " ms"),
        f(live.ttft_p99_ms, " ms")
    );
    println!(
        "  ITL  p50/p95/p99 {} / {} / {}",
        f(live.itl_p50_ms, " ms"),
        f(live.itl_p95_ms, " ms"),
        f(live.itl_p99_ms, " ms")
    );
    println!(
        "  E2E p95 {}   queue p95 {}",
        f(live.e2e_p95_ms, " ms"),
        f(live.queue_p95_ms, " ms")
    );
    if bad_lines > 0 {
        println!("  ({bad_lines} unparseable lines skipped)");
    }
    if live.looks_hung() {
        println!("  HUNG: requests queued but no tokens generated in the window");
        return PROBLEM;
    }
    OK
}

pub async fn gpu(ctx: &Context, json: bool) -> i32 {
    let mut state = crate::gpu::read().await;
    let engines: Vec<(i32, String)> = ctx
        .control
        .statuses()
        .await
        .into_iter()
        .filter_map(|e| e.pid.map(|p| (p, e.profile)))
        .collect();
    app::domain::gpu::mark_owners(&mut state, &engines, crate::gpu::process_group);
    let foreign = app::domain::gpu::foreign(&state).len();
    if json {
        println!("{}", serde_json::json!({"gpu": state, "foreign_processes": foreign}));
    } else {
        match &state {
            app::domain::gpu::GpuState::NoDriver { reason } => println!("{reason}"),
            app::domain::gpu::GpuState::Available { driver, cuda, gpus, .. } => {
                println!(
                    "driver {}, CUDA {}",
                    driver.as_deref().unwrap_or("?"),
                    cuda.as_deref().unwrap_or("?")
                );
                let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
                let opt = |v: Option<String>| v.unwrap_or_else(|| "n/a".into());
                for g in gpus {
                    println!(
                        "GPU {} {}: memory {:.1}/{:.1} GiB, util {}, {} , power {} / {}, SM {}{}",
                        g.index,
                        g.name,
                        gib(g.memory_used_bytes),
                        gib(g.memory_total_bytes),
                        opt(g.utilization_pct.map(|u| format!("{u}%"))),
                        opt(g.temperature_c.map(|t| format!("{t} C"))),
                        opt(g.power_w.map(|w| format!("{w:.0} W"))),
                        opt(g.power_limit_w.map(|w| format!("{w:.0} W"))),
                        opt(g.sm_clock_mhz.map(|c| format!("{c} MHz"))),
                        if g.throttle.is_empty() {
                            String::new()
                        } else {
                            format!(", throttled: {}", g.throttle.join(", "))
                        }
                    );
                    for p in &g.processes {
                        let mem = p
                            .used_bytes
                            .map(|b| format!("{:.1} GiB", gib(b)))
                            .unwrap_or_else(|| "?".into());
                        match &p.profile {
                            Some(profile) => println!("    pid {:>7} {mem:>10}  engine {profile}", p.pid),
                            None => println!(
                                "    pid {:>7} {mem:>10}  FOREIGN {}",
                                p.pid,
                                crate::control::procfs::comm(p.pid).unwrap_or_default()
                            ),
                        }
                    }
                }
            }
        }
    }
    match state {
        app::domain::gpu::GpuState::NoDriver { .. } => PROBLEM,
        _ if foreign > 0 => PROBLEM,
        _ => OK,
    }
}

pub async fn flags(ctx: &Context, profile: &str, query: Option<String>, json: bool) -> i32 {
    let (report, installed) = match ctx.control.check_flags(profile).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return match e {
                crate::control::flags::FlagsError::Control(c) => code_of(&c),
                _ => PROBLEM,
            };
        }
    };
    if let Some(q) = query {
        let flag = if q.starts_with('-') {
            q.clone()
        } else {
            format!("--{q}")
        };
        let found = installed.flags.find(&flag);
        if json {
            println!(
                "{}",
                serde_json::json!({"flag": flag, "version": installed.version, "supported": found.is_some(), "details": found,
                "suggestion": if found.is_none() { app::domain::profile::closest(&flag, installed.flags.long_names()) } else { None }})
            );
        } else {
            match found {
                Some(f) => {
                    println!(
                        "{} {}: supported by {} {}",
                        f.names.join(", "),
                        f.metavar.clone().unwrap_or_default(),
                        installed.install,
                        installed.version
                    );
                    if let Some(g) = &f.group {
                        println!("  group: {g}");
                    }
                    if let Some(d) = &f.default {
                        println!("  default: {d}");
                    }
                    if f.deprecated {
                        println!("  DEPRECATED");
                    }
                    println!("  {}", f.help);
                }
                None => {
                    println!("{flag}: not supported by {} {}", installed.install, installed.version);
                    if let Some(s) = app::domain::profile::closest(&flag, installed.flags.long_names()) {
                        println!("  closest known flag: {s}");
                    }
                }
            }
        }
        return if found.is_some() { OK } else { PROBLEM };
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        println!(
            "{}: {} flags known to {} {}",
            report.profile, report.known, report.install, report.version
        );
        for u in &report.unknown {
            match &u.suggestion {
                Some(s) => println!("  UNKNOWN {} (closest: {s})", u.flag),
                None => println!("  UNKNOWN {}", u.flag),
            }
        }
        for b in &report.bad_values {
            match &b.suggestion {
                Some(s) => println!(
                    "  BAD VALUE {} {} (closest: {s}; allowed: {})",
                    b.flag,
                    b.value,
                    b.choices.join(", ")
                ),
                None => println!("  BAD VALUE {} {} (allowed: {})", b.flag, b.value, b.choices.join(", ")),
            }
        }
    }
    if report.unknown.is_empty() && report.bad_values.is_empty() {
        OK
    } else {
        PROBLEM
    }
}
