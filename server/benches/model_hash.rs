//! Hashing model files: `roofline model manifest` and `roofline model verify` (first and
//! cached) against coreutils' `sha256sum` on the same files, one process and one per core.
//!
//!     cargo bench -p server --bench benches -- model_hash                 # 4 files of 512 MiB
//!     cargo test -p server --bench benches -- model_hash --short       # what scripts/test.sh runs
//!
//! The files were just written, so they are in the page cache: the figures are the hashing,
//! not the disk (on a cold NVMe read the disk usually sets the pace; both tools then wait
//! alike).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench or test panics on a broken setup, naming it, and reads as one scenario"
)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_roofline");

fn timed(what: &str, bytes: u64, mut f: impl FnMut()) {
    let t = Instant::now();
    f();
    let s = t.elapsed().as_secs_f64();
    println!(
        "| {what} | {:.2} | {s:.2} | {:.2} |",
        bytes as f64 / 1e9,
        bytes as f64 / 1e9 / s
    );
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn main() {
    let short = std::env::args().any(|a| a == "--short");
    let (files, size): (usize, u64) = if short { (4, 8 << 20) } else { (4, 512 << 20) };
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("roofline.toml"), "").unwrap();
    let dir = data.path().join("weights");
    std::fs::create_dir_all(&dir).unwrap();
    let mut names = Vec::new();
    for i in 0..files {
        let name = format!("model-{:05}-of-{files:05}.safetensors", i + 1);
        // Not zeros (no file system compresses them away); cheap to make.
        let block: Vec<u8> = (0..1u32 << 20)
            .map(|j| (j.wrapping_mul(2654435761) >> 13) as u8 ^ i as u8)
            .collect();
        let mut f = std::fs::File::create(dir.join(&name)).unwrap();
        for _ in 0..size >> 20 {
            std::io::Write::write_all(&mut f, &block).unwrap();
        }
        names.push(name);
    }
    let bytes = files as u64 * size;
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let roofline = |args: &[&str]| {
        let mut c = Command::new(BIN);
        c.arg("--data").arg(data.path()).args(args).env("LANG", "C");
        c
    };
    let d = dir.to_str().unwrap();
    println!("| tool | GB | seconds | GB/s |");
    println!("|---|---|---|---|");
    timed(&format!("roofline model manifest ({threads} threads)"), bytes, || {
        run(&mut roofline(&["model", "manifest", d]))
    });
    // The files are not a model (no config, no safetensors headers): verify reports that
    // (exit 1); what is timed is its manifest check, which must have passed.
    let verify = || {
        let out = roofline(&["model", "verify", d]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("manifest checked") && !text.contains("hash-mismatch"),
            "{text}"
        );
    };
    timed("roofline model verify, first check", bytes, verify);
    timed("roofline model verify, again (hash cache)", bytes, verify);
    let sums = |c: &mut Command| {
        c.current_dir(&dir);
        run(c)
    };
    timed("sha256sum, one process", bytes, || {
        sums(Command::new("sha256sum").args(&names))
    });
    timed(&format!("sha256sum, {threads} processes (xargs -P)"), bytes, || {
        sums(Command::new("sh").arg("-c").arg(format!(
            "ls *.safetensors | xargs -P {threads} -n 1 sha256sum >/dev/null"
        )))
    });
    check(&dir);
}

/// The manifest the console wrote is one `sha256sum -c` accepts.
fn check(dir: &Path) {
    run(Command::new("sha256sum")
        .args(["-c", "--quiet", "SHA256SUMS"])
        .current_dir(dir));
}
