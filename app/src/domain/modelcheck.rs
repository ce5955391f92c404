//! What makes a model directory safe to serve on an air-gapped host (the runtime runbook's
//! air-gap rules): the four metadata files, safetensors weights only (pickle files run code
//! when loaded), an index that agrees with its shards, and a SHA-256 manifest in `sha256sum`
//! format. Pure parts here (the findings, the manifest and index formats, a shard's extent);
//! the walk over the files and the hashing live in the server's `models` module.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The files every model directory needs besides its weights.
pub const REQUIRED: [&str; 4] = [
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "generation_config.json",
];

/// The manifest's name, as `sha256sum` writes it on the sending side.
pub const MANIFEST: &str = "SHA256SUMS";

/// Extensions of pickle-based weights and checkpoints: loading one can run code.
const PICKLE: [&str; 7] = ["bin", "pt", "pth", "pkl", "pickle", "ckpt", "joblib"];

/// Whether a file name is a pickle-based weights or checkpoint file.
pub fn is_pickle(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| PICKLE.iter().any(|p| ext.eq_ignore_ascii_case(p)))
}

/// Every finding's code (each has a wording `model-finding-{code}` in both locales).
pub const CODES: [&str; 24] = [
    "missing",
    "no-chat-template",
    "pickle",
    "index",
    "header",
    "shard-size",
    "index-mismatch",
    "shard-missing",
    "shard-unindexed",
    "no-safetensors",
    "weights-simulated",
    "no-manifest",
    "manifest",
    "not-in-manifest",
    "manifest-missing-file",
    "unreadable",
    "hash-mismatch",
    "not-hashed",
    "broken-link",
    "link-outside",
    "link-dir",
    "too-deep",
    "special-file",
    "odd-name",
];

/// How serious a finding is: an error fails the verification, a warning does not;
/// `Simulated` is what a simulated installation stands in for (the weights it never loads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Simulated,
}

/// One thing found in a model directory; `code` is stable (tests, the UI's wording key
/// `model-finding-{code}`), `file` names the file it is about, `detail` says what exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Finding {
    pub level: Level,
    pub code: String,
    pub file: String,
    pub detail: String,
}

impl Finding {
    pub fn error(code: &str, file: &str, detail: impl Into<String>) -> Self {
        Self {
            level: Level::Error,
            code: code.into(),
            file: file.into(),
            detail: detail.into(),
        }
    }
    pub fn warning(code: &str, file: &str, detail: impl Into<String>) -> Self {
        Self {
            level: Level::Warning,
            ..Self::error(code, file, detail)
        }
    }
}

/// The result of verifying one model directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct VerifyReport {
    pub dir: String,
    pub findings: Vec<Finding>,
    /// Files and bytes in the directory.
    pub files: u64,
    pub bytes: u64,
    /// Whether a manifest was there and checked; files hashed now and answered from the cache.
    pub manifest: bool,
    pub hashed_files: u64,
    pub hashed_bytes: u64,
    pub cached_files: u64,
    pub elapsed_ms: u64,
}

impl VerifyReport {
    /// No error among the findings.
    pub fn ok(&self) -> bool {
        self.findings.iter().all(|f| f.level != Level::Error)
    }
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.level == Level::Error)
    }
    /// The directory as a simulated installation reads it: it loads no weights, so their
    /// absence is "simulated", not an error. Only a caller that knows the installation is the
    /// simulator (host configuration) calls this; nothing in the directory can ask for it.
    pub fn weights_simulated(&mut self) {
        for f in &mut self.findings {
            if f.code == "no-safetensors" {
                *f = Finding {
                    level: Level::Simulated,
                    code: "weights-simulated".into(),
                    file: String::new(),
                    detail: "no weights: the simulator loads none".into(),
                };
            }
        }
    }
    /// The first error, worded for a refusal ("tokenizer.json: missing").
    pub fn first_error(&self) -> Option<String> {
        self.errors().next().map(|f| format!("{}: {}", f.file, f.detail))
    }
}

/// Findings kept per code: a directory of 100,000 unlisted files or a manifest of a million
/// absent ones says so in one line each past this, not in a report of megabytes (it goes to
/// the page, the journal and the head of the engine's log).
pub const MAX_PER_CODE: usize = 50;

/// The first [`MAX_PER_CODE`] findings of each code, then one finding per code that says how
/// many more there were (an error if any of them was one, so `ok()` does not change).
pub fn bounded(findings: Vec<Finding>) -> Vec<Finding> {
    let mut kept = Vec::new();
    let mut more: BTreeMap<String, (Level, usize)> = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for f in findings {
        let n = seen.entry(f.code.clone()).or_default();
        *n += 1;
        if *n <= MAX_PER_CODE {
            kept.push(f);
        } else {
            let m = more.entry(f.code.clone()).or_insert((Level::Warning, 0));
            m.1 += 1;
            if f.level == Level::Error {
                m.0 = Level::Error;
            }
        }
    }
    for (code, (level, n)) in more {
        kept.push(Finding {
            level,
            file: String::new(),
            detail: format!("and {n} more like this"),
            code,
        });
    }
    kept
}

