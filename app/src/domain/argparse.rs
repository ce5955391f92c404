//! How the engines read one word of their command line, as Python's argparse does, against the
//! installed engine's own parsed `--help`.
//!
//! argparse takes any unambiguous prefix of a long flag as that flag (`--trust-remote` is
//! `--trust-remote-code`), and a single-dash word that starts with a one-letter flag as that
//! flag with its value attached (`-qfp8`). vLLM's `FlexibleArgumentParser` first rewrites the
//! word: `_` becomes `-` in the name (up to the first `.`), `--a.b 1` becomes `--a '{"b": 1}'`,
//! and `-O3` becomes `--optimization-level 3`. The launch policy decides on the flag a word
//! resolves to here, never on how it is spelled, so a spelling cannot hide a flag.

use super::engine::EngineKind;
use super::help_flags::{FlagSet, HelpFlag};

/// What argparse would take a word that starts with `-` to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved<'a> {
    /// Exactly this flag, spelled `matched` (after the engine's own rewriting); `attached` is a
    /// value written into the same word (`--a=b`, `-qfp8`, `-O3`, a dotted key's value).
    Flag {
        flag: &'a HelpFlag,
        matched: String,
        attached: bool,
    },
    /// A prefix of exactly one flag: argparse would read it as `full`.
    Shortened { full: String },
    /// A prefix of several flags: argparse refuses it, but which is meant is not written.
    Ambiguous { candidates: Vec<String> },
    /// A negative number: argparse takes it as a value, not a flag.
    Number,
    /// No flag the installed engine knows.
    Unknown,
}

/// The name part of a word as the engine rewrites it before argparse sees it, and whether a
/// value is attached. `None` when the word is not an option at all.
pub fn engine_spelling(kind: EngineKind, word: &str) -> Option<(String, bool)> {
    if !word.starts_with('-') || word == "-" || word == "--" {
        return None;
    }
    let (key, inline) = match word.split_once('=') {
        Some((k, _)) => (k, true),
        None => (word, false),
    };
    match kind {
        EngineKind::Vllm => {
            if word.starts_with("-O") && !word.starts_with("--") && word != "-O" && !word[2..].starts_with('.') {
                // `-O3`, `-O=3`, `-Odecode`: vLLM's optimisation level. `-O.x=…` is not
                // (`FlexibleArgumentParser.parse_args` leaves it to the dotted-key rewrite,
                // where it names the flag `-O`, if this version has one).
                return Some(("--optimization-level".into(), true));
            }
            // Dotted keys (`--compilation-config.mode 3`, `-cc.mode=3`) set a field of the flag
            // before the dot, whose value the engine builds as JSON.
            let (root, dotted) = match key.split_once('.') {
                Some((r, _)) => (r, true),
                None => (key, false),
            };
            let name = if let Some(rest) = root.strip_prefix("--") {
                format!("--{}", rest.replace('_', "-"))
            } else {
                root.to_string()
            };
            Some((name, inline || dotted))
        }
        EngineKind::Sglang => Some((key.to_string(), inline)),
    }
}

fn is_negative_number(word: &str) -> bool {
    let Some(rest) = word.strip_prefix('-') else {
        return false;
    };
    let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    !rest.is_empty() && digits(int) && digits(frac) && (int.len() + frac.len()) > 0 && rest != "."
}

/// Resolves one word of `EXTRA_ARGS` that starts with `-` against the installed engine's flags.
pub fn resolve<'a>(kind: EngineKind, word: &str, flags: &'a FlagSet) -> Resolved<'a> {
    if is_negative_number(word) {
        return Resolved::Number;
    }
    let Some((name, attached)) = engine_spelling(kind, word) else {
        return Resolved::Unknown;
    };
    let exact = |n: &str| flags.flags.iter().find(|f| f.names.iter().any(|x| x == n));
    if let Some(flag) = exact(&name) {
        return Resolved::Flag {
            flag,
            matched: name,
            attached,
        };
    }
    let all = flags.flags.iter().flat_map(|f| f.names.iter().map(move |n| (n, f)));
    if name.starts_with("--") {
        let candidates: Vec<&String> = all.filter(|(n, _)| n.starts_with(&name)).map(|(n, _)| n).collect();
        return match candidates.as_slice() {
            [] => Resolved::Unknown,
            [one] => Resolved::Shortened { full: (*one).clone() },
            many => Resolved::Ambiguous {
                candidates: many.iter().map(|s| (*s).clone()).collect(),
            },
        };
    }
    // `-xVALUE`: a one-letter flag with its value attached, unless the word also begins
    // another flag.
    let short: String = name.chars().take(2).collect();
    let mut found: Vec<(&String, &HelpFlag, bool)> = Vec::new();
    for (n, f) in all {
        if *n == short {
            found.push((n, f, true));
        } else if n.starts_with(&name) {
            found.push((n, f, false));
        }
    }
    match found.as_slice() {
        [] => Resolved::Unknown,
        [(n, f, true)] => Resolved::Flag {
            flag: f,
            matched: (*n).clone(),
            attached: true,
        },
        [(n, _, false)] => Resolved::Shortened { full: (*n).clone() },
        many => Resolved::Ambiguous {
            candidates: many.iter().map(|(n, _, _)| (*n).clone()).collect(),
        },
    }
}

