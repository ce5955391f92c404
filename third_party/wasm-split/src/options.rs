use std::collections::BTreeSet;
use std::path::Path;

/// Web target specific options
#[derive(Default)]
pub struct WebTargetOptions {
    _priv: (),
}

/// Bundler target specific options
#[derive(Default)]
pub struct BundlerTargetOptions {
    pub(crate) _source_imports: bool,
}

/// Target specific options
#[non_exhaustive]
pub enum OutputTarget {
    Web(WebTargetOptions),
    Bundler(BundlerTargetOptions),
}

impl Default for OutputTarget {
    fn default() -> Self {
        Self::Web(Default::default())
    }
}

impl OutputTarget {
    /// Change the target to "web".
    ///
    /// This target supports javascript modules, but instantiates
    /// wasm modules with manually configured imports.
    pub fn web(&mut self) -> &mut WebTargetOptions {
        loop {
            if let Self::Web(web) = self {
                break web;
            }
            *self = Self::Web(Default::default());
        }
    }
    /// Change the target to "bundler".
    ///
    /// This target is geared towards webpack. Wasm modules derive
    /// their imports from the declared import paths.
    pub fn bundler(&mut self) -> &mut BundlerTargetOptions {
        loop {
            if let Self::Bundler(bundler) = self {
                break bundler;
            }
            *self = Self::Bundler(Default::default())
        }
    }
}

#[non_exhaustive]
pub struct Options<'a> {
    /// The input wasm to split
    pub input_wasm: &'a [u8],
    /// Where to put javascript wrappers, split wasm modules.
    ///
    /// Default: `Path::new("wasm_split")`
    pub output_dir: &'a Path,
    /// Where to put the main module that has to be post-processed by wasm-bindgen.
    /// Usually a path in `output_dir`.
    ///
    /// Default: `Path::new("wasm_split/main.wasm")`
    pub main_out_path: &'a Path,
    /// Module path of the created link file, relative to the output dir.
    /// The wasm will use this path to import the loader functions for the split chunks.
    ///
    /// Default: `"./__wasm_split.js"`
    pub link_name: &'a str,
    /// Output target
    ///
    /// Default: Web
    pub target: OutputTarget,
    /// The meaning of this depends on the target:
    /// - for web, this is that module path from where `initSync` will be imported from
    /// - for bundler this is the module path to the wasm module
    ///
    /// Default: `"./main.js"`
    pub main_module: &'a str,
    /// Verbosely output additional information about processing.
    ///
    /// Default: false
    pub verbose: bool,
    /// Switch to transform and emit `.debug_` sections.
    ///
    /// This option is experimental.
    /// Default: `true` if the `WASM_SPLIT_CLI_ENABLE_DWARF` environment variable is non-empty.
    pub emit_dwarf: bool,
    /// Enables explicit tests for assumptions we make about the input wasm file during integration testing.
    #[doc(hidden)]
    pub strict_tests: bool,
    /// How code shared by several split modules is placed (Roofline Console's addition).
    ///
    /// Default: as upstream, one chunk per distinct set of split modules using it.
    pub merge: MergePolicy,
}

/// Where code that several split modules share goes, instead of one chunk per distinct set of
/// users (which, with many split points, makes many tiny chunks: one request each).
///
/// A split module named `group__page` belongs to `group`; one without `__` is a group of its
/// own. Shared code is first widened to whole groups: code two pages of one group share is
/// in that group's chunk, loaded by each of its pages; code pages of several groups share
/// is in the chunk of those groups. Then a chunk that `main_if_shared_by` groups or more
/// need, or that is smaller than `min_chunk_bytes` of code, goes to the main module.
/// Every step only widens where a piece of code is loaded, and whatever a moved piece calls
/// moves with it, so every module still finds its dependencies loaded.
///
/// An `on_demand` group holds views a page loads on top of itself when asked (a dialog, a
/// result): it does not count towards `main_if_shared_by`, so code it shares with two groups
/// stays in a chunk of those groups (which its parts load too) instead of every page's main
/// module.
#[derive(Debug, Clone, Default)]
pub struct MergePolicy {
    /// Code needed by this many groups or more goes to the main module (0: never).
    pub main_if_shared_by: usize,
    /// A chunk with less code than this (bytes of function bodies) goes to the main module.
    pub min_chunk_bytes: usize,
    /// Widen shared code to whole groups (`group__page` names).
    pub by_group: bool,
    /// Groups loaded on top of other pages, not counted by `main_if_shared_by`.
    pub on_demand: BTreeSet<String>,
}

impl<'wasm> Options<'wasm> {
    /// New default options of the specified input wasm.
    pub fn new(input_wasm: &'wasm [u8]) -> Self {
        Self {
            input_wasm,
            output_dir: Path::new("wasm_split"),
            main_out_path: Path::new("wasm_split/main.wasm"),
            link_name: "./__wasm_split.js",
            main_module: "./main.js",
            target: OutputTarget::default(),
            verbose: false,
            emit_dwarf: std::env::var_os("WASM_SPLIT_CLI_ENABLE_DWARF").is_some_and(|v| !v.is_empty()),
            strict_tests: false,
            merge: MergePolicy::default(),
        }
    }
}
