//! The sending side: `roofline model manifest DIR` hashes every file (in parallel) and writes
//! `SHA256SUMS` in `sha256sum` format, so the receiving host can check each file with the
//! console or with `sha256sum -c`.

use super::hash;
use super::verify::{walk, Entry, VerifyError};
use app::domain::modelcheck::{bounded, check_relative, render_manifest, Finding, Progress, MANIFEST};
use std::path::{Path, PathBuf};

/// What was written.
#[derive(Debug, serde::Serialize)]
pub struct Written {
    pub path: String,
    pub files: u64,
    pub bytes: u64,
    /// What the walk found on the way (links out of the directory are not listed).
    pub findings: Vec<Finding>,
}

/// Hashes every regular file under `dir` (links must stay inside it) and writes the manifest
/// next to them, replacing an older one in one rename.
pub fn write(dir: &Path, on_progress: &(dyn Fn(Progress) + Sync)) -> Result<Written, VerifyError> {
    let tmp_name = format!(".{MANIFEST}.tmp");
    let (files, mut findings) = walk(dir, dir)?;
    // A name the format cannot hold (a newline would start a forged line) is left out, said.
    let (files, odd): (Vec<Entry>, Vec<Entry>) = files
        .into_iter()
        .filter(|e| e.rel != MANIFEST && e.rel != tmp_name)
        .partition(|e| check_relative(&e.rel).is_ok());
    findings.extend(odd.iter().map(|e| {
        Finding::warning(
            "odd-name",
            &e.rel.escape_debug().to_string(),
            "a name SHA256SUMS cannot hold: not listed",
        )
    }));
    let jobs: Vec<(PathBuf, u64)> = files.iter().map(|e| (e.path.clone(), e.size)).collect();
    let total_bytes = jobs.iter().map(|j| j.1).fold(0u64, u64::saturating_add);
    let total_files = jobs.len() as u64;
    let hashes = hash::hash_files(&jobs, hash::threads(), &|done_bytes, done_files| {
        on_progress(Progress {
            done_bytes,
            total_bytes,
            done_files,
            total_files,
        })
    });
    let mut entries = Vec::with_capacity(files.len());
    for (e, h) in files.iter().zip(hashes) {
        let h = h.map_err(|err| VerifyError::Io(e.path.display().to_string(), err.to_string()))?;
        entries.push((e.rel.clone(), h));
    }
    let out = dir.join(MANIFEST);
    let tmp = dir.join(&tmp_name);
    let io = |p: &Path, e: std::io::Error| VerifyError::Io(p.display().to_string(), e.to_string());
    // Created afresh, never opened through whatever is there: a link planted under the
    // temporary name would otherwise have the manifest written wherever it points.
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| io(&tmp, e))?;
    std::io::Write::write_all(&mut f, render_manifest(&entries).as_bytes()).map_err(|e| io(&tmp, e))?;
    drop(f);
    std::fs::rename(&tmp, &out).map_err(|e| io(&out, e))?;
    Ok(Written {
        path: out.display().to_string(),
        files: total_files,
        bytes: total_bytes,
        findings: bounded(findings),
    })
}
