//! Every parser of outside input, fed hostile input: never a panic (issue 11). These are the
//! bounded, stable-toolchain versions of the coverage-guided targets in `fuzz/`, and run in
//! every `cargo test` (256 cases each; `PROPTEST_CASES` raises it).
#![cfg(test)]

use super::engine::EngineKind;
use super::{
    envfile, flag_grammar, help_flags, incident, launch, logscan, modelcheck, profile, prometheus, signals,
    startup_failure, toolcall, vram,
};
use help_flags::captured as installed_help;
use proptest::prelude::*;

/// Text that looks like the format (its punctuation and keywords) as often as it is noise.
fn texty(alphabet: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(proptest::sample::select(alphabet.chars().collect::<Vec<_>>()), 0..400)
            .prop_map(|v| v.into_iter().collect()),
        "\\PC{0,400}",
    ]
}

fn big_number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:e}")),
        Just("1e308".to_string()),
        Just("-0".to_string()),
        Just("18446744073709551616".to_string()),
    ]
}

proptest! {
    /// Any value against any grammar: never a panic, and what passes reaches only the root
    /// (lexically) and loopback.
    #[test]
    fn flag_values_never_panic_and_stay_inside(v in texty("/.:{}[]\"=,@*~ tcp://127.0.0.1:80 localhost models ..x_")) {
        let places = flag_grammar::Places { root: Some("/models"), hosts: &[] };
        for g in flag_grammar::EVERY {
            let mut reaches = flag_grammar::Reaches::default();
            if flag_grammar::check(*g, &v, &places, &mut reaches).is_ok() {
                for p in &reaches.paths {
                    prop_assert!(flag_grammar::inside_root(p, "/models"), "{g:?} {v:?} reached {p}");
                }
                if matches!(g, flag_grammar::Grammar::Endpoint) {
                    prop_assert!(!v.contains("0.0.0.0") && !v.contains('*'), "{v:?}");
                }
            }
        }
    }

    #[test]
    fn prometheus_text_never_panics(body in texty("vllm:_{}=\",# \n0123456789.+-eEInfNa\\le")) {
        let parsed = prometheus::parse(&body);
        let _ = signals::normalise(&parsed.samples);
    }

    #[test]
    fn profile_files_never_panic_and_read_back(text in texty("ENGINE=MODEL_/'\"\\ $\n#-EXTRA_ARGS--hostTENSOR_PARALLEL0123")) {
        let _ = envfile::parse(&text);
        if let Ok((p, _)) = profile::Profile::from_env("p", &text) {
            let back = profile::Profile::from_env("p", &p.to_env()).map(|(q, _)| q);
            prop_assert_eq!(back.ok(), Some(p.clone()));
            let policy = launch::Policy { models_root: Some("/models".into()), ..Default::default() };
            for kind in [EngineKind::Vllm, EngineKind::Sglang] {
                let _ = launch::check(&p, kind, &policy);
            }
        }
    }

    #[test]
    fn model_configs_with_any_numbers_never_panic(
        layers in big_number(), hidden in big_number(), heads in big_number(), kv in big_number(),
        head_dim in big_number(), inter in big_number(), vocab in big_number(), experts in big_number(),
        window in big_number(), ctx in any::<u64>(), tp in any::<u64>(),
    ) {
        let text = format!(
            r#"{{"num_hidden_layers": {layers}, "hidden_size": {hidden}, "num_attention_heads": {heads},
                "num_key_value_heads": {kv}, "head_dim": {head_dim}, "intermediate_size": {inter},
                "vocab_size": {vocab}, "num_experts": {experts}, "sliding_window": {window},
                "max_position_embeddings": 131072}}"#
        );
        if let Ok(shape) = vram::parse_config(&text) {
            let inputs = vram::Inputs {
                weights_bytes: 1 << 40, gpu_gib: 80.0, tp, util: 0.9, ctx,
                kv_dtype: vram::KvDtype::Auto, concurrency: Some(ctx), activation_gib: None, non_torch_gib: Some(1.0), engine: Default::default(), calibration: None,
            };
            let _ = vram::calculate(&shape, &inputs);
        }
    }

    #[test]
    fn safetensors_headers_never_panic(a in big_number(), b in big_number(), noise in "\\PC{0,100}") {
        let header = format!(r#"{{"t": {{"dtype": "BF16", "shape": [1], "data_offsets": [{a}, {b}]}}, "__metadata__": {{}}}}"#);
        let _ = vram::safetensors_bytes(&header);
        let _ = vram::safetensors_bytes(&noise);
        let _ = vram::index_total_size(&format!(r#"{{"metadata": {{"total_size": {a}}}}}"#));
    }

    #[test]
    fn environment_reports_and_help_diffs_never_panic(
        report in texty("PyTorch version: CUDA used to build PyTorch Nvidia driver version vLLM Version sglang NVCC: release , +cu 0123456789.\n"),
        old in texty("options:\n  --a A --b {x,y} (default: 1) Deprecated use --c instead formerly\n"),
        new in texty("options:\n  --a --b {x,z} (default: 2) renamed from --a \n"),
        argv in proptest::collection::vec("--[abc]|x|y|z|1", 0..8),
    ) {
        let f = super::pins::parse_env_report(&report);
        for v in [f.torch, f.cuda, f.driver, f.engine_version].into_iter().flatten() {
            prop_assert!(v.chars().count() <= 120);
        }
        let (o, n) = (super::help_flags::parse_help(&old), super::help_flags::parse_help(&new));
        let d = super::upgrade::compare_flags(super::engine::EngineKind::Vllm, &o, &n, &argv);
        prop_assert!(d.other_defaults.len() <= super::upgrade::MAX_OTHER_DEFAULTS);
    }

    #[test]
    fn engine_logs_never_panic(log in texty("INFO WARNING ERROR EngineCore CUDA out of memory Traceback File \"\n:0123456789%KV cache usage Running: reqs, Waiting: Pending: Preemptions: Avg prompt throughput: Decode batch, Prefill batch. #running-req: #queue-req: token usage: Retract requests #retracted_reqs: Memory profiling peak_torch_memory= Available KV cache memory: K size: V size: vLLM API server version load_model run_busy_loop Application startup complete")) {
        let inv = logscan::investigate(&log, true);
        prop_assert!(inv.stats.len() <= 4096);
        prop_assert!(inv.evidence.iter().all(|h| h.text.chars().count() <= 401));
        let _ = startup_failure::classify(log.lines());
        let _ = vram::observed(&log);
    }

    #[test]
    fn phase_history_and_counters_never_panic(
        marks in proptest::collection::vec((0usize..7, any::<f64>()), 0..12),
        history in proptest::collection::vec(proptest::collection::vec((0usize..7, any::<f64>()), 0..8), 0..12),
        now in any::<f64>(),
        scrapes in proptest::collection::vec((any::<f64>(), any::<Option<f64>>(), any::<Option<f64>>(), any::<Option<f64>>(), any::<Option<f64>>()), 0..20),
    ) {
        use super::phases::StartupPhase;
        use super::phases::{stalled, PhaseMark};
        let mark = |(p, at_s): &(usize, f64)| PhaseMark { phase: StartupPhase::ALL[*p], at_s: *at_s };
        let current: Vec<PhaseMark> = marks.iter().map(mark).collect();
        let past: Vec<Vec<PhaseMark>> = history.iter().map(|r| r.iter().map(mark).collect()).collect();
        let _ = stalled(&current, now, &past);
        let signals: Vec<(f64, signals::Signals)> = scrapes
            .iter()
            .map(|(t, running, gen, prompt, iters)| (*t, signals::Signals {
                running: *running, generation_tokens_total: *gen, prompt_tokens_total: *prompt, iterations_total: *iters,
                ..Default::default()
            }))
            .collect();
        let refs: Vec<(f64, &signals::Signals)> = signals.iter().map(|(t, s)| (*t, s)).collect();
        let _ = super::stall::hung(&refs);
    }

    #[test]
    fn help_output_never_panics(text in texty("  --flag-name {a,b} VALUE (default: x)\n[deprecated]usage: ")) {
        let set = help_flags::parse_help(&text);
        let _ = set.bad_values(&["--tool-call-parser".to_string(), "x".to_string(), "--a=b".to_string()]);
    }

    #[test]
    fn tool_call_answers_never_panic(text in texty("data: {}[]\"tool_calls\":choices,delta,function,arguments,name,id\n[DONE]")) {
        let _ = toolcall::from_sse(&text);
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Ok(answer) = toolcall::from_json(&v) {
                let _ = toolcall::parsed_args(&answer);
            }
            let _ = toolcall::validate(&v, &v);
        }
    }

    #[test]
    fn alertmanager_payloads_never_panic(text in texty("{}[]\"alerts\":labels,status,resolved,firing,profile,engine,alertname,0123")) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            let alerts = incident::alerts_of(&v);
            prop_assert!(alerts.len() <= 100);
            prop_assert!(alerts.iter().all(|a| a.name.chars().count() <= 200 && super::profile::valid_name(&a.profile)));
        }
    }
    #[test]
    fn model_manifests_and_indexes_never_panic(text in texty("0123456789abcdef  *./..\n#SHA256SUMS model.safetensors{}\"weight_map\":")) {
        if let Ok(entries) = modelcheck::parse_manifest(&text) {
            // Whatever it accepts is a relative path inside the directory, listed once.
            for (path, hash) in &entries {
                prop_assert!(modelcheck::check_relative(path).is_ok(), "{path}");
                prop_assert_eq!(hash.len(), 64);
            }
            let again = modelcheck::parse_manifest(&modelcheck::render_manifest(&entries)).unwrap();
            prop_assert_eq!(again.len(), entries.len());
        }
        if let Ok(shards) = modelcheck::index_shards(&text) {
            prop_assert!(shards.keys().all(|k| modelcheck::check_relative(k).is_ok()));
        }
        let _ = modelcheck::safetensors_extent(&text);
        let _ = modelcheck::has_chat_template(&text);
    }
}

