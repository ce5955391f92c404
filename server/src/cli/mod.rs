//! The `roofline` command line: the toolbox's tasks (`serve`, `stop`, `restart`, `logs`,
//! `health`, `flags`, `profile …`) and `console`. Exit codes: 0 ok, 1 the check found a
//! problem, 2 bad usage or input (the message names it).

mod backup;
mod checks;
mod console;
mod engine;
mod journal;
mod model;
mod profile;
mod runs;
mod triage;
mod upgrade;
mod user;
mod vram;

use crate::config::DataDir;
use crate::context::Context;
use crate::control::{ControlError, EngineControl};
use app::i18n::Lang;
use clap::{Parser, Subcommand};
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
    /// The log on standard error: `text`, or `json` (one object per line, for a log shipper).
    #[arg(long, global = true, env = "ROOFLINE_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the web console.
    Console {
        #[arg(long)]
        addr: Option<std::net::SocketAddr>,
        /// On an empty data dir, create the demo fleet (two simulated engines) and start it;
        /// in any case, play light demo traffic to the simulated engines while the console runs.
        #[arg(long)]
        demo: bool,
        /// With --demo: switch a runbook fault on in one demo engine a few minutes in (default
        /// preemption-storm; also hang, kv-exhaustion, tpot-slowdown, prefix-cache-miss, crash, …),
        /// to try the incident wizard end to end.
        #[arg(long, requires = "demo", num_args = 0..=1, default_missing_value = "preemption-storm", value_parser = parse_demo_fault)]
        demo_incident: Option<crate::sim::faults::Fault>,
        /// Seconds after the console starts that --demo-incident switches its fault on.
        #[arg(long, requires = "demo_incident", default_value_t = 180)]
        demo_incident_after: u64,
    },
    /// Start a profile's engine and wait until it is healthy (idempotent). A start the
    /// console knows will fail (a flag the installed engine refuses, a context above the
    /// model's limit, a calculator verdict of "does not fit") is refused first.
    Serve {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// Why: recorded in the change journal.
        #[arg(long, default_value = "")]
        reason: String,
        /// Start even where the preflight refuses (journaled).
        #[arg(long)]
        no_preflight: bool,
    },
    /// Stop a profile's engine (SIGTERM, SIGKILL after the grace period).
    Stop {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// Why: recorded in the change journal.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Stop, then serve. The preflight runs before the stop: an engine is not stopped for a
    /// start that would fail.
    Restart {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// Why: recorded in the change journal.
        #[arg(long, default_value = "")]
        reason: String,
        /// Start even where the preflight refuses (journaled).
        #[arg(long)]
        no_preflight: bool,
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
    /// A consistent copy of the database while the console runs (SQLite `VACUUM INTO`); never
    /// overwrites FILE.
    Backup { file: PathBuf },
    /// Replace the database with a backup (the console must be stopped); the replaced one is
    /// kept beside it.
    Restore { file: PathBuf },
    /// Upgrade preflight: the profile's flags on another installation (removed, renamed,
    /// retyped, parser names gone, deprecated, moved defaults) and the metric names the last
    /// gate on it found missing. Exit 1 when the start would fail.
    #[command(name = "upgrade-check")]
    UpgradeCheck {
        #[arg(long, env = "INFER_PROFILE")]
        profile: String,
        /// The installation (a name in the host configuration) to move to.
        #[arg(long)]
        to: String,
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
    Vram(vram::VramArgs),
    /// Model directories: verify one against the air-gap rules, or write its SHA-256
    /// manifest on the sending side.
    Model {
        #[command(subcommand)]
        command: model::ModelCommand,
    },
    /// The change journal: list entries, or verify the hash chain.
    Journal {
        #[command(subcommand)]
        command: journal::JournalCommand,
    },
    /// Launch profiles.
    Profile {
        #[command(subcommand)]
        command: profile::ProfileCommand,
    },
    /// Console accounts: add, list, change role, disable, reset a password.
    User {
        #[command(subcommand)]
        command: user::UserCommand,
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
                    // Single-threaded at this point: no other thread reads the environment yet.
                    std::env::set_var(&a.key, &a.value);
                }
            }
        }
        Err(e) => eprintln!("inference.env: {e}"),
    }
}

