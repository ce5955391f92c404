//! Model directories on this host, checked the way the runtime runbook's air-gap rules ask:
//! the metadata files, safetensors only, an index that agrees with its shards, and a SHA-256
//! manifest (`verify`); the manifest written on the sending side (`manifest`); the hash cache
//! that makes a second check instant (`hashcache`); parallel hashing with progress (`hash`);
//! and the verifications the Models page starts and follows (`jobs`).

mod files;
pub mod hash;
pub mod hashcache;
pub mod jobs;
pub mod manifest;
pub mod page;
pub mod verify;

pub use files::read_regular;
pub use verify::{verify, HashMode, VerifyError};

pub use crate::config::VerifyMode;

/// Why a report stops a serve under `mode`, if it does: under `require`, its first error, or
/// the manifest not checked.
pub fn refusal(mode: VerifyMode, r: &app::domain::modelcheck::VerifyReport) -> Option<String> {
    match mode {
        VerifyMode::Warn => None,
        VerifyMode::Require => r.first_error().or_else(|| {
            (!r.manifest).then(|| format!("{}: no checked {} manifest", r.dir, app::domain::modelcheck::MANIFEST))
        }),
    }
}
