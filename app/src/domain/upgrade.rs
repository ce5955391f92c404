//! Upgrade preflight: what a profile meets when its installation moves to another engine
//! version (the runtime runbook's "After an upgrade").
//!
//! Both engines are argparse programs, so an upgrade breaks a profile in a few ways only,
//! each readable from the two versions' own `--help`: a flag the profile passes is gone
//! (argparse then refuses to start), it was renamed, it changed from a switch to a value or
//! back, a value the profile passes is no longer among the listed choices (a tool-call or
//! reasoning parser name), the flag is now deprecated, or the default of a flag the profile
//! leaves to the engine moved. The metrics half reads one scrape of the candidate (taken
//! during a change's gate) against the signals the console reads.

use super::engine::EngineKind;
use super::flagmap::{flags_in, FLAG_MAP};
use super::help_flags::{FlagSet, HelpFlag};
use super::prometheus::Sample;
use super::signals::SignalSource;
use serde::{Deserialize, Serialize};

/// Default changes listed beyond the profile's own flags, at most.
pub const MAX_OTHER_DEFAULTS: usize = 200;

/// One thing the new version does differently to this profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Finding {
    /// A flag the profile passes does not exist in the new version: the start would fail.
    Removed { flag: String, suggestion: Option<String> },
    /// A flag the profile passes is gone under this name and lives on under another.
    Renamed { flag: String, to: String },
    /// The flag changed between a switch and a flag that takes a value.
    Retyped { flag: String, from: String, to: String },
    /// A value the profile passes is no longer among the flag's listed choices.
    ValueGone {
        flag: String,
        value: String,
        suggestion: Option<String>,
    },
    /// The new version calls the flag deprecated; it still starts.
    Deprecated { flag: String, help: String },
    /// A flag the profile leaves to the engine has a new default.
    DefaultChanged {
        flag: String,
        from: Option<String>,
        to: Option<String>,
    },
}

impl Finding {
    /// Findings that make the start fail (argparse refuses the command line).
    pub fn blocks(&self) -> bool {
        matches!(
            self,
            Finding::Removed { .. } | Finding::Renamed { .. } | Finding::Retyped { .. } | Finding::ValueGone { .. }
        )
    }

    pub fn id(&self) -> &'static str {
        match self {
            Finding::Removed { .. } => "removed",
            Finding::Renamed { .. } => "renamed",
            Finding::Retyped { .. } => "retyped",
            Finding::ValueGone { .. } => "value-gone",
            Finding::Deprecated { .. } => "deprecated",
            Finding::DefaultChanged { .. } => "default-changed",
        }
    }

    pub fn flag(&self) -> &str {
        match self {
            Finding::Removed { flag, .. }
            | Finding::Renamed { flag, .. }
            | Finding::Retyped { flag, .. }
            | Finding::ValueGone { flag, .. }
            | Finding::Deprecated { flag, .. }
            | Finding::DefaultChanged { flag, .. } => flag,
        }
    }
}

/// Every finding kind, for the locale check.
pub const FINDING_IDS: &[&str] = &[
    "removed",
    "renamed",
    "retyped",
    "value-gone",
    "deprecated",
    "default-changed",
];

/// A default that moved on a flag the profile does not touch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct DefaultChange {
    pub flag: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// The flag half of the preflight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct FlagDiff {
    /// Flags of the profile's command line that were compared.
    pub checked: usize,
    pub findings: Vec<Finding>,
    /// Other flags whose default moved (the engine's behaviour changes under every profile).
    pub other_defaults: Vec<DefaultChange>,
    /// More default changes than `other_defaults` holds.
    pub other_defaults_left_out: usize,
}

impl FlagDiff {
    pub fn blocking(&self) -> usize {
        self.findings.iter().filter(|f| f.blocks()).count()
    }
}

/// What the candidate's `/metrics` lacked, as one gate found it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, crate::decode::FromWire)]
pub struct MetricsCheck {
    pub install: String,
    pub version: String,
    /// When the gate scraped it (ms since the epoch).
    pub at_ms: i64,
    /// The change whose gate scraped it.
    pub change: i64,
    pub missing: Vec<MissingSignal>,
}

