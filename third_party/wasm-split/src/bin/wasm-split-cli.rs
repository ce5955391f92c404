use clap::{Parser, ValueEnum};
use eyre::Result;
use std::path::Path;

use wasm_split_cli_support as this;

#[derive(Debug, ValueEnum, Clone, Copy, PartialEq, Eq, Default)]
enum Target {
    #[default]
    Web,
    Bundler,
}

#[derive(Debug, Parser)]
#[command(name = "wasm-split")]
struct Cli {
    /// Input .wasm file.
    input: Box<Path>,

    /// Output directory.
    output: Box<Path>,

    /// Output target
    #[arg(long)]
    target: Option<Target>,

    /// Output module name
    #[arg(long)]
    out_name: Option<String>,

    /// Print verbose split information.
    #[arg(short, long)]
    verbose: bool,

    /// Shared code needed by this many groups (`group__page` split names) or more goes to the
    /// main module.
    #[arg(long, default_value_t = 0)]
    main_if_shared_by: usize,

    /// A chunk with less code than this many bytes goes to the main module.
    #[arg(long, default_value_t = 0)]
    min_chunk_bytes: usize,

    /// Widen shared code to whole groups: one chunk per set of groups, not per set of pages.
    #[arg(long)]
    by_group: bool,

    /// A group of views loaded on top of other pages: not counted by --main-if-shared-by
    /// (repeatable).
    #[arg(long = "on-demand-group")]
    on_demand_groups: Vec<String>,
}

fn main() -> Result<()> {
    tracing_subscriber::fmt::init();

    let args = Cli::parse();
    let input_wasm = std::fs::read(args.input)?;
    let stem = match args.out_name.as_ref() {
        Some(name) => name,
        None => "main",
    };
    let main_module;
    let main_out_path = args.output.join(&format!("{stem}.wasm"));
    let _ = this::transform({
        let mut opts = this::Options::new(&input_wasm);
        opts.verbose = args.verbose;
        opts.merge = this::MergePolicy {
            main_if_shared_by: args.main_if_shared_by,
            min_chunk_bytes: args.min_chunk_bytes,
            by_group: args.by_group,
            on_demand: args.on_demand_groups.iter().cloned().collect(),
        };
        opts.output_dir = &args.output;
        opts.main_out_path = &main_out_path;
        if let Some(name) = args.out_name.as_ref() {
            main_module = match args.target {
                None | Some(Target::Web) => format!("./{name}.js"),
                Some(Target::Bundler) => format!("./{name}_bg.wasm"),
            };
            opts.main_module = &main_module;
        }
        match args.target {
            Some(Target::Web) => {
                opts.target.web();
            }
            Some(Target::Bundler) => {
                opts.target.bundler();
            }
            None => {}
        }
        opts
    })?;
    Ok(())
}
