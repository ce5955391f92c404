//! `roofline`: the Roofline Console binary — web console, engine control, CLI and the engine
//! simulator in one executable, with the toolbox's task names.
// Server-rendered leptos views are deeply nested types (the incident wizard, in test builds).
#![recursion_limit = "256"]

mod auth;
mod bench;
pub mod cli;
mod collect;
mod config;
mod console_metrics;
mod control;
mod db;
mod demo;
mod fleet;
mod gpu;
mod history;
mod incidents;
mod journal;
mod review;
mod sim;
mod smoke;
mod supervisor;
mod vram;
mod web;

fn main() {
    // The simulator is launched as `roofline sim vllm serve MODEL …`: its arguments are the
    // engine's, not ours, so it is dispatched before our own parser sees them.
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("sim") {
        let code = match argv.get(2).map(String::as_str) {
            Some("vllm") => sim::main(app::domain::engine::EngineKind::Vllm, &argv[3..]),
            Some("sglang") => sim::main(app::domain::engine::EngineKind::Sglang, &argv[3..]),
            _ => {
                eprintln!("usage: roofline sim vllm serve MODEL [vLLM flags] | roofline sim sglang --model-path M [SGLang flags]");
                2
            }
        };
        std::process::exit(code);
    }
    std::process::exit(cli::main());
}
