//! The integration tests, one binary: the server links once for all of them (it was 26
//! binaries, each linking the whole server). Each module is one area, driven at the layer it
//! needs: the router in-process (`router`, `signin_flood`), the recorded fixtures (`fixtures`),
//! and real `roofline` processes, simulator engines, podman containers and a real vLLM
//! (`real_engine`) for what only a process shows.
//!
//! One area: `cargo test -p server --test it -- real_engine::`.
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
