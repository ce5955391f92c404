//! Every bench of the server in one binary, so the server links once for all of them:
//!
//!     cargo bench -p server --bench benches -- NAME [ARGS]     # one bench, full size
//!     cargo test -p server --bench benches -- --short          # every bench, short (scripts/test.sh)
//!     cargo test -p server --bench benches -- NAME --short     # one bench, short
//!
//! NAME is one of [`BENCHES`]; without one, every bench runs in turn. Each bench's own file
//! says what it measures and which arguments it reads. A bench that fails panics, and the
//! binary exits non-zero.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench panics on a broken setup, naming it, and reads as one scenario"
)]

mod body_flood;
mod common;
mod fleet_db;
mod fleet_scale;
mod model_hash;
mod parser;
mod signin_flood;
mod stall;
mod stream_flood;

/// The benches by name, in the order a run of all of them takes.
const BENCHES: [(&str, fn()); 8] = [
    ("parser", parser::main),
    ("fleet_scale", fleet_scale::main),
    ("fleet_db", fleet_db::main),
    ("signin_flood", signin_flood::main),
    ("stream_flood", stream_flood::main),
    ("body_flood", body_flood::main),
    ("stall", stall::main),
    ("model_hash", model_hash::main),
];

fn main() {
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| BENCHES.iter().any(|(n, _)| n == a))
        .collect();
    for (name, run) in BENCHES {
        if asked.is_empty() || asked.iter().any(|a| a == name) {
            println!("## bench {name}");
            run();
        }
    }
}