/// Progress of a verification: bytes hashed (or found in the cache) of the bytes to check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Progress {
    pub done_bytes: u64,
    pub total_bytes: u64,
    pub done_files: u64,
    pub total_files: u64,
}

/// An error in a manifest, with its line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("SHA256SUMS line {line}: {detail}")]
pub struct ManifestError {
    pub line: usize,
    pub detail: String,
}

/// Parses `sha256sum` output: `<64 hex>  <path>` (text mode) or `<64 hex> *<path>` (binary
/// mode), one per line. Paths must be relative, inside the directory, and listed once.
/// Returns `(path, lowercase hex)` pairs in file order.
pub fn parse_manifest(text: &str) -> Result<Vec<(String, String)>, ManifestError> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let bad = |detail: &str| ManifestError {
            line,
            detail: detail.to_string(),
        };
        let l = raw.trim_end_matches('\r');
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        if l.starts_with('\\') {
            return Err(bad("escaped file names are not supported"));
        }
        let (hash, rest) = l.split_at_checked(64).ok_or_else(|| bad("expected 64 hex digits"))?;
        if !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("expected 64 hex digits"));
        }
        let path = rest
            .strip_prefix("  ")
            .or_else(|| rest.strip_prefix(" *"))
            .ok_or_else(|| bad("expected two spaces (or ` *`) after the hash"))?;
        let path = path.strip_prefix("./").unwrap_or(path);
        check_relative(path).map_err(|d| bad(&d.to_string()))?;
        if !seen.insert(path.to_string()) {
            return Err(bad(&format!("{path} is listed twice")));
        }
        out.push((path.to_string(), hash.to_ascii_lowercase()));
    }
    Ok(out)
}

/// Why a file name in a manifest or an index is refused (each names it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("empty file name")]
    Empty,
    #[error("{0} is an absolute path")]
    Absolute(String),
    #[error("{0:?} has control characters")]
    Control(String),
    #[error("{0} is not a plain relative path")]
    NotPlain(String),
}

/// A manifest's or an index's file name: relative, no `..`, no empty or odd parts.
pub fn check_relative(path: &str) -> Result<(), NameError> {
    let shown = || path.chars().take(200).collect::<String>();
    if path.is_empty() {
        return Err(NameError::Empty);
    }
    if path.starts_with('/') {
        return Err(NameError::Absolute(shown()));
    }
    if path.chars().any(|c| c.is_control()) {
        return Err(NameError::Control(shown()));
    }
    if path.split('/').any(|p| p.is_empty() || p == "." || p == "..") {
        return Err(NameError::NotPlain(shown()));
    }
    Ok(())
}

/// Writes a manifest in `sha256sum`'s text format, sorted by path.
pub fn render_manifest(entries: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = entries.iter().collect();
    sorted.sort();
    sorted.iter().map(|(p, h)| format!("{h}  {p}\n")).collect()
}

/// An error in an index or a safetensors header (untrusted JSON).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct FormatError(pub String);

/// `weight_map` of a `model.safetensors.index.json`: shard file → the tensors it should hold.
pub fn index_shards(index_json: &str) -> Result<BTreeMap<String, BTreeSet<String>>, FormatError> {
    let v: serde_json::Value = serde_json::from_str(index_json).map_err(|e| FormatError(format!("not JSON: {e}")))?;
    let map = v
        .get("weight_map")
        .and_then(|m| m.as_object())
        .ok_or_else(|| FormatError("weight_map missing".into()))?;
    let mut shards: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (tensor, file) in map {
        let file = file
            .as_str()
            .ok_or_else(|| FormatError(format!("weight_map.{tensor} is not a file name")))?;
        check_relative(file).map_err(|d| FormatError(format!("weight_map.{tensor}: {d}")))?;
        shards.entry(file.to_string()).or_default().insert(tensor.clone());
    }
    Ok(shards)
}

/// What one safetensors header says: the tensors and where its data ends (the data section
/// must be exactly that long, so a truncated or padded shard shows in the file size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extent {
    pub tensors: BTreeSet<String>,
    pub data_end: u64,
    /// The tensors' bytes added up (the weights' size, for the VRAM calculator).
    pub tensor_bytes: u64,
}

