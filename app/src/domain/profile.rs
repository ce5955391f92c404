//! Launch profiles: the runbook's `profiles/<name>.env`, as a typed, validated value.
//!
//! A profile names *which* engine installation runs it (host configuration decides what that
//! installation's executable is) and every setting of the runbook's flag order. Validation
//! reports every problem at once, each naming its field and line, and separates errors (the
//! profile cannot be saved or served) from warnings (it can, but the runbook advises against it).

use super::envfile::{self, Assignment};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A launch profile. Field order is the runbook's flag order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Profile {
    pub name: String,
    /// Engine installation, by its name in host configuration.
    pub engine: String,
    /// Path to the weights directory, under the configured models root.
    pub model: String,
    pub served_model_name: Option<String>,
    pub tensor_parallel: u32,
    pub context_length: Option<u32>,
    /// `--gpu-memory-utilization` (vLLM) / `--mem-fraction-static` (SGLang).
    pub mem_fraction: Option<f64>,
    pub tool_call_parser: Option<String>,
    pub reasoning_parser: Option<String>,
    pub quantization: Option<String>,
    pub kv_cache_dtype: Option<String>,
    /// `--max-num-seqs` / `--max-running-requests`.
    pub max_running_requests: Option<u32>,
    /// `--max-num-batched-tokens` / `--chunked-prefill-size`.
    pub max_batched_tokens: Option<u32>,
    /// vLLM's `--speculative-config` JSON object; mapped to SGLang's separate flags.
    pub speculative_config: Option<String>,
    pub host: String,
    /// `None` means the engine's default port.
    pub port: Option<u16>,
    pub extra_args: Vec<String>,
    /// Extra environment for the engine process (`ENV_<NAME>=value` in the file).
    pub env: BTreeMap<String, String>,
}

/// The keys a profile file may contain, in the order [`Profile::to_env`] writes them.
pub const KEYS: &[&str] = &[
    "ENGINE",
    "MODEL",
    "SERVED_MODEL_NAME",
    "TENSOR_PARALLEL",
    "CONTEXT_LENGTH",
    "MEM_FRACTION",
    "TOOL_CALL_PARSER",
    "REASONING_PARSER",
    "QUANTIZATION",
    "KV_CACHE_DTYPE",
    "MAX_RUNNING_REQUESTS",
    "MAX_BATCHED_TOKENS",
    "SPECULATIVE_CONFIG",
    "HOST",
    "PORT",
    "EXTRA_ARGS",
];

/// Prefix of keys that become environment variables of the engine process.
pub const ENV_PREFIX: &str = "ENV_";

/// Variables the console always sets for engines (air-gap); a profile may not override them.
pub const AIR_GAP_ENV: &[(&str, &str)] = &[
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("VLLM_NO_USAGE_STATS", "1"),
    ("DO_NOT_TRACK", "1"),
];

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub enum Severity {
    Error,
    Warning,
}

/// What is wrong with a field; each variant has a Fluent message `profile-issue-<code>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum IssueKind {
    /// The file itself could not be read (quoting, duplicates, not an assignment).
    Syntax {
        detail: String,
    },
    UnknownKey {
        suggestion: Option<String>,
    },
    Required,
    NotPositiveInteger {
        value: String,
    },
    FractionRange {
        value: String,
    },
    /// Memory fraction above 0.92: the runbook's 0.85–0.92 band is exceeded.
    FractionAboveAdvised {
        value: String,
    },
    /// Memory fraction above 0.95: OOM in prefill is expected.
    FractionOomRisk {
        value: String,
    },
    PortRange {
        value: String,
    },
    BadName {
        value: String,
    },
    BadHost {
        value: String,
    },
    BadWord {
        value: String,
    },
    NotJsonObject {
        detail: String,
    },
    ReservedEnv {
        value: String,
    },
    BadEnvName {
        value: String,
    },
    RelativeModelPath {
        value: String,
    },
    UnknownEngine {
        value: String,
    },
    /// An environment variable a profile may not set (`domain::launch`); `reason` is one of
    /// `linker`, `python`, `runs`, `loads`, `not-listed`.
    EnvNotAllowed {
        value: String,
        reason: String,
    },
    /// A flag in `EXTRA_ARGS` that is refused; `reason` is `code` (it loads code),
    /// `abbreviation` (of `flag`) or `load-format` (`flag` lists the allowed formats).
    FlagNotAllowed {
        value: String,
        reason: String,
        flag: String,
    },
    /// A flag in `EXTRA_ARGS` that the profile's `field` already renders as `flag`.
    FlagRepeatsField {
        value: String,
        flag: String,
        field: String,
    },
    /// A path outside the models root.
    PathOutsideModels {
        value: String,
    },
}

