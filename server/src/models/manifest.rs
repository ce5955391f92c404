//! The sending side: `roofline model manifest DIR` hashes every file (in parallel) and writes
//! `SHA256SUMS` in `sha256sum` format, so the receiving host can check each file with the
//! console or with `sha256sum -c`.

use super::hash;
use super::verify::{walk, Entry, VerifyError};
use app::domain::modelcheck::{render_manifest, Finding, Progress, MANIFEST};
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
    let (files, findings) = walk(dir, dir)?;
    let files: Vec<Entry> = files.into_iter().filter(|e| e.rel != MANIFEST).collect();
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
        let h = h.map_err(|err| VerifyError::Io(e.path.display().to_string(), err))?;
        entries.push((e.rel.clone(), h));
    }
    let out = dir.join(MANIFEST);
    let tmp = dir.join(format!(".{MANIFEST}.tmp"));
    let io = |p: &Path, e: std::io::Error| VerifyError::Io(p.display().to_string(), e.to_string());
    std::fs::write(&tmp, render_manifest(&entries)).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, &out).map_err(|e| io(&out, e))?;
    Ok(Written {
        path: out.display().to_string(),
        files: total_files,
        bytes: total_bytes,
        findings,
    })
}
