//! The engines' command lines, as the simulator accepts them: the same flag names, the same
//! `--help` formats (vLLM's grouped `--help=all`, SGLang's flat argparse help) and the same
//! argparse errors for unknown flags, so engine control and `roofline flags` treat the
//! simulator exactly like a real installation.

use super::faults::Fault;
use super::release::{Release, RELEASES};
use app::domain::engine::EngineKind;
use app::domain::help_flags::{parse_help, FlagSet, HelpFlag};

/// The simulator's own knobs, appended to the help in the engine's format.
const SIM_HELP_VLLM: &str = "\nRoofline simulator:\n  Knobs of the Roofline engine simulator; no real engine has them.\n\n  --sim-fault FAULT     Inject a fault (repeatable): crash, hang, oom-load, kv-too-small,\n                        oom-under-load, kv-exhaustion, preemption-storm, prefix-cache-miss,\n                        tpot-slowdown, broken-tool-parser, missing-config, unsupported-arch,\n                        driver-mismatch. (default: None)\n  --sim-startup-delay SECONDS\n                        Seconds the simulated startup takes. (default: 2)\n";
const SIM_HELP_SGLANG: &str = "  --sim-fault FAULT     Roofline simulator only: inject a fault (repeatable).\n  --sim-startup-delay SECONDS\n                        Roofline simulator only: seconds the simulated startup takes.\n";

/// Each release's flag set (the order of `RELEASES`), parsed once.
static FLAGS: std::sync::LazyLock<Vec<FlagSet>> =
    std::sync::LazyLock::new(|| RELEASES.iter().map(|r| parse_help(&help_text(*r))).collect());

fn flag_set(release: Release) -> &'static FlagSet {
    static EMPTY: FlagSet = FlagSet { flags: Vec::new() };
    RELEASES
        .iter()
        .position(|r| *r == release)
        .and_then(|i| FLAGS.get(i))
        .unwrap_or(&EMPTY)
}

/// The simulator's launch settings, from the engine's flags.
#[derive(Clone, Debug, PartialEq)]
pub struct SimArgs {
    pub kind: EngineKind,
    /// The release played: its version, help and metric names.
    pub release: Release,
    pub model: String,
    pub served_model_name: Option<String>,
    pub tp: u32,
    pub max_model_len: Option<u32>,
    pub mem_fraction: f64,
    /// `None`: the engine's default, which depends on the GPU (see `startup::limits`).
    pub max_running: Option<u32>,
    pub max_batched_tokens: Option<u32>,
    pub enforce_eager: bool,
    /// vLLM `--block-size` (16 when not given).
    pub block_size: u32,
    pub kv_cache_dtype: String,
    pub tool_call_parser: Option<String>,
    pub auto_tool_choice: bool,
    pub host: String,
    pub port: u16,
    pub metrics_enabled: bool,
    pub prefix_caching: bool,
    pub faults: Vec<Fault>,
    pub startup_delay_s: f64,
}

impl SimArgs {
    pub fn model_name(&self) -> &str {
        self.served_model_name.as_deref().unwrap_or(&self.model)
    }
}

/// What the command line asked for.
#[derive(Debug, PartialEq)]
pub enum Invocation {
    Serve(Box<SimArgs>),
    Help(String),
    Version(String),
    /// `vllm collect-env` / `python -m sglang.check_env`: the environment report.
    EnvReport(String),
}

/// An argparse-style usage error: the message and the exit code 2.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn prog(kind: EngineKind) -> &'static str {
    match kind {
        EngineKind::Vllm => "vllm serve",
        EngineKind::Sglang => "launch_server.py",
    }
}

/// The help text in the engine's own format: the release's, plus the simulator's knobs.
pub fn help_text(release: Release) -> String {
    let help = release.engine_help();
    match release.kind {
        EngineKind::Vllm => {
            // The JSON-args epilog closes vLLM's help; the simulator's group goes before it.
            match help.find("\nWhen passing JSON CLI arguments") {
                Some(pos) => format!("{}{SIM_HELP_VLLM}{}", &help[..pos], &help[pos..]),
                None => format!("{help}{SIM_HELP_VLLM}"),
            }
        }
        EngineKind::Sglang => format!("{help}{SIM_HELP_SGLANG}"),
    }
}

/// A flag by any spelling; vLLM's config flags also take dotted keys (`--speculative-config.method`).
fn find(release: Release, name: &str) -> Option<&'static HelpFlag> {
    let set = flag_set(release);
    set.find(name)
        .or_else(|| name.split_once('.').and_then(|(root, _)| set.find(root)))
}

