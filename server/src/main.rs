//! `roofline`: the Roofline Console binary — web console, engine control, CLI and the engine
//! simulator in one executable, with the toolbox's task names.

fn main() {
    server::tls::install_default_provider();
    // The simulator is launched as `roofline sim vllm serve MODEL …`: its arguments are the
    // engine's, not ours, so it is dispatched before our own parser sees them.
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("sim") {
        let code = match argv.get(2).map(String::as_str) {
            Some("worker") => server::sim::worker_main(argv.get(3).map(String::as_str)),
            Some("engine-core") => server::sim::engine_core_main(&argv[3..]),
            // `vllm`, `sglang`, or `vllm@VERSION` for another release the simulator carries.
            Some(spec) => server::sim::main(spec, &argv[3..]),
            None => {
                eprintln!("usage: roofline sim vllm[@VERSION] serve MODEL [vLLM flags] | roofline sim sglang --model-path M [SGLang flags]");
                2
            }
        };
        std::process::exit(code);
    }
    std::process::exit(server::cli::main(|ctx, addr| Box::pin(server::web::serve(ctx, addr))));
}
