//! The `roofline` command line: the toolbox's tasks (`serve`, `stop`, `restart`, `logs`,
//! `health`, `flags`, `profile …`) and `console`. Exit codes: 0 ok, 1 the check found a
//! problem, 2 bad usage or input (the message names it).

use crate::config::DataDir;
use crate::control::{ControlError, EngineControl, ServeOutcome, StopOutcome};
use app::domain::profile::{Profile, Severity};
use app::i18n::{tr, tr_args, Lang};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "roofline",
    version,
    about = "Roofline Console: operate vLLM and SGLang engines by runbook"
)]
struct Cli {
    /// Data directory (host config, SQLite database, engine state).
    #[arg(long, global = true, env = "ROOFLINE_DATA", default_value = ".roofline")]
    data: PathBuf,
    /// Machine-readable output.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the web console.
    Console {
        #[arg(long)]
        addr: Option<std::net::SocketAddr>,
        /// On an empty data dir, create the demo fleet (two simulated engines) and start it.
        #[arg(long)]
        demo: bool,
    },
    /// Start a profile's engine and wait until it is healthy (idempotent).
    Serve {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// Why: recorded in the change journal.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Stop a profile's engine (SIGTERM, SIGKILL after the grace period).
    Stop {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// Why: recorded in the change journal.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Stop, then serve.
    Restart {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// Why: recorded in the change journal.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Print the engine log.
    Logs {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        #[arg(long, default_value_t = 200)]
        lines: usize,
        #[arg(long)]
        follow: bool,
    },
    /// `/health` and a one-token completion.
    Health {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Every engine and its state.
    Status,
    /// GPU memory, utilisation, temperature, power, clocks, throttling, and which processes
    /// are our engines and which are foreign.
    Gpu,
    /// Queue, KV cache, preemptions, prefix-cache hit rate, throughput and latency
    /// percentiles from two scrapes of `/metrics` a window apart.
    Metrics {
        #[command(flatten)]
        target: TargetArgs,
        /// Seconds between the two scrapes.
        #[arg(long, default_value_t = 5.0)]
        window: f64,
    },
    /// Serving benchmark with `vllm bench serve`'s definitions; results kept for comparison.
    Bench {
        #[command(flatten)]
        target: TargetArgs,
        /// Model name (default: the profile's served name, or the server's first model).
        #[arg(long)]
        model: Option<String>,
        /// chat or completions.
        #[arg(long, default_value = "completions")]
        endpoint: app::domain::bench::Endpoint,
        /// Maximum requests in flight.
        #[arg(long)]
        concurrency: Option<usize>,
        /// Requests per second (default: all at once, "inf").
        #[arg(long, default_value = "inf")]
        rate: f64,
        /// Gamma shape of the gaps: 1 is Poisson, below 1 burstier.
        #[arg(long, default_value_t = 1.0)]
        burstiness: f64,
        #[arg(long, default_value_t = 100)]
        requests: usize,
        #[arg(long, default_value_t = 512)]
        input_len: usize,
        #[arg(long, default_value_t = 128)]
        output_len: u32,
        #[arg(long, default_value_t = 0)]
        warmup: usize,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// SLOs for goodput, in ms: ttft:MS,tpot:MS,e2el:MS.
        #[arg(long)]
        goodput: Option<String>,
    },
    /// Tool calling end to end through the engine's parser and chat template.
    #[command(name = "smoke-toolcall")]
    SmokeToolcall {
        #[command(flatten)]
        target: TargetArgs,
        #[arg(long)]
        model: Option<String>,
    },
    /// Profile flags against the installed engine's own --help.
    Flags {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// Ask whether and how the installed version supports one flag.
        #[arg(long, allow_hyphen_values = true)]
        query: Option<String>,
    },
    /// The incident runbook: capture evidence, triage health → metrics → gpu → logs, match
    /// every runbook row, record the incident. `--log FILE` classifies a log file alone.
    Triage {
        #[arg(long, env = "INFER_PROFILE", conflicts_with = "log")]
        profile: Option<String>,
        /// Run the investigator on this log file only.
        #[arg(long)]
        log: Option<std::path::PathBuf>,
        /// Clients see errors although the engine looks healthy (the proxy/parser row).
        #[arg(long)]
        clients_see_errors: bool,
        /// Seconds of metrics to scrape for the window (three scrapes).
        #[arg(long, default_value_t = 10.0)]
        window: f64,
    },
    /// Will the model fit: weights per GPU, KV bytes per token, KV token capacity, maximum
    /// concurrency at the context, the longest context, and a verdict with the arithmetic.
    /// With --profile, also compares with the engine's logged KV cache size.
    Vram(crate::vram::VramArgs),
    /// The change journal: list entries, or verify the hash chain.
    Journal {
        #[command(subcommand)]
        command: JournalCommand,
    },
    /// Launch profiles.
    Profile {
        #[command(subcommand)]
        command: ProfileCommand,
    },
    /// Console accounts: add, list, change role, disable, reset a password.
    User {
        #[command(subcommand)]
        command: crate::auth::cli::UserCommand,
    },
}

#[derive(Subcommand, Debug)]
enum JournalCommand {
    /// Newest first.
    List {
        #[arg(long)]
        profile: Option<String>,
        /// Matches subject, kind, who, reason or detail.
        #[arg(long)]
        query: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
    /// Walk the hash chain; exit 1 at the first entry that does not hold.
    Verify,
}

#[derive(Subcommand, Debug)]
enum ProfileCommand {
    List,
    Show {
        name: String,
    },
    /// Import `profiles/<name>.env` (the name comes from the file name unless --name is given).
    Import {
        file: PathBuf,
        #[arg(long)]
        name: Option<String>,
    },
    /// Write a profile as KEY=VALUE (to stdout, or --out FILE).
    Export {
        name: String,
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Where a check goes: an engine (or a proxy) by URL, or a profile's engine.
#[derive(clap::Args, Debug)]
struct TargetArgs {
    #[arg(long, env = "INFER_URL", conflicts_with = "profile")]
    url: Option<String>,
    #[arg(long, env = "INFER_PROFILE")]
    profile: Option<String>,
}

/// Exit codes.
const OK: i32 = 0;
const PROBLEM: i32 = 1;
const USAGE: i32 = 2;

/// Reads `./inference.env` (INFER_URL, INFER_PROFILE) into the environment where unset, as
/// the toolbox did.
fn load_inference_env() {
    let Ok(text) = std::fs::read_to_string("inference.env") else {
        return;
    };
    match app::domain::envfile::parse(&text) {
        Ok(items) => {
            for a in items {
                if (a.key == "INFER_URL" || a.key == "INFER_PROFILE") && std::env::var_os(&a.key).is_none() {
                    // SAFETY: single-threaded at this point; no other thread reads the environment.
                    unsafe { std::env::set_var(&a.key, &a.value) };
                }
            }
        }
        Err(e) => eprintln!("inference.env: {e}"),
    }
}

pub fn main() -> i32 {
    load_inference_env();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { USAGE } else { OK };
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,sqlx=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    // Server-side rendering of the larger pages nests deeply in debug builds; tokio's default
    // 2 MiB worker stacks overflowed on the incident wizard.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(16 << 20)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return PROBLEM;
        }
    };
    rt.block_on(run(cli))
}

async fn open(data: &std::path::Path) -> Result<EngineControl, i32> {
    let data = DataDir::open(data).map_err(|e| {
        eprintln!("{e:#}");
        USAGE
    })?;
    let pool = crate::db::open(&data.db_path()).await.map_err(|e| {
        eprintln!("{e:#}");
        PROBLEM
    })?;
    Ok(EngineControl::new(data, crate::db::ProfileStore::new(pool)))
}

fn lang() -> Lang {
    Lang::from_env_vars(|k| std::env::var(k).ok())
}

async fn run(cli: Cli) -> i32 {
    if let Command::Triage { log: Some(path), .. } = &cli.command {
        return crate::incidents::cli::triage_log(path, cli.json, lang());
    }
    if let Command::Console { demo: true, .. } = &cli.command {
        match crate::demo::init(&cli.data).await {
            Ok(true) => println!("Created the demo fleet in {}", cli.data.display()),
            Ok(false) => {}
            Err(e) => {
                eprintln!("{e:#}");
                return PROBLEM;
            }
        }
    }
    let control = match open(&cli.data).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let json = cli.json;
    match cli.command {
        Command::Console { addr, .. } => console(control, addr).await,
        Command::Serve { profile, reason } => {
            let code = serve(&control, &profile, json).await;
            journal_action(&control, "serve", &profile, &reason, code).await;
            code
        }
        Command::Stop { profile, reason } => {
            let code = stop(&control, &profile, json).await;
            journal_action(&control, "stop", &profile, &reason, code).await;
            code
        }
        Command::Restart { profile, reason } => {
            let mut code = stop(&control, &profile, json).await;
            if code == OK {
                code = serve(&control, &profile, json).await;
            }
            journal_action(&control, "restart", &profile, &reason, code).await;
            code
        }
        Command::Logs { profile, lines, follow } => logs(&control, &profile, lines, follow).await,
        Command::Health {
            target: TargetArgs { url, profile },
        } => health(&control, url, profile, json).await,
        Command::Status => status(&control, json).await,
        Command::Gpu => gpu(&control, json).await,
        Command::Vram(args) => crate::vram::run(&control, args, json).await,
        Command::Triage {
            profile,
            clients_see_errors,
            window,
            ..
        } => match profile {
            Some(_) if !(0.5..=600.0).contains(&window) => {
                eprintln!("triage: --window {window} must be between 0.5 and 600 seconds");
                USAGE
            }
            Some(p) => {
                let window = Duration::from_secs_f64(window);
                crate::incidents::cli::triage(control, &p, clients_see_errors, window, json, lang()).await
            }
            None => {
                eprintln!("triage: give --profile NAME (or INFER_PROFILE) or --log FILE");
                USAGE
            }
        },
        Command::Metrics {
            target: TargetArgs { url, profile },
            window,
        } => metrics(&control, url, profile, window, json).await,
        Command::Bench {
            target: TargetArgs { url, profile },
            model,
            endpoint,
            concurrency,
            rate,
            burstiness,
            requests,
            input_len,
            output_len,
            warmup,
            seed,
            goodput,
        } => {
            let goodput = match goodput
                .as_deref()
                .map(str::parse::<app::domain::bench::Slo>)
                .transpose()
            {
                Ok(g) => g,
                Err(e) => {
                    eprintln!("{e}");
                    return USAGE;
                }
            };
            let (t, model) = match target_with_model(&control, "bench", url, profile, model).await {
                Ok(r) => r,
                Err(code) => return code,
            };
            let params = app::domain::bench::BenchParams {
                url: t.base.clone(),
                model,
                endpoint,
                requests,
                concurrency,
                rate,
                burstiness,
                input_len,
                output_len,
                warmup,
                seed,
                goodput,
            };
            bench(&control, &t, params, json).await
        }
        Command::SmokeToolcall {
            target: TargetArgs { url, profile },
            model,
        } => smoke(&control, url, profile, model, json).await,
        Command::Flags { profile, query } => flags(&control, &profile, query, json).await,
        Command::Profile { command } => profile_cmd(&control, command, json).await,
        Command::Journal { command } => journal_cmd(&control, command, json).await,
        Command::User { command } => {
            let accounts = crate::auth::Accounts::new(control.store.pool());
            crate::auth::cli::run(&accounts, &control.journal(), command, json).await
        }
    }
}

async fn journal_cmd(control: &EngineControl, command: JournalCommand, json: bool) -> i32 {
    let journal = control.journal();
    match command {
        JournalCommand::List { profile, query, limit } => {
            match journal
                .list(profile.as_deref(), query.as_deref(), limit.clamp(1, 10_000))
                .await
            {
                Ok(entries) if json => {
                    println!("{}", serde_json::to_string(&entries).unwrap_or_default());
                    OK
                }
                Ok(entries) => {
                    for e in entries {
                        println!(
                            "#{} {} {} {} {} {} {}",
                            e.seq,
                            e.at,
                            e.who,
                            e.kind,
                            e.subject,
                            if e.reason.is_empty() {
                                "(no reason given)".to_string()
                            } else {
                                format!("\"{}\"", e.reason)
                            },
                            e.detail
                        );
                    }
                    OK
                }
                Err(e) => {
                    eprintln!("{e}");
                    PROBLEM
                }
            }
        }
        JournalCommand::Verify => match journal.verify().await {
            Ok(v) => {
                if json {
                    println!("{}", serde_json::json!(v));
                }
                match v.broken {
                    None => {
                        if !json {
                            println!("journal intact: {} entries, hash chain verified", v.entries);
                        }
                        OK
                    }
                    Some((seq, why)) => {
                        if !json {
                            println!(
                                "journal BROKEN at entry #{seq}: {why} ({} entries before it hold)",
                                v.entries
                            );
                        }
                        PROBLEM
                    }
                }
            }
            Err(e) => {
                eprintln!("{e}");
                PROBLEM
            }
        },
    }
}

async fn console(control: EngineControl, addr: Option<std::net::SocketAddr>) -> i32 {
    let addr = addr.unwrap_or(control.data.config.listen);
    // Autostart serves a profile the first time this host sees it (the demo fleet); after
    // that the operator's last action stands: a stopped engine stays stopped.
    for name in control.data.config.autostart.clone() {
        if control.dir(&name).exists() {
            continue;
        }
        let c = control.clone();
        tokio::spawn(async move {
            let ok = match c.serve(&name, |_| {}).await {
                Ok(o) => {
                    tracing::info!(profile = %name, outcome = ?o, "autostart");
                    true
                }
                Err(e) => {
                    tracing::warn!(profile = %name, error = %e, "autostart failed");
                    false
                }
            };
            let detail = crate::journal::context(&c, &name, serde_json::json!({"ok": ok})).await;
            c.journal()
                .record(
                    "console",
                    "serve",
                    &name,
                    "autostart on first sight (host configuration)",
                    detail,
                )
                .await;
        });
    }
    match crate::web::serve(control, addr).await {
        Ok(()) => OK,
        Err(e) => {
            eprintln!("{e:#}");
            USAGE
        }
    }
}

fn code_of(e: &ControlError) -> i32 {
    match e {
        ControlError::NoSuchProfile(_) | ControlError::NoSuchEngine { .. } | ControlError::ModelPath { .. } => USAGE,
        _ => PROBLEM,
    }
}

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

/// Who the CLI records in the journal.
pub fn cli_actor() -> String {
    format!("{}@cli", std::env::var("USER").unwrap_or_else(|_| "operator".into()))
}

/// Records a CLI engine action in the change journal, with its outcome and context.
async fn journal_action(control: &EngineControl, kind: &str, profile: &str, reason: &str, code: i32) {
    if code == USAGE {
        return;
    }
    let detail = crate::journal::context(control, profile, serde_json::json!({"ok": code == OK})).await;
    control
        .journal()
        .record(&cli_actor(), kind, profile, reason, detail)
        .await;
}

async fn serve(control: &EngineControl, profile: &str, json: bool) -> i32 {
    let lang = lang();
    let tty = !json;
    let mut last_phase = None;
    let result = control
        .serve(profile, |p| {
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
                ServeOutcome::Started { pid } => ("started", pid),
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
        Err(e) => {
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

async fn stop(control: &EngineControl, profile: &str, json: bool) -> i32 {
    if let Err(e) = control.resolve(profile).await {
        eprintln!("{e}");
        return code_of(&e);
    }
    match control.stop(profile).await {
        Ok(StopOutcome::Stopped { pid, killed }) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"profile": profile, "result": "stopped", "pid": pid, "killed": killed})
                );
            } else {
                println!(
                    "{profile}: stopped (pid {pid}{})",
                    if killed { ", SIGKILL after the grace period" } else { "" }
                );
            }
            OK
        }
        Ok(StopOutcome::NotRunning) => {
            if json {
                println!("{}", serde_json::json!({"profile": profile, "result": "not-running"}));
            } else {
                println!("{profile}: not running");
            }
            OK
        }
        Err(e) => {
            eprintln!("{e}");
            code_of(&e)
        }
    }
}

async fn logs(control: &EngineControl, profile: &str, lines: usize, follow: bool) -> i32 {
    if let Err(e) = control.resolve(profile).await {
        eprintln!("{e}");
        return code_of(&e);
    }
    let path = control.log_path(profile);
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

/// Where a check goes: `--url` as given, or the profile's address and served model name.
struct Target {
    base: String,
    model: Option<String>,
    profile: Option<String>,
}

async fn target(
    control: &EngineControl,
    cmd: &str,
    url: Option<String>,
    profile: Option<String>,
) -> Result<Target, i32> {
    match (url, profile) {
        (Some(u), _) => Ok(Target {
            base: u.trim_end_matches('/').to_string(),
            model: None,
            profile: None,
        }),
        (None, Some(p)) => match control.resolve(&p).await {
            Ok((prof, kind, _, _)) => {
                let port = prof.port.unwrap_or(kind.default_port());
                Ok(Target {
                    base: crate::control::base_url(&prof.host, port),
                    model: Some(prof.model_name().to_string()),
                    profile: Some(p),
                })
            }
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
async fn target_with_model(
    control: &EngineControl,
    cmd: &str,
    url: Option<String>,
    profile: Option<String>,
    model: Option<String>,
) -> Result<(Target, String), i32> {
    let t = target(control, cmd, url, profile).await?;
    let model = match model.or(t.model.clone()) {
        Some(m) => m,
        None => served_model(&t.base).await.ok_or_else(|| {
            eprintln!("{cmd}: {} lists no model; give --model", t.base);
            PROBLEM
        })?,
    };
    Ok((t, model))
}

/// The first model the server lists, for `--url` targets without `--model`.
async fn served_model(base: &str) -> Option<String> {
    let client = reqwest::Client::builder().no_proxy().build().ok()?;
    crate::collect::served_model(&client, base).await
}

/// The engine's version: vLLM's `/version`, SGLang's `/server_info`.
pub async fn engine_version(base: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    for path in ["/version", "/server_info"] {
        if let Ok(r) = client.get(format!("{base}{path}")).send().await {
            if let Ok(v) = r.json::<serde_json::Value>().await {
                if let Some(ver) = v.get("version").and_then(|x| x.as_str()) {
                    return Some(ver.to_string());
                }
            }
        }
    }
    None
}

/// `/health` and a one-token completion, as `roofline health` and the change gate run them.
pub struct HealthCheck {
    pub health_code: u16,
    pub health_ms: f64,
    pub completion: Result<(), String>,
    pub completion_ms: f64,
}

impl HealthCheck {
    pub fn ok(&self) -> bool {
        self.health_code == 200 && self.completion.is_ok()
    }
}

pub async fn health_check(base: &str, model: Option<String>) -> HealthCheck {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("static client");
    let t0 = std::time::Instant::now();
    let health = client
        .get(format!("{base}/health"))
        .timeout(Duration::from_secs(10))
        .send()
        .await;
    let health_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let health_code = health.as_ref().map(|r| r.status().as_u16()).unwrap_or(0);
    let model = match model {
        Some(m) => Some(m),
        None => served_model(base).await,
    };
    let t1 = std::time::Instant::now();
    let completion = match &model {
        Some(m) if health_code == 200 => {
            let body = serde_json::json!({"model": m, "prompt": "ping", "max_tokens": 1, "temperature": 0});
            match client.post(format!("{base}/v1/completions")).json(&body).send().await {
                Ok(r) if r.status().is_success() => Ok(()),
                Ok(r) => Err(format!("HTTP {}", r.status().as_u16())),
                Err(e) if e.is_timeout() => Err("no answer within 30 s".to_string()),
                Err(e) => Err(e.to_string()),
            }
        }
        Some(_) => Err("skipped: /health failed".into()),
        None => Err("no model name (give --profile or fix /v1/models)".into()),
    };
    let completion_ms = t1.elapsed().as_secs_f64() * 1000.0;
    HealthCheck {
        health_code,
        health_ms,
        completion,
        completion_ms,
    }
}

async fn health(control: &EngineControl, url: Option<String>, profile: Option<String>, json: bool) -> i32 {
    let (base, model) = match target(control, "health", url, profile).await {
        Ok(t) => (t.base, t.model),
        Err(code) => return code,
    };
    let HealthCheck {
        health_code,
        health_ms,
        completion,
        completion_ms,
    } = health_check(&base, model).await;
    let ok = health_code == 200 && completion.is_ok();
    if json {
        println!(
            "{}",
            serde_json::json!({"url": base, "health": health_code, "health_ms": health_ms, "completion": completion.as_ref().map(|_| "ok").unwrap_or_else(|e| e.as_str()), "completion_ms": completion_ms, "ok": ok})
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

async fn bench(control: &EngineControl, t: &Target, params: app::domain::bench::BenchParams, json: bool) -> i32 {
    use std::io::IsTerminal;
    let tty = std::io::stderr().is_terminal() && !json;
    let total = params.requests;
    let progress = move |p: app::domain::bench::BenchProgress| {
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
    let version = engine_version(&t.base).await;
    let (summary, _records) = match crate::bench::run(&params, progress).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return USAGE;
        }
    };
    if tty {
        eprintln!();
    }
    let runs = crate::db::RunStore::new(control.store.pool());
    let stored = runs
        .add_bench(t.profile.as_deref(), version.as_deref(), &params, &summary)
        .await;
    if json {
        println!(
            "{}",
            serde_json::json!({"id": stored.as_ref().ok(), "params": params, "engine_version": version, "summary": summary})
        );
    } else {
        print!(
            "{}",
            app::domain::bench::format_table(&summary, params.concurrency, Some(params.rate))
        );
        if let Some(e) = &summary.first_error {
            println!("first error: {e}");
        }
        match stored {
            Ok(id) => println!("stored as bench run {id} (total {total} requests)"),
            Err(e) => eprintln!("could not store the result: {e}"),
        }
    }
    if summary.failed > 0 || summary.client_overloaded {
        PROBLEM
    } else {
        OK
    }
}

async fn smoke(
    control: &EngineControl,
    url: Option<String>,
    profile: Option<String>,
    model: Option<String>,
    json: bool,
) -> i32 {
    let (t, model) = match target_with_model(control, "smoke-toolcall", url, profile, model).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let preflight = match &t.profile {
        Some(p) => {
            let (prof, kind, _, argv) = match control.resolve(p).await {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{e}");
                    return code_of(&e);
                }
            };
            let installed = match control.data.engine(&prof.engine) {
                Some(install) => control
                    .installed_flags(&prof.engine, install)
                    .await
                    .ok()
                    .map(|f| f.flags),
                None => None,
            };
            Some(crate::smoke::preflight(kind, &argv, installed.as_ref()))
        }
        None => None,
    };
    let report = crate::smoke::run(&t.base, &model, preflight, |c| {
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
    let runs = crate::db::RunStore::new(control.store.pool());
    let stored = runs.add_smoke(t.profile.as_deref(), &report).await;
    if json {
        println!(
            "{}",
            serde_json::json!({"id": stored.as_ref().ok(), "passed": report.passed(), "report": report})
        );
    } else {
        let failed = report.cases.iter().filter(|c| !c.pass && !c.skipped).count();
        println!(
            "{}: {} of {} cases failed",
            if report.passed() { "PASS" } else { "FAIL" },
            failed,
            report.cases.len()
        );
        if let Ok(id) = stored {
            println!("stored as smoke run {id} (raw answers kept)");
        }
    }
    if report.passed() {
        OK
    } else {
        PROBLEM
    }
}

async fn metrics(
    control: &EngineControl,
    url: Option<String>,
    profile: Option<String>,
    window: f64,
    json: bool,
) -> i32 {
    if !(window > 0.0 && window <= 600.0) {
        eprintln!("metrics: --window must be in (0, 600] seconds");
        return USAGE;
    }
    let t = match target(control, "metrics", url, profile).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    let http = reqwest::Client::builder().no_proxy().build().expect("static client");
    let first = crate::collect::scrape(&http, &t.base).await;
    tokio::time::sleep(Duration::from_secs_f64(window)).await;
    let second = crate::collect::scrape(&http, &t.base).await;
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

async fn gpu(control: &EngineControl, json: bool) -> i32 {
    let mut state = tokio::task::spawn_blocking(|| crate::gpu::source().read())
        .await
        .unwrap_or_else(|e| app::domain::gpu::GpuState::NoDriver { reason: e.to_string() });
    let engines: Vec<(i32, String)> = crate::supervisor::snapshot(control)
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
            app::domain::gpu::GpuState::Available { driver, cuda, gpus } => {
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

async fn status(control: &EngineControl, json: bool) -> i32 {
    let rows = crate::supervisor::snapshot(control).await;
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

async fn flags(control: &EngineControl, profile: &str, query: Option<String>, json: bool) -> i32 {
    let (report, installed) = match control.check_flags(profile).await {
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

async fn profile_cmd(control: &EngineControl, command: ProfileCommand, json: bool) -> i32 {
    let lang = lang();
    match command {
        ProfileCommand::List => match control.store.list().await {
            Ok(rows) => {
                if json {
                    let v: Vec<_> = rows.iter().map(|r| serde_json::json!({"name": r.profile.name, "engine": r.profile.engine, "model": r.profile.model, "updated_at": r.updated_at})).collect();
                    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
                } else {
                    for r in rows {
                        println!("{:<24} {:<16} {}", r.profile.name, r.profile.engine, r.profile.model);
                    }
                }
                OK
            }
            Err(e) => {
                eprintln!("{e}");
                PROBLEM
            }
        },
        ProfileCommand::Show { name } => match control.resolve(&name).await {
            Ok((p, _, _, argv)) => {
                if json {
                    println!("{}", serde_json::json!({"profile": p, "argv": argv}));
                } else {
                    print!("{}", p.to_env());
                    println!("# command: {}", app::domain::flagmap::display_argv(&argv));
                }
                OK
            }
            Err(e) => {
                eprintln!("{e}");
                code_of(&e)
            }
        },
        ProfileCommand::Import { file, name } => {
            let name = name
                .or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .unwrap_or_default();
            let text = match std::fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("{}: {e}", file.display());
                    return USAGE;
                }
            };
            let (profile, warnings) = match Profile::from_env(&name, &text) {
                Ok(ok) => ok,
                Err(issues) => {
                    for i in &issues {
                        eprintln!("{}", describe_issue(lang, &file, i));
                    }
                    return USAGE;
                }
            };
            if control.data.engine(&profile.engine).is_none() {
                let line = text
                    .lines()
                    .position(|l| l.trim_start().starts_with("ENGINE"))
                    .map(|l| l + 1);
                let issue = app::domain::profile::Issue {
                    field: "ENGINE".into(),
                    line,
                    severity: Severity::Error,
                    kind: app::domain::profile::IssueKind::UnknownEngine {
                        value: profile.engine.clone(),
                    },
                };
                eprintln!("{}", describe_issue(lang, &file, &issue));
                return USAGE;
            }
            for w in &warnings {
                eprintln!("{}", describe_issue(lang, &file, w));
            }
            let before = control
                .store
                .get(&name)
                .await
                .ok()
                .flatten()
                .map(|s| s.profile.to_env());
            match control.store.upsert(&profile).await {
                Ok(new) => {
                    println!("{} {name}", if new { "imported" } else { "updated" });
                    let diff = crate::journal::env_diff(before.as_deref().unwrap_or(""), &profile.to_env());
                    if !diff.is_empty() {
                        control
                            .journal()
                            .record(
                                &cli_actor(),
                                if new { "profile-import" } else { "profile-change" },
                                &name,
                                &format!("imported from {}", file.display()),
                                serde_json::json!({"diff": diff}),
                            )
                            .await;
                    }
                    OK
                }
                Err(e) => {
                    eprintln!("{e}");
                    PROBLEM
                }
            }
        }
        ProfileCommand::Export { name, out } => match control.store.get(&name).await {
            Ok(Some(s)) => {
                let text = s.profile.to_env();
                match out {
                    Some(path) => match std::fs::write(&path, text) {
                        Ok(()) => OK,
                        Err(e) => {
                            eprintln!("{}: {e}", path.display());
                            PROBLEM
                        }
                    },
                    None => {
                        print!("{text}");
                        OK
                    }
                }
            }
            Ok(None) => {
                eprintln!("no profile named {name}");
                USAGE
            }
            Err(e) => {
                eprintln!("{e}");
                PROBLEM
            }
        },
    }
}

/// `file:line: FIELD: message` in the operator's language, as compilers print it.
fn describe_issue(lang: Lang, file: &std::path::Path, issue: &app::domain::profile::Issue) -> String {
    let args: Vec<(&str, app::i18n::Arg)> = issue
        .kind
        .args()
        .into_iter()
        .map(|(k, v)| (k, app::i18n::Arg::from(v)))
        .collect();
    let msg = tr_args(lang, &format!("profile-issue-{}", issue.kind.code()), &args);
    let level = if issue.severity == Severity::Error {
        "error"
    } else {
        "warning"
    };
    match issue.line {
        Some(l) => format!("{}:{l}: {level}: {}: {msg}", file.display(), issue.field),
        None => format!("{}: {level}: {}: {msg}", file.display(), issue.field),
    }
}