/// The whole preflight of moving one profile to another installation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, crate::decode::FromWire)]
pub struct UpgradeCheck {
    pub profile: String,
    pub from_install: String,
    pub from_version: String,
    pub to_install: String,
    pub to_version: String,
    pub flags: FlagDiff,
    /// `None` until a gate has served the target installation at this version.
    pub metrics: Option<MetricsCheck>,
}

impl UpgradeCheck {
    /// Findings that make the candidate's start fail, and core signals the gate found missing.
    pub fn blocking(&self) -> usize {
        self.flags.blocking()
            + self
                .metrics
                .as_ref()
                .map_or(0, |m| m.missing.iter().filter(|s| s.core).count())
    }
}

/// The flag names a help text mentions (`--x`, `` `--x` ``, `--x.`), in order.
fn mentioned_flags(help: &str) -> impl Iterator<Item = &str> {
    help.split(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | '(' | ')' | ',' | ';'))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.trim_end_matches(['.', ':']))
}

/// The long name the old help points to in place of itself ("use --y instead", "replaced by --y").
fn pointed_replacement<'a>(old: &'a HelpFlag, new: &FlagSet) -> Option<&'a str> {
    let lower = old.help.to_ascii_lowercase();
    let hints = [
        "use ",
        "replaced by",
        "renamed to",
        "in favor of",
        "in favour of",
        "instead",
    ];
    if !hints.iter().any(|h| lower.contains(h)) {
        return None;
    }
    mentioned_flags(&old.help).find(|m| !old.names.iter().any(|n| n == m) && new.find(m).is_some())
}

/// A new flag whose help names the old one as its former spelling.
fn successor<'a>(old: &HelpFlag, new: &'a FlagSet) -> Option<&'a HelpFlag> {
    new.flags.iter().find(|f| {
        let lower = f.help.to_ascii_lowercase();
        (lower.contains("formerly") || lower.contains("replaces") || lower.contains("renamed from"))
            && mentioned_flags(&f.help).any(|m| old.names.iter().any(|n| n == m))
    })
}

/// What a flag takes, as far as argparse's command line is concerned.
fn shape(flag: &HelpFlag) -> &'static str {
    match (&flag.metavar, flag.choices()) {
        (None, _) => "switch",
        (Some(_), Some(_)) => "choice",
        (Some(_), None) => "value",
    }
}

fn long_name(flag: &HelpFlag) -> &str {
    flag.names
        .iter()
        .find(|n| n.starts_with("--"))
        .or(flag.names.first())
        .map(String::as_str)
        .unwrap_or("")
}

