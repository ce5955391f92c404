//! Verifies one model directory: the walk (links resolved and kept inside the root), the
//! structure (metadata files, chat template, safetensors only, index against shards, each
//! shard's size against its header), then the manifest (every listed file hashed, in
//! parallel, or answered from the hash cache).

use super::files::open_regular;
use super::hash;
use super::hashcache::{FileId, HashCache};
use app::domain::modelcheck::{
    has_chat_template, index_shards, is_pickle, parse_manifest, safetensors_extent, Finding, Progress, VerifyReport,
    MANIFEST, REQUIRED,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Bounds on the walk (a model directory is untrusted: a link loop or a million files).
pub const MAX_FILES: usize = 100_000;
pub const MAX_DEPTH: usize = 8;
/// The largest JSON file or safetensors header read (index, config, tokenizer config).
const MAX_JSON: u64 = 100 << 20;

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("{0}: {1}")]
    Io(String, String),
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error("{0} has more than {MAX_FILES} files")]
    TooManyFiles(String),
}

/// Whether to hash what the cache does not know. `CachedOnly` is the serve path under
/// `verify = "warn"`: structure in full, hashes only where already known, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashMode {
    Full,
    CachedOnly,
}

/// A regular file found in the directory.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Relative to the directory, `/`-separated.
    pub rel: String,
    pub path: PathBuf,
    pub size: u64,
}

