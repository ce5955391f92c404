//! `roofline model verify DIR | manifest DIR`: a model directory against the runtime
//! runbook's air-gap rules on the receiving host, and its SHA-256 manifest on the sending one.

use super::{OK, PROBLEM, USAGE};
use crate::context::Context;
use crate::models::{hashcache::HashCache, manifest, verify, HashMode};
use app::domain::modelcheck::{Level, Progress};
use clap::Subcommand;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Checks DIR: config.json, tokenizer.json, tokenizer_config.json (with a chat template)
    /// and generation_config.json present; safetensors only (pickle files refused); the index
    /// against the shards and each shard's size against its header; every file against
    /// SHA256SUMS, hashed in parallel and cached by size, mtime and inode. Exit 1 on an error.
    Verify { dir: PathBuf },
    /// Writes DIR/SHA256SUMS in `sha256sum` format, for the receiving host to check.
    Manifest { dir: PathBuf },
}

/// A progress line on stderr: redrawn in place on a terminal, else one line per tenth.
fn reporter(what: &'static str) -> impl Fn(Progress) + Send + Sync + 'static {
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    let last_tenth = Mutex::new(None::<u64>);
    move |p: Progress| {
        let pct = p
            .done_bytes
            .saturating_mul(100)
            .checked_div(p.total_bytes)
            .unwrap_or(100);
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        let line = format!(
            "{what}: {pct:>3}% {:.2}/{:.2} GB, {}/{} files, {:.2} GB/s",
            p.done_bytes as f64 / 1e9,
            p.total_bytes as f64 / 1e9,
            p.done_files,
            p.total_files,
            p.done_bytes as f64 / 1e9 / secs
        );
        if tty {
            eprint!("\r{line}");
            let _ = std::io::stderr().flush();
        } else if let Ok(mut last) = last_tenth.lock() {
            let tenth = pct / 10;
            if *last != Some(tenth) {
                *last = Some(tenth);
                eprintln!("{line}");
            }
        }
    }
}

pub async fn run(ctx: &Context, command: ModelCommand, json: bool) -> i32 {
    match command {
        ModelCommand::Verify { dir } => {
            // Links may stay inside the models root when DIR is under it, else inside DIR.
            let root = ctx.data.models_root();
            let root = match crate::config::confined(&root, &dir) {
                Ok(_) => root,
                Err(_) => dir.clone(),
            };
            let cache = HashCache::new(ctx.pool.clone());
            let progress = Arc::new(reporter("hashing"));
            let report = match verify(Some(&cache), &dir, &root, HashMode::Full, progress).await {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{e}");
                    return USAGE;
                }
            };
            if std::io::stderr().is_terminal() {
                eprintln!();
            }
            if json {
                println!("{}", serde_json::to_string(&report).unwrap_or_default());
            } else {
                for f in &report.findings {
                    let level = match f.level {
                        Level::Error => "error",
                        Level::Warning => "warning",
                        Level::Simulated => "simulated",
                    };
                    println!(
                        "{level}: {}: {} [{}]",
                        if f.file.is_empty() { "." } else { &f.file },
                        f.detail,
                        f.code
                    );
                }
                println!(
                    "{}: {} files, {:.2} GB; manifest {}; {} hashed ({:.2} GB), {} from the cache; {} ms",
                    if report.ok() { "verified" } else { "NOT verified" },
                    report.files,
                    report.bytes as f64 / 1e9,
                    if report.manifest { "checked" } else { "not checked" },
                    report.hashed_files,
                    report.hashed_bytes as f64 / 1e9,
                    report.cached_files,
                    report.elapsed_ms
                );
            }
            if report.ok() {
                OK
            } else {
                PROBLEM
            }
        }
        ModelCommand::Manifest { dir } => {
            let d = dir.clone();
            let written = tokio::task::spawn_blocking(move || manifest::write(&d, &reporter("hashing"))).await;
            if std::io::stderr().is_terminal() {
                eprintln!();
            }
            match written {
                Ok(Ok(w)) => {
                    if json {
                        println!("{}", serde_json::to_string(&w).unwrap_or_default());
                    } else {
                        for f in &w.findings {
                            println!("warning: {}: {} [{}]", f.file, f.detail, f.code);
                        }
                        println!("wrote {}: {} files, {:.2} GB", w.path, w.files, w.bytes as f64 / 1e9);
                    }
                    OK
                }
                Ok(Err(e)) => {
                    eprintln!("{e}");
                    USAGE
                }
                Err(e) => {
                    eprintln!("{e}");
                    PROBLEM
                }
            }
        }
    }
}