/// Compares what the profile's command line (`argv`, the engine's arguments as rendered for
/// it) meets in `old` and in `new`. Flags the old version did not know either are the flag
/// check's business, not the upgrade's, and are left out.
pub fn compare_flags(kind: EngineKind, old: &FlagSet, new: &FlagSet, argv: &[String]) -> FlagDiff {
    let used = flags_in(argv);
    let mut diff = FlagDiff::default();
    let mut seen: Vec<String> = Vec::new();
    for spelled in &used {
        let root = spelled.split('.').next().unwrap_or(spelled);
        let Some(before) = old.find(root) else { continue };
        let canonical = long_name(before).to_string();
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        diff.checked += 1;
        let Some(after) = new.find(root) else {
            let renamed = pointed_replacement(before, new)
                .map(str::to_string)
                .or_else(|| successor(before, new).map(|f| long_name(f).to_string()));
            diff.findings.push(match renamed {
                Some(to) => Finding::Renamed {
                    flag: root.to_string(),
                    to,
                },
                None => Finding::Removed {
                    flag: root.to_string(),
                    suggestion: super::profile::closest(root, new.long_names()).map(str::to_string),
                },
            });
            continue;
        };
        let (from, to) = (shape(before), shape(after));
        // Choices and free values are both "takes a value" on the command line; a choice list
        // that drops the profile's value is reported below as a value that is gone.
        if (from == "switch") != (to == "switch") {
            diff.findings.push(Finding::Retyped {
                flag: root.to_string(),
                from: before.metavar.clone().unwrap_or_else(|| "switch".into()),
                to: after.metavar.clone().unwrap_or_else(|| "switch".into()),
            });
            continue;
        }
        if after.deprecated && !before.deprecated {
            diff.findings.push(Finding::Deprecated {
                flag: root.to_string(),
                help: after.help.chars().take(300).collect(),
            });
        }
    }
    // Values: only those the old version accepted, so a finding is the upgrade's doing.
    let old_bad: Vec<(String, String)> = old.bad_values(argv).into_iter().map(|b| (b.flag, b.value)).collect();
    for b in new.bad_values(argv) {
        if old_bad.iter().any(|(f, v)| *f == b.flag && *v == b.value) {
            continue;
        }
        // A flag already reported retyped reads the next word as its value: one finding is enough.
        if diff.findings.iter().any(|f| f.blocks() && f.flag() == b.flag) {
            continue;
        }
        // A renamed value keeps its stem (`llama3_json` → `llama3`): that beats the nearest
        // spelling, which may be another model family's parser (`llama4_json`).
        let stem = b
            .choices
            .iter()
            .filter(|c| c.len() >= 3 && (b.value.starts_with(c.as_str()) || c.starts_with(b.value.as_str())))
            .max_by_key(|c| c.len())
            .cloned();
        let suggestion = stem.or(b.suggestion);
        diff.findings.push(Finding::ValueGone {
            flag: b.flag,
            value: b.value,
            suggestion,
        });
    }
    // Defaults: the flags of the runbook's flag map that this profile leaves to the engine.
    let mut relied: Vec<&str> = Vec::new();
    for row in FLAG_MAP {
        let Some(flag) = row.flag(kind) else { continue };
        let set = old
            .find(flag)
            .is_some_and(|f| used.iter().any(|u| f.names.iter().any(|n| n == u)));
        if !set {
            relied.push(flag);
        }
    }
    for before in &old.flags {
        let Some(after) = new.find(long_name(before)) else {
            continue;
        };
        if before.default == after.default {
            continue;
        }
        let flag = long_name(before).to_string();
        let set_here = used.iter().any(|u| before.names.iter().any(|n| n == u));
        if set_here {
            // The profile says what it wants; the default does not reach it.
            continue;
        }
        if relied.iter().any(|r| before.names.iter().any(|n| n == r)) {
            diff.findings.push(Finding::DefaultChanged {
                flag,
                from: before.default.clone(),
                to: after.default.clone(),
            });
        } else if diff.other_defaults.len() < MAX_OTHER_DEFAULTS {
            diff.other_defaults.push(DefaultChange {
                flag,
                from: before.default.clone(),
                to: after.default.clone(),
            });
        } else {
            diff.other_defaults_left_out += 1;
        }
    }
    diff
}

/// The signals the console reads (`signals::normalise`), with each engine's names.
pub fn signal_sources() -> &'static [SignalSource] {
    super::signals::SOURCES
}

/// The signals a release of this engine is expected to serve: those every real release the
/// console was checked on serves (tested against the captured `/metrics` of both engines).
pub fn expected_signals(kind: EngineKind) -> &'static [&'static str] {
    match kind {
        EngineKind::Vllm => &[
            "running",
            "waiting",
            "kv",
            "preemptions",
            "prefix-queries",
            "prefix-hits",
            "prompt",
            "generation",
            "iterations",
            "ttft",
            "itl",
            "queue",
        ],
        EngineKind::Sglang => &[
            "running",
            "waiting",
            "kv",
            "prefix-rate",
            "prompt",
            "generation",
            "ttft",
            "itl",
            "queue",
        ],
    }
}

/// A signal the candidate's scrape has no source for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct MissingSignal {
    pub signal: String,
    /// The names the console would read it from.
    pub names: Vec<String>,
    pub core: bool,
}