/// Every flag argparse could take an option word for, however it resolves: each flag one of
/// whose names starts with the word as the engine spells it, and the one-letter flag it starts
/// with. The resolver's oracle (the fuzz targets check that a word the policy passes reaches
/// no code-loading flag through this wider net).
pub fn reachable<'a>(kind: EngineKind, word: &str, flags: &'a FlagSet) -> Vec<&'a HelpFlag> {
    if is_value(word) {
        return Vec::new();
    }
    let Some((spelled, _)) = engine_spelling(kind, word) else {
        return Vec::new();
    };
    let short: String = spelled.chars().take(2).collect();
    flags
        .flags
        .iter()
        .filter(|f| {
            f.names
                .iter()
                .any(|n| n.starts_with(&spelled) || (!spelled.starts_with("--") && *n == short))
        })
        .collect()
}

impl HelpFlag {
    /// Whether the flag takes a value (it prints a metavar or choices; a switch prints none).
    pub fn takes_value(&self) -> bool {
        self.metavar.is_some()
    }

    /// Whether it takes one or more values (`LORA_MODULES [LORA_MODULES ...]`).
    pub fn takes_many(&self) -> bool {
        self.metavar.as_deref().is_some_and(|m| m.contains("..."))
    }

    /// The name the console reports: the first long spelling.
    pub fn canonical(&self) -> &str {
        self.names
            .iter()
            .find(|n| n.starts_with("--"))
            .or(self.names.first())
            .map(String::as_str)
            .unwrap_or("")
    }
}

/// Whether argparse would take `word` as a value rather than as an option.
pub fn is_value(word: &str) -> bool {
    !word.starts_with('-') || word == "-" || is_negative_number(word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::help_flags::captured;

    fn full(kind: EngineKind, set: &FlagSet, word: &str) -> String {
        match resolve(kind, word, set) {
            Resolved::Flag { flag, .. } => format!("flag {}", flag.canonical()),
            Resolved::Shortened { full } => format!("short {full}"),
            Resolved::Ambiguous { candidates } => format!("ambiguous {}", candidates.len()),
            Resolved::Number => "number".into(),
            Resolved::Unknown => "unknown".into(),
        }
    }

    #[test]
    fn vllm_words_resolve_as_its_parser_reads_them() {
        let k = EngineKind::Vllm;
        let set = captured(k);
        assert!(set.flags.len() > 100, "the captured help is read");
        for (word, want) in [
            ("--trust-remote-code", "flag --trust-remote-code"),
            ("--trust_remote_code", "flag --trust-remote-code"),
            ("--no-trust-remote-code", "flag --trust-remote-code"),
            ("--trust-remote", "short --trust-remote-code"),
            ("--trust_remote_cod", "short --trust-remote-code"),
            ("--worker-extension", "short --worker-extension-cls"),
            ("--kv-transfer-config.kv_connector", "flag --kv-transfer-config"),
            ("--kv_transfer.kv_connector=x", "short --kv-transfer-config"),
            ("-cc.mode=3", "flag --compilation-config"),
            ("-tp", "flag --tensor-parallel-size"),
            ("-O3", "flag --optimization-level"),
            ("-O.backend=my.mod.fn", "unknown"),
            ("--max-num-seqs=8", "flag --max-num-seqs"),
            ("--enable", "ambiguous"),
            ("-1", "number"),
            ("-0.5", "number"),
            ("--zzz", "unknown"),
            ("-zz", "unknown"),
        ] {
            let got = full(k, set, word);
            assert!(got.starts_with(want), "{word}: {got}, wanted {want}");
        }
    }

    #[test]
    fn sglang_has_no_rewriting_and_the_same_prefixes() {
        let k = EngineKind::Sglang;
        let set = captured(k);
        assert_eq!(
            full(k, set, "--enable-custom-logit"),
            "short --enable-custom-logit-processor"
        );
        assert_eq!(full(k, set, "--model"), "flag --model-path");
        // SGLang's plain argparse does not read `_` as `-`: no flag starts with this.
        assert_eq!(full(k, set, "--trust_remote_code"), "unknown");
        assert_eq!(full(k, set, "--trust-remote-code"), "flag --trust-remote-code");
    }
}