/// The files of a directory, and what the walk itself found (links out of the root,
/// dangling links, special files).
pub fn walk(dir: &Path, root: &Path) -> Result<(Vec<Entry>, Vec<Finding>), VerifyError> {
    let io = |p: &Path, e: std::io::Error| VerifyError::Io(p.display().to_string(), e.to_string());
    let meta = std::fs::metadata(dir).map_err(|e| io(dir, e))?;
    if !meta.is_dir() {
        return Err(VerifyError::NotADirectory(dir.display().to_string()));
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut files = Vec::new();
    let mut findings = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((at, prefix, depth)) = stack.pop() {
        let mut names: Vec<_> = std::fs::read_dir(&at)
            .map_err(|e| io(&at, e))?
            .filter_map(|e| e.ok())
            .collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let path = e.path();
            let Ok(lm) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if lm.file_type().is_symlink() {
                match path.canonicalize() {
                    Err(_) => {
                        findings.push(Finding::error("broken-link", &rel, "the link points nowhere"));
                        continue;
                    }
                    Ok(target) if !target.starts_with(&root) => {
                        findings.push(Finding::error(
                            "link-outside",
                            &rel,
                            format!("links to {}, outside {}", target.display(), root.display()),
                        ));
                        continue;
                    }
                    Ok(_) => {}
                }
            }
            let Ok(m) = std::fs::metadata(&path) else { continue };
            if m.is_dir() {
                if lm.file_type().is_symlink() {
                    findings.push(Finding::warning(
                        "link-dir",
                        &rel,
                        "a link to a directory is not followed",
                    ));
                } else if depth + 1 >= MAX_DEPTH {
                    findings.push(Finding::warning(
                        "too-deep",
                        &rel,
                        format!("deeper than {MAX_DEPTH} levels: not read"),
                    ));
                } else {
                    stack.push((path, rel, depth + 1));
                }
            } else if m.is_file() {
                files.push(Entry {
                    rel,
                    path,
                    size: m.len(),
                });
                if files.len() > MAX_FILES {
                    return Err(VerifyError::TooManyFiles(dir.display().to_string()));
                }
            } else {
                findings.push(Finding::warning("special-file", &rel, "not a regular file"));
            }
        }
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((files, findings))
}

/// The JSON header of one safetensors file (8-byte little-endian length, then JSON) with
/// that length; the length is bounded by the file's own size and by `MAX_JSON` (the file is
/// untrusted). Errors name the file.
pub fn safetensors_header(path: &Path) -> Result<(u64, String), VerifyError> {
    use std::io::Read;
    let bad = |d: String| VerifyError::Io(path.display().to_string(), d);
    let mut f = open_regular(path).map_err(|e| bad(e.to_string()))?;
    let size = f.metadata().map_err(|e| bad(e.to_string()))?.len();
    let mut len = [0u8; 8];
    f.read_exact(&mut len).map_err(|e| bad(e.to_string()))?;
    let n = u64::from_le_bytes(len);
    if n == 0 || n > MAX_JSON || n > size.saturating_sub(8) {
        return Err(bad(format!("header length {n} is not plausible")));
    }
    let mut buf = vec![0u8; n as usize];
    f.read_exact(&mut buf).map_err(|e| bad(e.to_string()))?;
    String::from_utf8(buf).map(|h| (n, h)).map_err(|e| bad(e.to_string()))
}

/// Reads an untrusted text file (config, index, tokenizer config, manifest) up to `MAX_JSON`.
pub fn read_capped(path: &Path) -> std::io::Result<String> {
    super::files::read_regular(path, MAX_JSON)
}

/// The structure checks: everything but the hashes.
pub fn inspect(files: &[Entry]) -> Vec<Finding> {
    let mut out = Vec::new();
    let by_rel: BTreeMap<&str, &Entry> = files.iter().map(|e| (e.rel.as_str(), e)).collect();
    for name in REQUIRED {
        if !by_rel.contains_key(name) {
            out.push(Finding::error("missing", name, "missing"));
        }
    }
    if let Some(tc) = by_rel.get("tokenizer_config.json") {
        let templated = read_capped(&tc.path).is_ok_and(|t| has_chat_template(&t))
            || by_rel.contains_key("chat_template.jinja")
            || by_rel.contains_key("chat_template.json");
        if !templated {
            out.push(Finding::error(
                "no-chat-template",
                "tokenizer_config.json",
                "no chat_template (and no chat_template.jinja): chat requests and tool calls have no template",
            ));
        }
    }
    for e in files.iter().filter(|e| is_pickle(&e.rel)) {
        out.push(Finding::error(
            "pickle",
            &e.rel,
            "a pickle file: loading it can run code; ship safetensors only",
        ));
    }
    let shards: Vec<&Entry> = files.iter().filter(|e| e.rel.ends_with(".safetensors")).collect();
    let index_name = "model.safetensors.index.json";
    let mut indexed: Option<BTreeMap<String, std::collections::BTreeSet<String>>> = None;
    if let Some(ix) = by_rel.get(index_name) {
        match read_capped(&ix.path)
            .map_err(|e| e.to_string())
            .and_then(|t| index_shards(&t).map_err(|e| e.0))
        {
            Ok(map) => indexed = Some(map),
            Err(e) => out.push(Finding::error("index", index_name, e)),
        }
    }
    for s in &shards {
        match safetensors_header(&s.path)
            .map_err(|e| e.to_string())
            .and_then(|(len, h)| safetensors_extent(&h).map(|x| (len, x)).map_err(|e| e.0))
        {
            Err(e) => out.push(Finding::error("header", &s.rel, e)),
            Ok((len, x)) => {
                let expected = 8u64.saturating_add(len).saturating_add(x.data_end);
                if s.size != expected {
                    let what = if s.size < expected {
                        "truncated"
                    } else {
                        "longer than its header"
                    };
                    out.push(Finding::error(
                        "shard-size",
                        &s.rel,
                        format!("{what}: {} bytes, the header says {expected}", s.size),
                    ));
                }
                if let Some(want) = indexed.as_ref().and_then(|m| m.get(&s.rel)) {
                    let absent: Vec<&String> = want.iter().filter(|t| !x.tensors.contains(*t)).collect();
                    if let Some(first) = absent.first() {
                        out.push(Finding::error(
                            "index-mismatch",
                            &s.rel,
                            format!(
                                "{} tensors the index puts here are not in it (first: {first})",
                                absent.len()
                            ),
                        ));
                    }
                }
            }
        }
    }
    match &indexed {
        Some(map) => {
            for shard in map.keys() {
                if !by_rel.contains_key(shard.as_str()) {
                    out.push(Finding::error(
                        "shard-missing",
                        shard,
                        format!("listed in {index_name}, not present"),
                    ));
                }
            }
            for s in &shards {
                if !map.contains_key(&s.rel) {
                    out.push(Finding::warning(
                        "shard-unindexed",
                        &s.rel,
                        format!("not in {index_name}"),
                    ));
                }
            }
        }
        None if shards.is_empty() => {
            out.push(Finding::error("no-safetensors", "", "no .safetensors weights"));
        }
        None => {}
    }
    out
}

/// Verifies `dir` (confined to `root`: links may not leave it). `progress` is called while
/// files are hashed. The cache, when given, answers unchanged files and learns new hashes.
pub async fn verify(
    cache: Option<&HashCache>,
    dir: &Path,
    root: &Path,
    mode: HashMode,
    progress: Arc<dyn Fn(Progress) + Send + Sync>,
) -> Result<VerifyReport, VerifyError> {
    let started = Instant::now();
    let (d, r) = (dir.to_path_buf(), root.to_path_buf());
    let (files, mut findings) = tokio::task::spawn_blocking(move || {
        let (files, mut findings) = walk(&d, &r)?;
        findings.extend(inspect(&files));
        Ok::<_, VerifyError>((files, findings))
    })
    .await
    .map_err(|e| VerifyError::Io(dir.display().to_string(), e.to_string()))??;
    let mut report = VerifyReport {
        dir: dir.display().to_string(),
        files: files.len() as u64,
        bytes: files.iter().map(|e| e.size).fold(0u64, u64::saturating_add),
        ..Default::default()
    };
    let by_rel: BTreeMap<&str, &Entry> = files.iter().map(|e| (e.rel.as_str(), e)).collect();
    let listed = match by_rel.get(MANIFEST) {
        None => {
            findings.push(Finding::warning(
                "no-manifest",
                MANIFEST,
                "no manifest: hashes not checked (write one on the sending side with `roofline model manifest DIR`)",
            ));
            None
        }
        Some(m) => match read_capped(&m.path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_manifest(&t).map_err(|e| e.to_string()))
        {
            Ok(list) => Some(list),
            Err(e) => {
                findings.push(Finding::error("manifest", MANIFEST, e));
                None
            }
        },
    };
    if let Some(list) = listed {
        let listed_names: std::collections::BTreeSet<&str> = list.iter().map(|(p, _)| p.as_str()).collect();
        for e in &files {
            if e.rel != MANIFEST && !listed_names.contains(e.rel.as_str()) {
                findings.push(Finding::warning("not-in-manifest", &e.rel, "not listed in SHA256SUMS"));
            }
        }
        // Each listed file: the cache first, then the hash.
        let mut known: Vec<(String, String, Option<String>, Option<FileId>)> = Vec::new();
        for (rel, want) in &list {
            let Some(e) = by_rel.get(rel.as_str()) else {
                findings.push(Finding::error(
                    "manifest-missing-file",
                    rel,
                    "listed in SHA256SUMS, not present",
                ));
                continue;
            };
            let id = FileId::of(&e.path).ok();
            let cached = match (cache, &id) {
                (Some(c), Some(id)) => c.get(id).await,
                _ => None,
            };
            known.push((rel.clone(), want.clone(), cached, id));
        }
        report.cached_files = known.iter().filter(|k| k.2.is_some()).count() as u64;
        let todo: Vec<(PathBuf, u64)> = known
            .iter()
            .filter(|k| k.2.is_none())
            .filter_map(|k| by_rel.get(k.0.as_str()).map(|e| (e.path.clone(), e.size)))
            .collect();
        let total_bytes: u64 = known
            .iter()
            .filter_map(|k| by_rel.get(k.0.as_str()).map(|e| e.size))
            .fold(0u64, u64::saturating_add);
        let cached_bytes = total_bytes.saturating_sub(todo.iter().map(|t| t.1).fold(0u64, u64::saturating_add));
        let total_files = known.len() as u64;
        let cached_files = report.cached_files;
        progress(Progress {
            done_bytes: cached_bytes,
            total_bytes,
            done_files: cached_files,
            total_files,
        });
        let hashed = if mode == HashMode::Full && !todo.is_empty() {
            let p = progress.clone();
            let jobs = todo.clone();
            tokio::task::spawn_blocking(move || {
                hash::hash_files(&jobs, hash::threads(), &|bytes, n| {
                    p(Progress {
                        done_bytes: cached_bytes.saturating_add(bytes),
                        total_bytes,
                        done_files: cached_files.saturating_add(n),
                        total_files,
                    })
                })
            })
            .await
            .unwrap_or_default()
        } else {
            Vec::new()
        };
        report.hashed_files = hashed.len() as u64;
        report.hashed_bytes = if hashed.is_empty() {
            0
        } else {
            todo.iter().map(|t| t.1).fold(0u64, u64::saturating_add)
        };
        let mut fresh = hashed.into_iter();
        let mut unhashed = 0u64;
        for (rel, want, cached, id) in known {
            let got = match cached {
                Some(h) => Some(Ok(h)),
                None => {
                    let r = if mode == HashMode::Full { fresh.next() } else { None };
                    // A fresh hash is the file's, right or wrong: the cache learns it. A cache
                    // that cannot learn costs the next check a rehash, and the log says why.
                    if let (Some(Ok(h)), Some(c), Some(id)) = (&r, cache, &id) {
                        if let Err(e) = c.put(id, h).await {
                            tracing::warn!(file = %rel, error = %e, "hash cache not updated");
                        }
                    }
                    r
                }
            };
            match got {
                None => unhashed += 1,
                Some(Err(e)) => findings.push(Finding::error("unreadable", &rel, e.to_string())),
                Some(Ok(h)) if h != want => findings.push(Finding::error(
                    "hash-mismatch",
                    &rel,
                    format!("SHA-256 {}…, SHA256SUMS says {}…", &h[..12.min(h.len())], &want[..12]),
                )),
                Some(Ok(_)) => {}
            }
        }
        if unhashed > 0 {
            findings.push(Finding::warning(
                "not-hashed",
                MANIFEST,
                format!("{unhashed} files not hashed yet: run `roofline model verify` or verify on the Models page"),
            ));
        }
        report.manifest = unhashed == 0;
    }
    report.findings = app::domain::modelcheck::bounded(findings);
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}
