//! Roofline Console as a library: the `roofline` binary (`main.rs`) only dispatches to
//! [`cli::main`] or the engine simulator, and tests build [`web::router`] in-process.
//!
//! The layout is one-way (see `ARCHITECTURE.md`): the edges [`cli`] and [`web`] import the
//! features; features import the core (the modules under "Core" below) and the pure domain in
//! `app::domain`; the core imports no feature; nothing imports an edge; no module's children
//! import each other in a circle. `scripts/check-layout.py` fails the test run when a module
//! breaks that.
// Server-rendered leptos views are deeply nested types (the incident wizard, in test builds).
#![recursion_limit = "256"]

// Core: the clock, host configuration, the database, HTTP to one engine, the change journal, NVML,
// the stored launch profiles,
// the releases the simulator plays (what `simulator_version` is checked against).
pub mod api_error;
pub mod clock;
pub mod config;
pub mod db;
pub mod engine;
pub mod gpu;
pub mod journal;
pub mod profile_store;
pub mod records;
pub mod releases;
pub mod tls;

// Features (the context first: what every feature is handed).
pub mod accounts;
pub mod changes;
pub mod context;
pub mod control;
pub mod demo;
pub mod engines;
pub mod hosts;
pub mod incidents;
pub mod models;
pub mod monitor;
pub mod preflight;
pub mod profiles;
pub mod runs;
pub mod sim;
pub mod vram;

// Edges.
pub mod cli;
pub mod web;
