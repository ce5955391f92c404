//! SHA-256 of many files at once: whole files spread over threads (largest first, so the
//! shards of a big model do not queue behind each other), with progress read from shared
//! counters while the threads work.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Bytes read per call: large enough that the hash, not the syscalls, is the cost.
const CHUNK: usize = 1 << 20;

/// SHA-256 of one file as lowercase hex, adding the bytes read to `done` as it goes.
pub fn sha256_file(path: &std::path::Path, done: &AtomicU64) -> std::io::Result<String> {
    let mut f = super::files::open_regular(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        done.fetch_add(n as u64, Ordering::Relaxed);
    }
    Ok(hex(&h.finalize()))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes `files` (path, size) on up to `threads` threads; `on_progress(bytes, files)` is
/// called about ten times a second and once at the end. Results are in input order.
pub fn hash_files(
    files: &[(PathBuf, u64)],
    threads: usize,
    on_progress: &(dyn Fn(u64, u64) + Sync),
) -> Vec<std::io::Result<String>> {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].1));
    let next = AtomicUsize::new(0);
    let bytes = AtomicU64::new(0);
    let finished = AtomicU64::new(0);
    let results: Mutex<Vec<Option<std::io::Result<String>>>> = Mutex::new((0..files.len()).map(|_| None).collect());
    let threads = threads.clamp(1, files.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let r = sha256_file(&files[i].0, &bytes);
                if let Ok(mut g) = results.lock() {
                    g[i] = Some(r);
                }
                finished.fetch_add(1, Ordering::Relaxed);
            });
        }
        while finished.load(Ordering::Relaxed) < files.len() as u64 {
            on_progress(bytes.load(Ordering::Relaxed), finished.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    on_progress(bytes.load(Ordering::Relaxed), finished.load(Ordering::Relaxed));
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(std::io::Error::other("not hashed"))))
        .collect()
}

/// Threads for hashing: the machine's cores, at most 16 (a disk gives no more).
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_sha256sum_and_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, vec![b'x'; 3 * CHUNK + 7]).unwrap();
        let seen = AtomicU64::new(0);
        let r = hash_files(
            &[(a, 0), (b.clone(), 3 * CHUNK as u64 + 7), (dir.path().join("gone"), 5)],
            4,
            &|bytes, _| seen.store(bytes, Ordering::Relaxed),
        );
        assert_eq!(
            r[0].as_deref().ok(),
            Some("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        );
        let mut h = Sha256::new();
        h.update(std::fs::read(&b).unwrap());
        assert_eq!(r[1].as_deref().ok(), Some(hex(&h.finalize()).as_str()));
        assert!(r[2].is_err());
        assert_eq!(seen.load(Ordering::Relaxed), 3 * CHUNK as u64 + 7);
    }
}