/// Reads a safetensors header's JSON: every tensor's `data_offsets`, checked.
pub fn safetensors_extent(header_json: &str) -> Result<Extent, FormatError> {
    let v: serde_json::Value =
        serde_json::from_str(header_json).map_err(|e| FormatError(format!("header is not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| FormatError("header is not an object".into()))?;
    let mut tensors = BTreeSet::new();
    let mut data_end = 0u64;
    let mut tensor_bytes = 0u64;
    for (name, t) in obj {
        if name == "__metadata__" {
            continue;
        }
        let off = t
            .get("data_offsets")
            .and_then(|o| o.as_array())
            .filter(|o| o.len() == 2)
            .ok_or_else(|| FormatError(format!("tensor {name} has no data_offsets")))?;
        match (off[0].as_u64(), off[1].as_u64()) {
            (Some(a), Some(b)) if b >= a => {
                data_end = data_end.max(b);
                tensor_bytes = tensor_bytes.saturating_add(b - a);
            }
            _ => return Err(FormatError(format!("tensor {name} has bad data_offsets"))),
        }
        tensors.insert(name.clone());
    }
    Ok(Extent {
        tensors,
        data_end,
        tensor_bytes,
    })
}

/// Whether a `tokenizer_config.json` carries a chat template (a string, or a list of named
/// templates).
pub fn has_chat_template(tokenizer_config_json: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(tokenizer_config_json)
        .ok()
        .and_then(|v| v.get("chat_template").cloned())
        .is_some_and(|t| match t {
            serde_json::Value::String(s) => !s.trim().is_empty(),
            serde_json::Value::Array(a) => !a.is_empty(),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn manifest_reads_both_sha256sum_modes_and_refuses_escapes() {
        let text = format!("{H}  config.json\n{}  *x\n{H} *sub/model.safetensors\n\n", &H[..63]);
        let e = parse_manifest(&text).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let ok = parse_manifest(&format!("{H}  config.json\r\n{H} *./sub/m.safetensors\n")).unwrap();
        assert_eq!(
            ok,
            vec![("config.json".into(), H.into()), ("sub/m.safetensors".into(), H.into())]
        );
        for bad in ["../etc/passwd", "/etc/passwd", "a//b", "a/./b"] {
            let e = parse_manifest(&format!("{H}  {bad}\n")).unwrap_err();
            assert_eq!(e.line, 1, "{bad}");
        }
        assert!(parse_manifest(&format!("{H}  a\n{H}  a\n"))
            .unwrap_err()
            .detail
            .contains("twice"));
        assert!(
            parse_manifest(&format!("{H} a\n")).is_err(),
            "one space is not the format"
        );
        let rendered = render_manifest(&[("b".into(), H.into()), ("a".into(), H.into())]);
        assert_eq!(rendered, format!("{H}  a\n{H}  b\n"));
        assert_eq!(parse_manifest(&rendered).unwrap().len(), 2);
    }

    #[test]
    fn findings_are_bounded_per_code_without_losing_an_error() {
        let mut many: Vec<Finding> = (0..MAX_PER_CODE + 5)
            .map(|i| Finding::warning("not-in-manifest", &format!("f{i}"), "x"))
            .collect();
        many.push(Finding::error("not-in-manifest", "last", "x"));
        many.push(Finding::error("missing", "tokenizer.json", "missing"));
        let kept = bounded(many);
        assert_eq!(kept.len(), MAX_PER_CODE + 2);
        let tail = kept.last().unwrap();
        assert_eq!((tail.code.as_str(), tail.level), ("not-in-manifest", Level::Error));
        assert!(tail.detail.contains("6 more"), "{tail:?}");
    }

    #[test]
    fn pickles_are_named_by_extension() {
        for p in ["pytorch_model.bin", "x.PT", "model.pth", "training_args.bin", "m.ckpt"] {
            assert!(is_pickle(p), "{p}");
        }
        for s in ["model.safetensors", "tokenizer.json", "bin", "README.md"] {
            assert!(!is_pickle(s), "{s}");
        }
    }

    #[test]
    fn index_and_header_formats_are_checked() {
        let idx = r#"{"metadata":{"total_size":8},"weight_map":{"a":"m-1.safetensors","b":"m-2.safetensors","c":"m-1.safetensors"}}"#;
        let shards = index_shards(idx).unwrap();
        assert_eq!(shards["m-1.safetensors"].len(), 2);
        assert!(index_shards(r#"{"weight_map":{"a":"../x"}}"#)
            .unwrap_err()
            .0
            .contains("weight_map.a"));
        assert!(index_shards("{}").is_err());
        let e = safetensors_extent(r#"{"__metadata__":{},"a":{"data_offsets":[0,4]},"b":{"data_offsets":[4,12]}}"#)
            .unwrap();
        assert_eq!(e.data_end, 12);
        assert!(safetensors_extent(r#"{"a":{"data_offsets":[4,0]}}"#).is_err());
        assert!(safetensors_extent(r#"{"a":{}}"#).unwrap_err().0.contains("tensor a"));
        assert!(has_chat_template(r#"{"chat_template":"{{ messages }}"}"#));
        assert!(has_chat_template(
            r#"{"chat_template":[{"name":"default","template":"x"}]}"#
        ));
        assert!(!has_chat_template(r#"{"chat_template":""}"#));
        assert!(!has_chat_template("{"));
    }
}