impl IssueKind {
    /// The Fluent message id for this kind of issue.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Syntax { .. } => "syntax",
            Self::UnknownKey { .. } => "unknown-key",
            Self::Required => "required",
            Self::NotPositiveInteger { .. } => "not-positive-integer",
            Self::FractionRange { .. } => "fraction-range",
            Self::FractionAboveAdvised { .. } => "fraction-above-advised",
            Self::FractionOomRisk { .. } => "fraction-oom-risk",
            Self::PortRange { .. } => "port-range",
            Self::BadName { .. } => "bad-name",
            Self::BadHost { .. } => "bad-host",
            Self::BadWord { .. } => "bad-word",
            Self::NotJsonObject { .. } => "not-json-object",
            Self::ReservedEnv { .. } => "reserved-env",
            Self::BadEnvName { .. } => "bad-env-name",
            Self::RelativeModelPath { .. } => "relative-model-path",
            Self::UnknownEngine { .. } => "unknown-engine",
            Self::EnvNotAllowed { .. } => "env-not-allowed",
            Self::FlagNotAllowed { .. } => "flag-not-allowed",
            Self::FlagRepeatsField { .. } => "flag-repeats-field",
            Self::PathOutsideModels { .. } => "path-outside-models",
        }
    }

    /// The arguments the Fluent message needs (`value`, `detail`, `suggestion`).
    pub fn args(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Syntax { detail } | Self::NotJsonObject { detail } => {
                vec![("detail", detail.clone())]
            }
            Self::UnknownKey { suggestion } => {
                vec![("suggestion", suggestion.clone().unwrap_or_else(|| "-".into()))]
            }
            Self::Required => vec![],
            Self::NotPositiveInteger { value }
            | Self::FractionRange { value }
            | Self::FractionAboveAdvised { value }
            | Self::FractionOomRisk { value }
            | Self::PortRange { value }
            | Self::BadName { value }
            | Self::BadHost { value }
            | Self::BadWord { value }
            | Self::ReservedEnv { value }
            | Self::BadEnvName { value }
            | Self::RelativeModelPath { value }
            | Self::PathOutsideModels { value }
            | Self::UnknownEngine { value } => vec![("value", value.clone())],
            Self::EnvNotAllowed { value, reason } => vec![("value", value.clone()), ("reason", reason.clone())],
            Self::FlagNotAllowed { value, reason, flag } => vec![
                ("value", value.clone()),
                ("reason", reason.clone()),
                ("flag", flag.clone()),
            ],
            Self::FlagRepeatsField { value, flag, field } => vec![
                ("value", value.clone()),
                ("flag", flag.clone()),
                ("field", field.clone()),
            ],
        }
    }
}

/// One finding of validation, naming the field (the file's key) and, when known, the line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Issue {
    pub field: String,
    pub line: Option<usize>,
    pub severity: Severity,
    pub kind: IssueKind,
}

impl Issue {
    fn error(field: &str, line: Option<usize>, kind: IssueKind) -> Self {
        Self {
            field: field.to_string(),
            line,
            severity: Severity::Error,
            kind,
        }
    }
}

impl std::fmt::Display for Issue {
    /// A plain English rendering for logs; the UI and CLI use the Fluent messages instead.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        write!(f, "{}: {}", self.field, self.kind.code())?;
        for (k, v) in self.kind.args() {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

/// Whether a profile name is usable as a file name and a URL segment: `[a-z0-9_-]{1,64}`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn valid_host(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
        || (!host.is_empty()
            && host.len() <= 253
            && host.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !label.starts_with('-')
            }))
}