/// A long option as Python's argparse reads it (`allow_abbrev`, on in both engines): its exact
/// spelling, else the one flag it is an unambiguous prefix of; a prefix of several is
/// argparse's "ambiguous option" error.
fn resolve(release: Release, name: &str) -> Result<Option<&'static HelpFlag>, UsageError> {
    if let Some(def) = find(release, name) {
        return Ok(Some(def));
    }
    if !name.starts_with("--") || name.len() < 3 || name.contains('.') {
        return Ok(None);
    }
    let want = name.replace('_', "-");
    let mut matches: Vec<(&'static HelpFlag, &'static str)> = Vec::new();
    for f in &flag_set(release).flags {
        for n in f
            .names
            .iter()
            .filter(|n| n.starts_with("--") && n.replace('_', "-").starts_with(&want))
        {
            matches.push((f, n.as_str()));
        }
    }
    match matches.as_slice() {
        [] => Ok(None),
        [(f, _)] => Ok(Some(f)),
        many => {
            let names: Vec<&str> = many.iter().map(|(_, n)| *n).collect();
            Err(UsageError(format!(
                "usage: {} [options]\n{}: error: ambiguous option: {name} could match {}",
                prog(release.kind),
                prog(release.kind),
                names.join(", ")
            )))
        }
    }
}

