//! Pure domain logic: no I/O, usable from the server, the CLI and the browser alike.

pub mod argparse;
pub mod auth;
pub mod bench;
pub mod capture;
pub mod engine;
pub mod envfile;
pub mod flag_grammar;
pub mod flagmap;
pub mod gpu;
pub mod help_flags;
mod hostile;
pub mod incident;
pub mod launch;
pub mod logscan;
pub mod logseries;
pub mod modelcheck;
pub mod phases;
pub mod pins;
pub mod profile;
pub mod prometheus;
pub mod reading;
pub mod review;
pub mod rows;
pub mod series;
pub mod signals;
pub mod stall;
pub mod startup_failure;
pub mod text;
pub mod timeline;
pub mod toolcall;
pub mod triage;
pub mod upgrade;
pub mod vram;
#[cfg(test)]
mod vram_dev;
pub mod vram_picture;