/// A passed profile must have no option word that argparse could take for a code-loading flag
/// (its `--no-` form, matched exactly, turns the flag off).
pub(crate) fn could_load_code(kind: EngineKind, words: &[String], allowed: &[String]) -> Option<String> {
    let set = installed_help(kind);
    for w in words {
        let spelled = super::argparse::engine_spelling(kind, w)
            .map(|(s, _)| s)
            .unwrap_or_default();
        for f in super::argparse::reachable(kind, w, set) {
            let loads = f.names.iter().any(|n| launch::code_flags(kind).contains(&n.as_str()));
            let off = spelled.starts_with("--no-") && f.names.contains(&spelled);
            if loads && !off && !f.names.iter().any(|n| allowed.contains(n)) {
                return Some(format!("{w} → {}", f.names.join("/")));
            }
        }
    }
    None
}

/// Words that look like the engines' flags: prefixes and respellings of real names, with
/// values, dotted keys, single dashes and noise.
fn flag_words(kind: EngineKind) -> impl Strategy<Value = Vec<String>> {
    let names: Vec<String> = installed_help(kind)
        .flags
        .iter()
        .flat_map(|f| f.names.iter().cloned())
        .chain(launch::code_flags(kind).iter().map(|s| s.to_string()))
        .collect();
    let word = (
        proptest::sample::select(names),
        0usize..40,
        any::<bool>(),
        prop_oneof![Just(""), Just("=x"), Just(".a=1"), Just("=/models/x"), Just("=pt")],
        "[a-z_.=/ -]{0,6}",
    )
        .prop_map(|(name, cut, underscores, tail, noise)| {
            let keep = name.len().saturating_sub(cut % name.len().max(1)).max(2);
            let mut w: String = name.chars().take(keep).collect();
            if underscores {
                w = w.replacen('-', "_", 3).replacen("__", "--", 1);
            }
            format!("{w}{tail}{noise}")
        });
    proptest::collection::vec(prop_oneof![4 => word, 1 => "[-a-z0-9_=./]{0,12}"], 0..6)
}

proptest! {
    #[test]
    fn no_profile_the_policy_passes_can_reach_a_code_loading_flag(
        kind in prop_oneof![Just(EngineKind::Vllm), Just(EngineKind::Sglang)],
        words in flag_words(EngineKind::Vllm),
        sg in flag_words(EngineKind::Sglang),
        allow in any::<bool>(),
    ) {
        let words = if kind == EngineKind::Sglang { sg } else { words };
        let allowed: Vec<String> = if allow { vec!["--trust-remote-code".into()] } else { vec![] };
        let mut p = profile::Profile::from_env("fuzz", "ENGINE=e\nMODEL=/models/m\n").map(|(p, _)| p).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        p.extra_args = words.clone();
        let policy = launch::Policy {
            models_root: Some("/models".into()),
            help: launch::Help::Installed(installed_help(kind).clone()),
            allow_flags: allowed.clone(),
            ..Default::default()
        };
        let issues = launch::check(&p, kind, &policy);
        let extra_refused = issues.iter().any(|i| i.field == "EXTRA_ARGS");
        if !extra_refused {
            prop_assert_eq!(could_load_code(kind, &words, &allowed), None, "passed: {:?}", words);
        }
    }
}