/// Parses `sim vllm serve MODEL …` (after `serve`) or `sim sglang …`.
#[expect(
    clippy::too_many_lines,
    reason = "argparse's reading of each flag the simulator honours, one arm each"
)]
pub fn parse(release: Release, args: &[String]) -> Result<Invocation, UsageError> {
    let kind = release.kind;
    let mut args: Vec<String> = args.to_vec();
    if kind == EngineKind::Vllm {
        if args.first().map(String::as_str) == Some("--version") {
            return Ok(Invocation::Version(release.version.into()));
        }
        if args.first().map(String::as_str) == Some("collect-env") {
            return Ok(Invocation::EnvReport(release.env_report()));
        }
        if args.first().map(String::as_str) != Some("serve") {
            return Err(UsageError("usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\nvllm: error: the simulator only implements `vllm serve`".into()));
        }
        args.remove(0);
    } else if args.first().map(String::as_str) == Some("--version") {
        return Ok(Invocation::Version(release.version.into()));
    } else if args.first().map(String::as_str) == Some("check-env") {
        return Ok(Invocation::EnvReport(release.env_report()));
    }
    // (canonical name, spelling used, value)
    let mut values: Vec<(&'static str, String, Option<String>)> = Vec::new();
    let mut positional = Vec::new();
    let mut unknown = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-h" || a == "--help" || a.starts_with("--help=") {
            return Ok(Invocation::Help(help_text(release)));
        }
        if a.starts_with('-') && a.len() > 1 {
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (a.clone(), None),
            };
            match resolve(release, &name)? {
                Some(def) if def.metavar.is_none() => values.push((&def.names[0], name, None)),
                Some(def) => {
                    let v = match inline {
                        Some(v) => v,
                        None => {
                            i += 1;
                            args.get(i).cloned().ok_or_else(|| {
                                UsageError(format!(
                                    "{}: error: argument {}: expected one argument",
                                    prog(kind),
                                    def.names.join("/")
                                ))
                            })?
                        }
                    };
                    // `nargs='+'` options (`--served-model-name A [B ...]`) take every following word.
                    let mut v = v;
                    if def.metavar.as_deref().is_some_and(|m| m.contains("...")) {
                        while args.get(i + 1).is_some_and(|a| !a.starts_with('-')) {
                            i += 1;
                            v.push(' ');
                            v.push_str(&args[i]);
                        }
                    }
                    // argparse checks `choices` itself; vLLM's parser flags (choices "or name
                    // registered in" a plugin) are checked later, at the API server's start.
                    let plugin = def.metavar.as_deref().is_some_and(|m| m.contains("registered in"));
                    if let Some(choices) = def.choices().filter(|_| !plugin) {
                        if let Some(bad) = v.split(' ').find(|x| !choices.iter().any(|c| c == x)) {
                            let listed: Vec<String> = choices.iter().map(|c| format!("'{c}'")).collect();
                            return Err(UsageError(format!(
                                "{}: error: argument {}: invalid choice: '{bad}' (choose from {})",
                                prog(kind),
                                def.names.join("/"),
                                listed.join(", ")
                            )));
                        }
                    }
                    values.push((&def.names[0], name, Some(v)));
                }
                None => unknown.push(a.clone()),
            }
        } else {
            positional.push(a.clone());
        }
        i += 1;
    }
    if !unknown.is_empty() {
        return Err(UsageError(format!(
            "usage: {} [options]\n{}: error: unrecognized arguments: {}",
            prog(kind),
            prog(kind),
            unknown.join(" ")
        )));
    }
    // vLLM's API server refuses a tool-call parser it does not have (unless a plugin brings it).
    if kind == EngineKind::Vllm && !values.iter().any(|(d, _, _)| *d == "--tool-parser-plugin") {
        let parser = values.iter().rev().find(|(d, _, _)| *d == "--tool-call-parser");
        let known = find(release, "--tool-call-parser").and_then(HelpFlag::choices);
        if let (Some((_, _, Some(p))), Some(known)) = (parser, known) {
            if !known.contains(p) {
                return Err(UsageError(format!(
                    "KeyError: 'invalid tool call parser: {p} (chose from {{ {} }})'",
                    known.join(",")
                )));
            }
        }
    }
    let get = |flag: &str| -> Option<(String, Option<String>)> {
        values
            .iter()
            .rev()
            .find(|(d, _, _)| *d == flag)
            .map(|(_, n, v)| (n.clone(), v.clone()))
    };
    let num = |flag: &str| -> Result<Option<f64>, UsageError> {
        match get(flag) {
            Some((n, Some(v))) => v
                .parse::<f64>()
                .map(Some)
                .map_err(|_| UsageError(format!("{}: error: argument {n}: invalid value: '{v}'", prog(kind)))),
            _ => Ok(None),
        }
    };
    let text = |flag: &str| get(flag).and_then(|(_, v)| v);
    // A boolean is on when given by its own name, off by its `--no-x` / `--disable-x` twin.
    let flag_on = |flag: &str| get(flag).is_some_and(|(n, _)| n.replace('_', "-") == flag);
    let model = match kind {
        EngineKind::Vllm => positional.first().cloned().or_else(|| text("--model")),
        EngineKind::Sglang => text("--model-path"),
    }
    .ok_or_else(|| {
        UsageError(format!(
            "{}: error: the following arguments are required: {}",
            prog(kind),
            if kind == EngineKind::Vllm {
                "model_tag"
            } else {
                "--model-path"
            }
        ))
    })?;
    if kind == EngineKind::Sglang && !positional.is_empty() {
        return Err(UsageError(format!(
            "{}: error: unrecognized arguments: {}",
            prog(kind),
            positional.join(" ")
        )));
    }
    let mut faults = Vec::new();
    for (d, _, v) in &values {
        if *d == "--sim-fault" {
            let v = v.clone().unwrap_or_default();
            faults.push(
                v.parse::<Fault>()
                    .map_err(|e| UsageError(format!("{}: error: argument --sim-fault: {e}", prog(kind))))?,
            );
        }
    }
    if let Ok(env) = std::env::var("ROOFLINE_SIM_FAULT") {
        for name in env.split(',').filter(|s| !s.trim().is_empty()) {
            faults.push(
                name.trim()
                    .parse::<Fault>()
                    .map_err(|e| UsageError(format!("ROOFLINE_SIM_FAULT: {e}")))?,
            );
        }
    }
    let startup_delay_s = match num("--sim-startup-delay")? {
        Some(v) => v,
        None => std::env::var("ROOFLINE_SIM_STARTUP_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2.0),
    };
    let (tp_flag, len_flag, mem_flag, running_flag, batch_flag) = match kind {
        EngineKind::Vllm => (
            "--tensor-parallel-size",
            "--max-model-len",
            "--gpu-memory-utilization",
            "--max-num-seqs",
            "--max-num-batched-tokens",
        ),
        EngineKind::Sglang => (
            "--tp-size",
            "--context-length",
            "--mem-fraction-static",
            "--max-running-requests",
            "--chunked-prefill-size",
        ),
    };
    let tp = num(tp_flag)?.unwrap_or(1.0);
    if tp < 1.0 || tp.fract() != 0.0 {
        return Err(UsageError(format!(
            "{}: error: argument {tp_flag}: must be a positive integer",
            prog(kind)
        )));
    }
    let port = num("--port")?.unwrap_or(kind.default_port() as f64);
    if !(1.0..=65535.0).contains(&port) {
        return Err(UsageError(format!(
            "{}: error: argument --port: invalid port",
            prog(kind)
        )));
    }
    let mem_fraction = num(mem_flag)?.unwrap_or(match kind {
        EngineKind::Vllm => 0.92,
        EngineKind::Sglang => 0.88,
    });
    if !(mem_fraction > 0.0 && mem_fraction <= 1.0) {
        return Err(UsageError(format!(
            "{}: error: argument {mem_flag}: must be in (0, 1]",
            prog(kind)
        )));
    }
    Ok(Invocation::Serve(Box::new(SimArgs {
        kind,
        release,
        model,
        // The first served name is the one the API reports (vLLM takes several).
        served_model_name: text("--served-model-name").and_then(|v| v.split_whitespace().next().map(str::to_string)),
        tp: tp as u32,
        max_model_len: num(len_flag)?.map(|v| v as u32),
        mem_fraction,
        max_running: num(running_flag)?.map(|v| (v as u32).max(1)),
        max_batched_tokens: num(batch_flag)?.filter(|v| *v > 0.0).map(|v| v as u32),
        enforce_eager: kind == EngineKind::Vllm && flag_on("--enforce-eager"),
        block_size: match kind {
            EngineKind::Vllm => num("--block-size")?
                .filter(|v| *v >= 1.0)
                .map(|v| v as u32)
                .unwrap_or(16),
            EngineKind::Sglang => 1,
        },
        kv_cache_dtype: text("--kv-cache-dtype").unwrap_or_else(|| "auto".into()),
        tool_call_parser: text("--tool-call-parser"),
        auto_tool_choice: match kind {
            EngineKind::Vllm => flag_on("--enable-auto-tool-choice"),
            EngineKind::Sglang => text("--tool-call-parser").is_some(),
        },
        host: text("--host").unwrap_or_else(|| match kind {
            EngineKind::Vllm => "0.0.0.0".into(),
            EngineKind::Sglang => "127.0.0.1".into(),
        }),
        port: port as u16,
        metrics_enabled: match kind {
            EngineKind::Vllm => !flag_on("--disable-log-stats"),
            EngineKind::Sglang => flag_on("--enable-metrics"),
        },
        prefix_caching: match kind {
            EngineKind::Vllm => get("--enable-prefix-caching").is_none_or(|(n, _)| n == "--enable-prefix-caching"),
            EngineKind::Sglang => !flag_on("--disable-radix-cache"),
        },
        faults,
        startup_delay_s,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::help_flags::parse_help;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    const VLLM: Release = Release {
        kind: EngineKind::Vllm,
        version: "0.33.0",
        synthetic: false,
    };
    const SGLANG: Release = Release {
        kind: EngineKind::Sglang,
        version: "0.5.23",
        synthetic: false,
    };

    fn current(kind: EngineKind) -> Release {
        Release::current(kind)
    }

    #[test]
    fn vllm_command_line() {
        let Invocation::Serve(a) = parse(
            VLLM,
            &s(&[
                "serve",
                "/models/m",
                "--served-model-name",
                "m",
                "-tp",
                "2",
                "--max-model-len=4096",
                "--enable-auto-tool-choice",
                "--tool-call-parser",
                "hermes",
                "--port",
                "8100",
            ]),
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.model.as_str(), a.tp, a.max_model_len, a.port, a.auto_tool_choice),
            ("/models/m", 2, Some(4096), 8100, true)
        );
        assert_eq!(a.model_name(), "m");
        let err = parse(VLLM, &s(&["serve", "/m", "--max-model-length", "5"])).unwrap_err();
        assert!(
            err.0.ends_with("error: unrecognized arguments: --max-model-length 5")
                || err.0.contains("unrecognized arguments: --max-model-length")
        );
        assert_eq!(
            parse(VLLM, &s(&["--version"])).unwrap(),
            Invocation::Version("0.33.0".into())
        );
    }

    #[test]
    fn sglang_command_line() {
        let Invocation::Serve(a) = parse(
            SGLANG,
            &s(&[
                "--model-path",
                "/models/m",
                "--tp-size",
                "1",
                "--enable-metrics",
                "--tool-call-parser",
                "qwen25",
            ]),
        )
        .unwrap() else {
            panic!()
        };
        assert!(a.metrics_enabled && a.auto_tool_choice);
        assert_eq!(a.port, 30000);
        assert!(parse(SGLANG, &s(&["--tp-size", "1"]))
            .unwrap_err()
            .0
            .contains("--model-path"));
    }

    #[test]
    fn the_simulator_accepts_the_real_engines_flags_and_rejects_others() {
        for (kind, lead) in [
            (EngineKind::Vllm, vec!["serve", "/m"]),
            (EngineKind::Sglang, vec!["--model-path", "/m"]),
        ] {
            let real = flag_set(current(kind));
            assert!(real.flags.len() > 300);
            for flag in real
                .flags
                .iter()
                .filter(|f| !f.names[0].starts_with("--sim-"))
                .take(400)
            {
                let mut argv: Vec<String> = lead.iter().map(|x| x.to_string()).collect();
                argv.push(flag.names[0].clone());
                if flag.metavar.is_some() {
                    argv.push("1".into());
                }
                match parse(current(kind), &argv) {
                    Ok(_) => {}
                    // Values are checked only for the settings the simulator models.
                    Err(e) => assert!(!e.0.contains("unrecognized"), "{kind:?} {}: {e}", flag.names[0]),
                }
            }
        }
        assert!(parse(VLLM, &s(&["serve", "/m", "--speculative-config.method", "eagle3"])).is_ok());
        assert!(parse(
            VLLM,
            &s(&["serve", "/m", "--served-model-name", "a", "b", "--port", "9"])
        )
        .is_ok());
        assert!(parse(SGLANG, &s(&["--model-path", "/m", "--max-model-len", "9"]))
            .unwrap_err()
            .0
            .contains("unrecognized arguments: --max-model-len"));
    }

    #[test]
    fn prefixes_are_read_as_argparse_reads_them() {
        // vLLM's argparse takes an unambiguous prefix as the flag (a real vLLM 0.32 serves with
        // `--max-model 2048`), and names every match of an ambiguous one.
        let r = current(EngineKind::Vllm);
        let Ok(Invocation::Serve(a)) = parse(r, &s(&["serve", "/m", "--max-model", "2048", "--gpu-memory-util=0.5"]))
        else {
            panic!("a prefix was refused")
        };
        assert_eq!(a.max_model_len, Some(2048));
        assert!((a.mem_fraction - 0.5).abs() < 1e-9);
        let err = parse(r, &s(&["serve", "/m", "--max", "5"])).unwrap_err();
        assert!(err.0.contains("error: ambiguous option: --max could match"), "{err}");
        assert!(err.0.contains("--max-model-len"), "{err}");
    }

    #[test]
    fn choices_are_checked_as_argparse_and_vllm_check_them() {
        let e = parse(VLLM, &s(&["serve", "/m", "--kv-cache-dtype", "fp9"])).unwrap_err();
        assert!(e.0.contains("argument --kv-cache-dtype: invalid choice: 'fp9'"), "{e}");
        let e = parse(
            VLLM,
            &s(&[
                "serve",
                "/m",
                "--enable-auto-tool-choice",
                "--tool-call-parser",
                "llama3",
            ]),
        )
        .unwrap_err();
        assert!(e.0.contains("invalid tool call parser: llama3"), "{e}");
        // The synthetic next release renamed it.
        let next = Release::parse(&format!("vllm@{}", super::super::release::NEXT_VLLM)).unwrap();
        assert!(parse(next, &s(&["serve", "/m", "--tool-call-parser", "llama3"])).is_ok());
        assert!(parse(next, &s(&["serve", "/m", "--tool-call-parser", "llama3_json"])).is_err());
        assert!(parse(
            VLLM,
            &s(&[
                "serve",
                "/m",
                "--tool-call-parser",
                "mine",
                "--tool-parser-plugin",
                "/p.py"
            ])
        )
        .is_ok());
        assert!(
            parse(SGLANG, &s(&["--model-path", "/m", "--reasoning-parser", "qwen9"]))
                .unwrap_err()
                .0
                .contains("invalid choice: 'qwen9'")
        );
    }

    #[test]
    fn own_help_parses_with_the_console_parser() {
        for kind in [EngineKind::Vllm, EngineKind::Sglang] {
            let set = parse_help(&help_text(current(kind)));
            assert!(set.find("--tool-call-parser").is_some(), "{kind:?}");
            assert!(set.find("--port").is_some());
        }
        let v = parse_help(&help_text(VLLM));
        assert_eq!(v.find("-tp").unwrap().group.as_deref(), Some("ParallelConfig"));
        assert!(
            parse_help(&help_text(SGLANG))
                .find("--disable-cuda-graph")
                .unwrap()
                .deprecated
        );
    }
}
