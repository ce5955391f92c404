//! The integration tests, one binary: the server links once for all of them (it was 26
//! binaries, each linking the whole server). Each module is one area, driven at the layer it
//! needs: the router in-process (`router`, `signin_flood`), the recorded fixtures (`fixtures`),
//! and real `roofline` processes, simulator engines, podman containers and a real vLLM
//! (`real_engine`) for what only a process shows.
//!
//! One area: `cargo test -p server --test it -- faults::`; the real vLLM:
//! `ROOFLINE_REAL_VLLM=DIR cargo test -p server --test it -- a_real_vllm`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "a bench or test panics on a broken setup, naming it, and reads as one scenario"
)]

mod common;

mod accounts;
mod backup;
mod containers;
mod database;
mod engine_control;
mod faults;
mod fixtures;
mod flags;
mod fleet;
mod gate;
mod gpu;
mod hosts;
mod incidents;
mod journal;
mod metrics;
mod models;
mod prometheus;
mod readoption;
mod real_engine;
mod review;
mod router;
mod signin_flood;
mod tls;
mod triage;
mod trust;
mod upgrade;
mod vram;
mod web;

/// Every scenario against a real vLLM, one engine at a time, as one test. Named to sort first:
/// libtest starts tests in name order, so this one (about 6 min on two cores) starts at once on a
/// thread of its own while the other thread takes everything else. As five tests behind one lock
/// they held both threads, one of them waiting, for the whole tier.
#[test]
fn a_real_vllm_one_engine_at_a_time() {
    real_engine::all();
}