/// The closest of `candidates` to `word` by edit distance, if it is close enough to be a typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_ascii_lowercase().replace('_', "-");
    candidates
        .into_iter()
        .map(|c| (levenshtein(&word, &c.to_ascii_lowercase().replace('_', "-")), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance between two strings, by characters.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

impl Profile {
    /// A minimal profile for `engine` serving `model`; every optional setting unset.
    pub fn new(name: &str, engine: &str, model: &str) -> Self {
        Self {
            name: name.to_string(),
            engine: engine.to_string(),
            model: model.to_string(),
            served_model_name: None,
            tensor_parallel: 1,
            context_length: None,
            mem_fraction: None,
            tool_call_parser: None,
            reasoning_parser: None,
            quantization: None,
            kv_cache_dtype: None,
            max_running_requests: None,
            max_batched_tokens: None,
            speculative_config: None,
            host: "127.0.0.1".to_string(),
            port: None,
            extra_args: Vec::new(),
            env: BTreeMap::new(),
        }
    }

    /// The name clients address the model by: the served name, else the model path.
    pub fn model_name(&self) -> &str {
        self.served_model_name.as_deref().unwrap_or(&self.model)
    }

    /// Reads a profile file. On success the profile may still carry warnings (returned
    /// alongside); on failure every error found is returned, not only the first.
    pub fn from_env(name: &str, text: &str) -> Result<(Profile, Vec<Issue>), Vec<Issue>> {
        let assignments = envfile::parse(text).map_err(|e| {
            vec![Issue::error(
                e.key().unwrap_or("FILE"),
                Some(e.line()),
                IssueKind::Syntax { detail: e.message() },
            )]
        })?;
        Self::from_assignments(name, &assignments)
    }

    fn from_assignments(name: &str, items: &[Assignment]) -> Result<(Profile, Vec<Issue>), Vec<Issue>> {
        let mut issues = Vec::new();
        let mut profile = Profile::new(name, "", "");
        let mut seen_engine = false;
        let mut seen_model = false;
        for a in items {
            let line = Some(a.line);
            let v = a.value.as_str();
            let opt = |v: &str| {
                if v.is_empty() {
                    None
                } else {
                    Some(v.to_string())
                }
            };
            let pos_int = |issues: &mut Vec<Issue>| -> Option<u32> {
                if v.is_empty() {
                    return None;
                }
                match v.parse::<u32>() {
                    Ok(n) if n > 0 => Some(n),
                    _ => {
                        issues.push(Issue::error(
                            &a.key,
                            line,
                            IssueKind::NotPositiveInteger { value: v.into() },
                        ));
                        None
                    }
                }
            };
            match a.key.as_str() {
                "ENGINE" => {
                    seen_engine = true;
                    profile.engine = v.to_string();
                }
                "MODEL" => {
                    seen_model = true;
                    profile.model = v.to_string();
                }
                "SERVED_MODEL_NAME" => profile.served_model_name = opt(v),
                "TENSOR_PARALLEL" => {
                    if v.is_empty() {
                        issues.push(Issue::error(
                            &a.key,
                            line,
                            IssueKind::NotPositiveInteger { value: v.into() },
                        ));
                    } else if let Some(n) = pos_int(&mut issues) {
                        profile.tensor_parallel = n;
                    }
                }
                "CONTEXT_LENGTH" => profile.context_length = pos_int(&mut issues),
                "MEM_FRACTION" => {
                    if !v.is_empty() {
                        match v.parse::<f64>() {
                            Ok(f) if f > 0.0 && f <= 1.0 => profile.mem_fraction = Some(f),
                            _ => issues.push(Issue::error(&a.key, line, IssueKind::FractionRange { value: v.into() })),
                        }
                    }
                }
                "TOOL_CALL_PARSER" => profile.tool_call_parser = opt(v),
                "REASONING_PARSER" => profile.reasoning_parser = opt(v),
                "QUANTIZATION" => profile.quantization = opt(v),
                "KV_CACHE_DTYPE" => profile.kv_cache_dtype = opt(v),
                "MAX_RUNNING_REQUESTS" => profile.max_running_requests = pos_int(&mut issues),
                "MAX_BATCHED_TOKENS" => profile.max_batched_tokens = pos_int(&mut issues),
                "SPECULATIVE_CONFIG" => profile.speculative_config = opt(v),
                "HOST" => profile.host = v.to_string(),
                "PORT" => {
                    if !v.is_empty() {
                        match v.parse::<u16>() {
                            Ok(p) if p > 0 => profile.port = Some(p),
                            _ => issues.push(Issue::error(&a.key, line, IssueKind::PortRange { value: v.into() })),
                        }
                    }
                }
                "EXTRA_ARGS" => match envfile::split_words(v) {
                    Ok(words) => profile.extra_args = words,
                    Err(e) => issues.push(Issue::error(&a.key, line, IssueKind::Syntax { detail: e.to_string() })),
                },
                key if key.starts_with(ENV_PREFIX) && key.len() > ENV_PREFIX.len() => {
                    profile.env.insert(key[ENV_PREFIX.len()..].to_string(), v.to_string());
                }
                key => {
                    let suggestion = closest(key, KEYS.iter().copied()).map(str::to_string);
                    issues.push(Issue::error(key, line, IssueKind::UnknownKey { suggestion }));
                }
            }
        }
        if !seen_engine {
            issues.push(Issue::error("ENGINE", None, IssueKind::Required));
        }
        if !seen_model {
            issues.push(Issue::error("MODEL", None, IssueKind::Required));
        }
        let line_of = |key: &str| items.iter().find(|a| a.key == key).map(|a| a.line);
        for mut issue in profile.validate() {
            if issue.line.is_none() {
                issue.line = line_of(&issue.field);
            }
            if !issues
                .iter()
                .any(|i| i.field == issue.field && i.kind.code() == issue.kind.code())
            {
                issues.push(issue);
            }
        }
        if issues.iter().any(|i| i.severity == Severity::Error) {
            Err(issues)
        } else {
            Ok((profile, issues))
        }
    }

    /// Checks the profile as a value (whatever its origin: file, form, database).
    pub fn validate(&self) -> Vec<Issue> {
        let mut out = Vec::new();
        if !valid_name(&self.name) {
            out.push(Issue::error(
                "NAME",
                None,
                IssueKind::BadName {
                    value: self.name.clone(),
                },
            ));
        }
        if self.engine.is_empty() {
            out.push(Issue::error("ENGINE", None, IssueKind::Required));
        }
        if self.model.is_empty() {
            out.push(Issue::error("MODEL", None, IssueKind::Required));
        } else if !self.model.starts_with('/') {
            out.push(Issue::error(
                "MODEL",
                None,
                IssueKind::RelativeModelPath {
                    value: self.model.clone(),
                },
            ));
        }
        if self.tensor_parallel == 0 {
            out.push(Issue::error(
                "TENSOR_PARALLEL",
                None,
                IssueKind::NotPositiveInteger { value: "0".into() },
            ));
        }
        for (field, v) in [
            ("CONTEXT_LENGTH", self.context_length),
            ("MAX_RUNNING_REQUESTS", self.max_running_requests),
            ("MAX_BATCHED_TOKENS", self.max_batched_tokens),
        ] {
            if v == Some(0) {
                out.push(Issue::error(
                    field,
                    None,
                    IssueKind::NotPositiveInteger { value: "0".into() },
                ));
            }
        }
        if let Some(f) = self.mem_fraction {
            let value = f.to_string();
            if !(f > 0.0 && f <= 1.0) {
                out.push(Issue::error("MEM_FRACTION", None, IssueKind::FractionRange { value }));
            } else if f > 0.95 {
                out.push(Issue {
                    severity: Severity::Warning,
                    ..Issue::error("MEM_FRACTION", None, IssueKind::FractionOomRisk { value })
                });
            } else if f > 0.92 {
                out.push(Issue {
                    severity: Severity::Warning,
                    ..Issue::error("MEM_FRACTION", None, IssueKind::FractionAboveAdvised { value })
                });
            }
        }
        if self.port == Some(0) {
            out.push(Issue::error("PORT", None, IssueKind::PortRange { value: "0".into() }));
        }
        if !valid_host(&self.host) {
            out.push(Issue::error(
                "HOST",
                None,
                IssueKind::BadHost {
                    value: self.host.clone(),
                },
            ));
        }
        for (field, v) in [
            ("SERVED_MODEL_NAME", &self.served_model_name),
            ("TOOL_CALL_PARSER", &self.tool_call_parser),
            ("REASONING_PARSER", &self.reasoning_parser),
            ("QUANTIZATION", &self.quantization),
            ("KV_CACHE_DTYPE", &self.kv_cache_dtype),
        ] {
            if let Some(v) = v {
                if v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()) || v.starts_with('-') {
                    out.push(Issue::error(field, None, IssueKind::BadWord { value: v.clone() }));
                }
            }
        }
        if let Some(spec) = &self.speculative_config {
            match serde_json::from_str::<serde_json::Value>(spec) {
                Ok(serde_json::Value::Object(_)) => {}
                Ok(_) => out.push(Issue::error(
                    "SPECULATIVE_CONFIG",
                    None,
                    IssueKind::NotJsonObject {
                        detail: "not an object".into(),
                    },
                )),
                Err(e) => out.push(Issue::error(
                    "SPECULATIVE_CONFIG",
                    None,
                    IssueKind::NotJsonObject { detail: e.to_string() },
                )),
            }
        }
        for key in self.env.keys() {
            let field = format!("{ENV_PREFIX}{key}");
            let valid = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                out.push(Issue::error(&field, None, IssueKind::BadEnvName { value: key.clone() }));
            } else if AIR_GAP_ENV.iter().any(|(k, _)| k == key) {
                out.push(Issue::error(
                    &field,
                    None,
                    IssueKind::ReservedEnv { value: key.clone() },
                ));
            }
        }
        out
    }

    /// Writes the profile in canonical form: known keys in flag order, unset ones omitted,
    /// then `ENV_*` sorted. Reading the result back gives an equal profile.
    pub fn to_env(&self) -> String {
        let mut out = String::new();
        let mut put = |key: &str, value: Option<String>| {
            if let Some(v) = value {
                out.push_str(key);
                out.push('=');
                out.push_str(&envfile::quote(&v));
                out.push('\n');
            }
        };
        put("ENGINE", Some(self.engine.clone()));
        put("MODEL", Some(self.model.clone()));
        put("SERVED_MODEL_NAME", self.served_model_name.clone());
        put("TENSOR_PARALLEL", Some(self.tensor_parallel.to_string()));
        put("CONTEXT_LENGTH", self.context_length.map(|v| v.to_string()));
        put("MEM_FRACTION", self.mem_fraction.map(|v| v.to_string()));
        put("TOOL_CALL_PARSER", self.tool_call_parser.clone());
        put("REASONING_PARSER", self.reasoning_parser.clone());
        put("QUANTIZATION", self.quantization.clone());
        put("KV_CACHE_DTYPE", self.kv_cache_dtype.clone());
        put("MAX_RUNNING_REQUESTS", self.max_running_requests.map(|v| v.to_string()));
        put("MAX_BATCHED_TOKENS", self.max_batched_tokens.map(|v| v.to_string()));
        put("SPECULATIVE_CONFIG", self.speculative_config.clone());
        put("HOST", Some(self.host.clone()));
        put("PORT", self.port.map(|v| v.to_string()));
        if !self.extra_args.is_empty() {
            put("EXTRA_ARGS", Some(envfile::join_words(&self.extra_args)));
        }
        for (k, v) in &self.env {
            put(&format!("{ENV_PREFIX}{k}"), Some(v.clone()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "ENGINE=vllm-0-33\nMODEL=/models/qwen3-8b\nSERVED_MODEL_NAME=qwen3-8b\nTENSOR_PARALLEL=2\nCONTEXT_LENGTH=32768\nMEM_FRACTION=0.9\nTOOL_CALL_PARSER=hermes\nREASONING_PARSER=qwen3\nQUANTIZATION=fp8\nKV_CACHE_DTYPE=fp8\nMAX_RUNNING_REQUESTS=128\nMAX_BATCHED_TOKENS=8192\nSPECULATIVE_CONFIG='{\"method\":\"eagle3\",\"model\":\"/models/eagle\",\"num_speculative_tokens\":3}'\nHOST=127.0.0.1\nPORT=8000\nEXTRA_ARGS='--enable-prefix-caching --chat-template /models/t.jinja'\nENV_CUDA_VISIBLE_DEVICES=0,1\n";

    fn codes(issues: &[Issue]) -> Vec<(String, &'static str)> {
        issues.iter().map(|i| (i.field.clone(), i.kind.code())).collect()
    }

    #[test]
    fn canonical_file_round_trips_byte_for_byte() {
        let (p, warnings) = Profile::from_env("qwen3", FULL).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            p.extra_args,
            vec!["--enable-prefix-caching", "--chat-template", "/models/t.jinja"]
        );
        assert_eq!(p.to_env(), FULL);
    }

    #[test]
    fn every_invalid_field_is_named() {
        let text = "ENGINE=e\nMODEL=models/x\nTENSOR_PARALLEL=0\nCONTEXT_LENGTH=-5\nMEM_FRACTION=1.5\nPORT=70000\nHOST=bad host\nTOOL_CALL_PARSR=hermes\nSPECULATIVE_CONFIG=[1]\nENV_HF_HUB_OFFLINE=0\nMAX_RUNNING_REQUESTS=x\nQUANTIZATION=--evil\n";
        let issues = Profile::from_env("ok", text).unwrap_err();
        let got = codes(&issues);
        for want in [
            ("MODEL", "relative-model-path"),
            ("TENSOR_PARALLEL", "not-positive-integer"),
            ("CONTEXT_LENGTH", "not-positive-integer"),
            ("MEM_FRACTION", "fraction-range"),
            ("PORT", "port-range"),
            ("HOST", "bad-host"),
            ("TOOL_CALL_PARSR", "unknown-key"),
            ("SPECULATIVE_CONFIG", "not-json-object"),
            ("ENV_HF_HUB_OFFLINE", "reserved-env"),
            ("MAX_RUNNING_REQUESTS", "not-positive-integer"),
            ("QUANTIZATION", "bad-word"),
        ] {
            assert!(
                got.contains(&(want.0.to_string(), want.1)),
                "missing {want:?} in {got:?}"
            );
        }
        let unknown = issues.iter().find(|i| i.field == "TOOL_CALL_PARSR").unwrap();
        assert_eq!(unknown.line, Some(8));
        assert_eq!(
            unknown.kind,
            IssueKind::UnknownKey {
                suggestion: Some("TOOL_CALL_PARSER".into())
            }
        );
        let host = issues.iter().find(|i| i.field == "HOST").unwrap();
        assert_eq!(host.line, Some(7));
    }

    #[test]
    fn bad_names_and_missing_required() {
        let issues = Profile::from_env("Bad.Name", "PORT=1\n").unwrap_err();
        let got = codes(&issues);
        assert!(got.contains(&("NAME".into(), "bad-name")));
        assert!(got.contains(&("ENGINE".into(), "required")));
        assert!(got.contains(&("MODEL".into(), "required")));
        assert!(valid_name("qwen3-8b_tp2"));
        assert!(!valid_name("../etc"));
        assert!(!valid_name(""));
    }

    #[test]
    fn memory_fraction_warnings_at_092_and_095() {
        let base = "ENGINE=e\nMODEL=/m\nMEM_FRACTION=";
        let (_, w) = Profile::from_env("p", &format!("{base}0.92\n")).unwrap();
        assert!(w.is_empty());
        let (_, w) = Profile::from_env("p", &format!("{base}0.93\n")).unwrap();
        assert_eq!(codes(&w), vec![("MEM_FRACTION".into(), "fraction-above-advised")]);
        assert_eq!(w[0].line, Some(3));
        let (_, w) = Profile::from_env("p", &format!("{base}0.96\n")).unwrap();
        assert_eq!(codes(&w), vec![("MEM_FRACTION".into(), "fraction-oom-risk")]);
        let (_, w) = Profile::from_env("p", &format!("{base}1\n")).unwrap();
        assert_eq!(w[0].severity, Severity::Warning);
        assert!(Profile::from_env("p", &format!("{base}0\n")).is_err());
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let issues = Profile::from_env("p", "ENGINE=e\nMODEL='/m\n").unwrap_err();
        assert_eq!(issues[0].line, Some(2));
        assert_eq!(issues[0].kind.code(), "syntax");
    }

    #[test]
    fn closest_suggests_typos_only() {
        assert_eq!(
            closest("max_model_len", ["max-model-len", "port"]),
            Some("max-model-len")
        );
        assert_eq!(closest("zzzzzz", ["max-model-len", "port"]), None);
    }
}