/// `--demo-incident`'s fault: one the simulator plays while it serves (a start-time fault
/// would only stop the demo engine from coming back).
fn parse_demo_fault(s: &str) -> Result<crate::sim::faults::Fault, String> {
    let f: crate::sim::faults::Fault = s.parse()?;
    if f.at_start() {
        return Err(format!(
            "{s} acts at startup; --demo-incident takes a fault of a running engine"
        ));
    }
    Ok(f)
}

/// The web console's server, handed in by the binary: the CLI is an edge and does not import
/// the other edge (`web`); `main.rs` wires the two together.
pub type ConsoleServer = fn(
    Context,
    std::net::SocketAddr,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = anyhow::Result<()>> + Send>>;

/// Parses the command line and runs the command; returns the exit code.
pub fn main(console: ConsoleServer) -> i32 {
    // The database (accounts, sessions, the journal), engine state and logs are the
    // console's alone: files 0600, directories 0700, whatever the caller's umask.
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
    load_inference_env();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { USAGE } else { OK };
        }
    };
    let filter = || tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,sqlx=warn".into());
    if cli.log_format == "json" {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter())
            .with_writer(std::io::stderr)
            .init();
    } else {
        tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr)
            .init();
    }
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
    rt.block_on(run(cli, console))
}

/// Opens the data directory and its database. `local` commands (stop, logs, health, the GPUs)
/// go on without a shared database that does not answer, in the degraded mode: this host's
/// engines only, the journal entry kept in the spool for the console to write.
/// Engine control over the data directory. `local`: a command that works on this host's
/// engines only (stop, logs, health, gpu) goes on without a shared database that does not
/// answer. `demo`: the console's `--demo` (its simulated engines get a light load).
async fn open(data: &std::path::Path, local: bool, demo: bool) -> Result<EngineControl, i32> {
    let mut data = DataDir::open(data).map_err(|e| {
        eprintln!("{e:#}");
        USAGE
    })?;
    data.config.demo_load |= demo;
    // Outbound HTTPS (fleet members, engines) trusts the roots host configuration names.
    crate::tls::init_client(data.config.tls.ca_file.as_deref()).map_err(|e| {
        eprintln!("{}: [tls] ca_file: {e}", crate::config::CONFIG_FILE);
        USAGE
    })?;
    let pool = match crate::db::connect(&data).await {
        Ok(pool) => pool,
        Err(e) if local && data.config.database_url.is_some() => {
            let pool = crate::db::lazy_postgres(&data).map_err(|e2| {
                eprintln!("{e:#}; {e2:#}");
                PROBLEM
            })?;
            crate::db::health().set_down(crate::clock::now_ms());
            eprintln!(
                "{e:#}\nThe shared database does not answer: working on this host's engines only (the degraded mode); the journal entry is kept and written when this host's console reaches the database."
            );
            pool
        }
        Err(e) => {
            eprintln!("{e:#}");
            return Err(PROBLEM);
        }
    };
    Ok(EngineControl::new(data, crate::profile_store::ProfileStore::new(pool)))
}

fn lang() -> Lang {
    Lang::from_env_vars(|k| std::env::var(k).ok())
}