/// The expected signals that a scrape serves under none of the names the console reads: a
/// metric the new version renamed or dropped.
pub fn missing_signals(kind: EngineKind, samples: &[Sample]) -> Vec<MissingSignal> {
    let prefix = match kind {
        EngineKind::Vllm => "vllm:",
        EngineKind::Sglang => "sglang:",
    };
    let expected = expected_signals(kind);
    signal_sources()
        .iter()
        .filter(|s| expected.contains(&s.signal))
        .filter_map(|s| {
            let names: Vec<&str> = s.names.iter().copied().filter(|n| n.starts_with(prefix)).collect();
            let served = names.iter().any(|n| {
                samples.iter().any(|x| {
                    if s.histogram {
                        x.name.strip_prefix(*n).is_some_and(|rest| rest == "_bucket")
                    } else {
                        x.name == *n
                    }
                })
            });
            (!served).then(|| MissingSignal {
                signal: s.signal.to_string(),
                names: names.iter().map(|n| n.to_string()).collect(),
                core: s.core,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::help_flags::parse_help;

    const OLD: &str = "options:\n  --max-num-seqs MAX_NUM_SEQS\n                        Maximum number of sequences. (default: None)\n  --gpu-memory-utilization GPU_MEMORY_UTILIZATION\n                        The fraction of GPU memory. (default: 0.9)\n  --disable-log-stats   Disable logging statistics. (default: False)\n  --swap-space SWAP_SPACE\n                        CPU swap space in GiB. (default: 4)\n  --enable-prefix-caching, --no-enable-prefix-caching\n                        Enable prefix caching. (default: None)\n  --tool-call-parser {hermes,llama3_json,mistral}\n                        The tool parser. (default: None)\n  --old-name OLD_NAME   Deprecated: use --new-name instead. (default: 1)\n  --block-size BLOCK_SIZE\n                        Block size. (default: 16)\n";
    const NEW: &str = "options:\n  --max-num-seqs MAX_NUM_SEQS\n                        Maximum number of sequences. (default: None)\n  --gpu-memory-utilization GPU_MEMORY_UTILIZATION\n                        The fraction of GPU memory. (default: 0.92)\n  --disable-log-stats   Deprecated. Statistics are always logged. (default: False)\n  --enable-prefix-caching ENABLE_PREFIX_CACHING\n                        Enable prefix caching. (default: None)\n  --tool-call-parser {hermes,llama3,mistral}\n                        The tool parser. (default: None)\n  --new-name NEW_NAME   The new spelling. (default: 1)\n  --block-size BLOCK_SIZE\n                        Block size. (default: 32)\n";

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_kind_of_break_is_named_with_its_flag() {
        let (old, new) = (parse_help(OLD), parse_help(NEW));
        let a = argv(&[
            "serve",
            "/m",
            "--max-num-seqs",
            "8",
            "--swap-space",
            "4",
            "--enable-prefix-caching",
            "--tool-call-parser",
            "llama3_json",
            "--old-name",
            "2",
            "--disable-log-stats",
        ]);
        let d = compare_flags(EngineKind::Vllm, &old, &new, &a);
        let ids: Vec<(&str, &str)> = d.findings.iter().map(|f| (f.id(), f.flag())).collect();
        assert!(ids.contains(&("removed", "--swap-space")), "{ids:?}");
        assert!(ids.contains(&("retyped", "--enable-prefix-caching")), "{ids:?}");
        assert!(ids.contains(&("renamed", "--old-name")), "{ids:?}");
        assert!(ids.contains(&("deprecated", "--disable-log-stats")), "{ids:?}");
        assert!(ids.contains(&("value-gone", "--tool-call-parser")), "{ids:?}");
        // The profile leaves the memory fraction to the engine: its new default is its business.
        assert!(
            ids.contains(&("default-changed", "--gpu-memory-utilization")),
            "{ids:?}"
        );
        assert!(!ids.iter().any(|(_, f)| *f == "--max-num-seqs"), "{ids:?}");
        assert_eq!(d.blocking(), 4);
        match d.findings.iter().find(|f| f.id() == "renamed") {
            Some(Finding::Renamed { to, .. }) => assert_eq!(to, "--new-name"),
            other => panic!("{other:?}"),
        }
        match d.findings.iter().find(|f| f.id() == "value-gone") {
            Some(Finding::ValueGone { value, suggestion, .. }) => {
                assert_eq!(value, "llama3_json");
                assert_eq!(suggestion.as_deref(), Some("llama3"));
            }
            other => panic!("{other:?}"),
        }
        // The block size is not the profile's: listed apart, not as a finding.
        assert_eq!(d.other_defaults.len(), 1);
        assert_eq!(d.other_defaults[0].flag, "--block-size");
    }

    #[test]
    fn the_same_help_on_both_sides_finds_nothing() {
        let old = parse_help(OLD);
        let a = argv(&["serve", "/m", "--swap-space", "4", "--tool-call-parser", "hermes"]);
        let d = compare_flags(EngineKind::Vllm, &old, &old, &a);
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        assert!(d.other_defaults.is_empty());
        assert_eq!(d.checked, 2);
    }

    #[test]
    fn a_profile_that_sets_the_flag_is_not_told_about_its_default() {
        let (old, new) = (parse_help(OLD), parse_help(NEW));
        let a = argv(&["serve", "/m", "--gpu-memory-utilization", "0.85"]);
        let d = compare_flags(EngineKind::Vllm, &old, &new, &a);
        assert!(
            !d.findings.iter().any(|f| f.flag() == "--gpu-memory-utilization"),
            "{:?}",
            d.findings
        );
    }

    #[test]
    fn the_captured_helps_against_themselves_find_nothing_and_against_each_other_refuse() {
        let dir = format!("{}/../testdata/help", env!("CARGO_MANIFEST_DIR"));
        for (kind, file, a) in [
            (
                EngineKind::Vllm,
                "vllm-0.33.0-serve-help-all.txt",
                vec![
                    "serve",
                    "/m",
                    "--max-num-seqs",
                    "8",
                    "--tool-call-parser",
                    "hermes",
                    "--enable-auto-tool-choice",
                ],
            ),
            (
                EngineKind::Sglang,
                "sglang-0.5.23-launch-server-help.txt",
                vec![
                    "--model-path",
                    "/m",
                    "--max-running-requests",
                    "8",
                    "--tool-call-parser",
                    "qwen25",
                ],
            ),
        ] {
            let help = parse_help(&std::fs::read_to_string(format!("{dir}/{file}")).unwrap());
            let d = compare_flags(kind, &help, &help, &argv(&a));
            assert!(d.findings.is_empty() && d.other_defaults.is_empty(), "{file}: {d:?}");
            assert!(d.checked >= 2, "{file}: {d:?}");
        }
        // vLLM's flags read against SGLang's help: most are gone, none panics.
        let vllm = parse_help(&std::fs::read_to_string(format!("{dir}/vllm-0.33.0-serve-help-all.txt")).unwrap());
        let sglang =
            parse_help(&std::fs::read_to_string(format!("{dir}/sglang-0.5.23-launch-server-help.txt")).unwrap());
        let d = compare_flags(
            EngineKind::Vllm,
            &vllm,
            &sglang,
            &argv(&["serve", "/m", "--max-num-seqs", "8", "--gpu-memory-utilization", "0.9"]),
        );
        assert!(
            d.findings
                .iter()
                .any(|f| f.id() == "removed" && f.flag() == "--max-num-seqs"),
            "{d:?}"
        );
    }

    #[test]
    fn the_real_captured_metrics_serve_every_expected_signal() {
        for (kind, file) in [
            (EngineKind::Vllm, "vllm-v1-metrics.prom"),
            (EngineKind::Sglang, "sglang-metrics.prom"),
        ] {
            let path = format!("{}/../testdata/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
            let body = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let parsed = crate::domain::prometheus::parse(&body);
            assert_eq!(missing_signals(kind, &parsed.samples), vec![], "{file}");
        }
    }

    #[test]
    fn a_renamed_metric_is_a_missing_signal_and_core_ones_are_marked() {
        let body = "vllm:num_requests_running 1\nvllm:num_requests_queued 2\nvllm:kv_cache_usage_perc 0.5\n";
        let parsed = crate::domain::prometheus::parse(body);
        let missing = missing_signals(EngineKind::Vllm, &parsed.samples);
        let waiting = missing
            .iter()
            .find(|m| m.signal == "waiting")
            .expect("waiting is missing");
        assert!(waiting.core);
        assert_eq!(waiting.names, vec!["vllm:num_requests_waiting"]);
        assert!(!missing.iter().any(|m| m.signal == "running" || m.signal == "kv"));
        assert!(missing.iter().any(|m| m.signal == "ttft" && !m.core));
    }
}