#[expect(
    clippy::too_many_lines,
    reason = "one dispatch arm per command; each arm calls its module"
)]
async fn run(cli: Cli, console: ConsoleServer) -> i32 {
    if let Command::Triage { log: Some(path), .. } = &cli.command {
        return triage::triage_log(path, cli.json, lang());
    }
    if let Command::Restore { file } = &cli.command {
        return backup::restore(&cli.data, file, cli.json).await;
    }
    // A running console holds its data directory (shared): a restore waits for it to stop.
    let _console_lock = match &cli.command {
        Command::Console { .. } => {
            if let Err(e) = std::fs::create_dir_all(&cli.data) {
                eprintln!("creating {}: {e}", cli.data.display());
                return PROBLEM;
            }
            match crate::db::console_lock(&cli.data, false) {
                Ok(l) => Some(l),
                Err(e) => {
                    eprintln!("{e:#}");
                    return PROBLEM;
                }
            }
        }
        _ => None,
    };
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
    let local = matches!(
        cli.command,
        Command::Stop { .. } | Command::Logs { .. } | Command::Health { .. } | Command::Gpu
    );
    let demo = matches!(cli.command, Command::Console { demo: true, .. });
    let control = match open(&cli.data, local, demo).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    // Every command below works through the one context the console would hand its features.
    let ctx = Context::new(control);
    let json = cli.json;
    match cli.command {
        Command::Console {
            addr,
            demo,
            demo_incident,
            demo_incident_after,
        } => {
            if demo {
                let incident = demo_incident.map(|fault| crate::demo::load::DemoIncident {
                    fault,
                    after: std::time::Duration::from_secs(demo_incident_after),
                });
                crate::demo::load::spawn(ctx.clone(), incident);
            }
            console::run(ctx, addr, console).await
        }
        Command::Serve {
            profile,
            reason,
            no_preflight,
        } => {
            let (code, detail) = match engine::preflight(&ctx, &profile, no_preflight, json).await {
                Ok(detail) => (engine::serve(&ctx, &profile, json).await, detail),
                Err((code, detail)) => (code, detail),
            };
            engine::journal_action_with(&ctx, "serve", &profile, &reason, code, detail).await;
            code
        }
        Command::Stop { profile, reason } => {
            let (code, detail) = engine::stop(&ctx, &profile, json).await;
            engine::journal_action_with(&ctx, "stop", &profile, &reason, code, detail).await;
            code
        }
        Command::Restart {
            profile,
            reason,
            no_preflight,
        } => {
            let (code, detail) = match engine::preflight(&ctx, &profile, no_preflight, json).await {
                Ok(checked) => {
                    let (mut code, mut detail) = engine::stop(&ctx, &profile, json).await;
                    if code == OK {
                        code = engine::serve(&ctx, &profile, json).await;
                    }
                    detail["preflight"] = checked["preflight"].clone();
                    (code, detail)
                }
                Err((code, detail)) => (code, detail),
            };
            engine::journal_action_with(&ctx, "restart", &profile, &reason, code, detail).await;
            code
        }
        Command::Logs { profile, lines, follow } => engine::logs(&ctx, &profile, lines, follow).await,
        Command::Health {
            target: TargetArgs { url, profile },
        } => checks::health(&ctx, url, profile, json).await,
        Command::Status => engine::status(&ctx, json).await,
        Command::Gpu => checks::gpu(&ctx, json).await,
        Command::Vram(args) => vram::run(&ctx, args, json).await,
        Command::Model { command } => model::run(&ctx, command, json).await,
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
                triage::triage(ctx, &p, clients_see_errors, window, json, lang()).await
            }
            None => {
                eprintln!("triage: give --profile NAME (or INFER_PROFILE) or --log FILE");
                USAGE
            }
        },
        Command::Metrics {
            target: TargetArgs { url, profile },
            window,
        } => checks::metrics(&ctx, url, profile, window, json).await,
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
            let (t, model) = match checks::target_with_model(&ctx, "bench", url, profile, model).await {
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
            runs::bench(&ctx, &t, params, json).await
        }
        Command::SmokeToolcall {
            target: TargetArgs { url, profile },
            model,
        } => runs::smoke(&ctx, url, profile, model, json).await,
        Command::Flags { profile, query } => checks::flags(&ctx, &profile, query, json).await,
        Command::Backup { file } => backup::backup(&ctx, &file, json).await,
        // Handled before the database is opened.
        Command::Restore { .. } => USAGE,
        Command::UpgradeCheck { profile, to } => upgrade::run(&ctx, &profile, &to, json).await,
        Command::Profile { command } => profile::run(&ctx, command, json).await,
        Command::Journal { command } => journal::run(&ctx, command, json).await,
        Command::User { command } => {
            let accounts = crate::accounts::Accounts::new(ctx.pool.clone());
            user::run(&accounts, &ctx.journal, command, json).await
        }
    }
}

fn code_of(e: &ControlError) -> i32 {
    match e {
        ControlError::NoSuchProfile(_)
        | ControlError::NoSuchEngine { .. }
        | ControlError::ModelPath { .. }
        | ControlError::Refused { .. } => USAGE,
        _ => PROBLEM,
    }
}

/// Who the CLI records in the journal.
fn cli_actor() -> String {
    format!("{}@cli", std::env::var("USER").unwrap_or_else(|_| "operator".into()))
}
