//! The engine releases the simulator plays: the two captured ones (vLLM 0.33.0, SGLang
//! 0.5.23, whose real `--help` it prints and accepts) and one synthetic next vLLM release.
//!
//! The synthetic release exists so that an upgrade can be exercised end to end without a
//! second real engine: its help is the captured 0.33.0 help with the kinds of change real
//! vLLM upgrades have made (a flag removed, one renamed with a pointer from the new name, a
//! switch that became a choice, a tool-call parser renamed, a default moved, a flag
//! deprecated), and its `/metrics` renames one family. Its version says "synthetic", so no
//! one mistakes it for a vLLM release.

pub use crate::releases::{Release, NEXT_VLLM, RELEASES};
use app::domain::engine::EngineKind;

/// The engines' real help, captured from vllm 0.33.0 and sglang 0.5.23 (testdata/help).
const VLLM_HELP: &str = include_str!("../../../testdata/help/vllm-0.33.0-serve-help-all.txt");
const SGLANG_HELP: &str = include_str!("../../../testdata/help/sglang-0.5.23-launch-server-help.txt");

/// Metric families the synthetic release serves under another name: the step counter the
/// stall detector reads (a signal the console can do without, so its gate still passes and
/// says what it lost).
const NEXT_VLLM_METRIC_RENAMES: &[(&str, &str)] = &[("vllm:iteration_tokens_total", "vllm:iteration_tokens")];

impl Release {
    /// The engine's own help text for this release (without the simulator's knobs).
    pub fn engine_help(&self) -> String {
        match (self.kind, self.version) {
            (EngineKind::Vllm, NEXT_VLLM) => next_vllm_help(VLLM_HELP),
            (EngineKind::Vllm, _) => VLLM_HELP.to_string(),
            (EngineKind::Sglang, _) => SGLANG_HELP.to_string(),
        }
    }

    /// The environment report the engine prints (`vllm collect-env`, `sglang.check_env`), in
    /// its own layout. The versions come from `ROOFLINE_SIM_TORCH` (`2.9.0+cu128`) and
    /// `ROOFLINE_SIM_DRIVER` (`570.133.20`), so a test can move them under a pinned set.
    pub fn env_report(&self) -> String {
        let var = |k: &str, d: &str| {
            std::env::var(k)
                .ok()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| d.to_string())
        };
        let torch = var("ROOFLINE_SIM_TORCH", "2.9.0+cu128");
        let driver = var("ROOFLINE_SIM_DRIVER", "570.133.20");
        let cuda = app::domain::pins::cuda_of_torch(&torch).unwrap_or_else(|| "N/A".into());
        match self.kind {
            EngineKind::Vllm => format!(
                "Collecting environment information...\n==============================\n        System Info\n==============================\nOS                           : Roofline simulator (x86_64)\n\n==============================\n       PyTorch Info\n==============================\nPyTorch version              : {torch}\nIs debug build               : False\nCUDA used to build PyTorch   : {cuda}\nROCM used to build PyTorch   : N/A\n\n==============================\n       CUDA / GPU Info\n==============================\nIs CUDA available            : True\nCUDA runtime version         : {cuda}.90\nGPU models and configuration : GPU 0: simulated\nNvidia driver version        : {driver}\n\n==============================\n         vLLM Info\n==============================\nvLLM Version                 : {} (simulated)\n",
                self.version
            ),
            EngineKind::Sglang => format!(
                "Python: 3.12.3\nCUDA available: True\nGPU 0: simulated\nCUDA_HOME: /usr/local/cuda\nNVCC: Cuda compilation tools, release {cuda}, V{cuda}.90\nCUDA Driver Version: {driver}\nPyTorch: {torch}\nsglang: {}\n",
                self.version
            ),
        }
    }

    /// Renames applied to the `/metrics` exposition.
    pub fn metric_renames(&self) -> &'static [(&'static str, &'static str)] {
        match (self.kind, self.version) {
            (EngineKind::Vllm, NEXT_VLLM) => NEXT_VLLM_METRIC_RENAMES,
            _ => &[],
        }
    }
}

/// The lines of the option block that starts with `flag` (its option line and the help lines
/// below it), as a line range.
fn option_block(lines: &[&str], flag: &str) -> Option<std::ops::Range<usize>> {
    let start = lines.iter().position(|l| {
        l.strip_prefix("  ")
            .and_then(|rest| rest.strip_prefix(flag))
            .is_some_and(|after| after.is_empty() || after.starts_with([' ', ',']))
    })?;
    let mut end = start + 1;
    while end < lines.len() && lines[end].starts_with("    ") {
        end += 1;
    }
    Some(start..end)
}

fn replace_block(text: &str, flag: &str, block: Option<&str>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(range) = option_block(&lines, flag) else {
        return text.to_string();
    };
    let mut out: Vec<&str> = lines[..range.start].to_vec();
    if let Some(b) = block {
        out.extend(b.lines());
    }
    out.extend(&lines[range.end..]);
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// The synthetic next vLLM help, from the captured 0.33.0 help.
fn next_vllm_help(base: &str) -> String {
    let mut h = base.to_string();
    // Removed outright.
    h = replace_block(&h, "--long-prefill-token-threshold", None);
    // Renamed: the new flag names its former spelling.
    h = replace_block(
        &h,
        "--enable-logging-iteration-details",
        Some("  --log-iteration-details, --no-log-iteration-details\n                        Log the number of context and generation requests and\n                        tokens of each iteration (formerly\n                        --enable-logging-iteration-details). (default: False)"),
    );
    // A switch that now takes a value.
    h = replace_block(
        &h,
        "--enable-chunked-prefill",
        Some("  --enable-chunked-prefill {auto,on,off}\n                        Chunk prefill requests against\n                        `max_num_batched_tokens`. (default: auto)"),
    );
    // Deprecated, still accepted.
    h = replace_block(
        &h,
        "--disable-log-stats",
        Some("  --disable-log-stats   Deprecated: statistics logging will be always on; use\n                        --log-stats-interval to slow it down. (default: False)"),
    );
    // A default that moved (and said so in the help, as vLLM does).
    h = h.replacen(
        "If unspecified, will use the default value of 0.92.",
        "If unspecified, will use the default value of 0.94.",
        1,
    );
    let lines: Vec<&str> = h.lines().collect();
    if let Some(range) = option_block(&lines, "--gpu-memory-utilization") {
        let block = lines[range.clone()].join("\n");
        if let Some(pos) = block.rfind("(default: ") {
            let tail = &block[pos..];
            if let Some(end) = tail.find(')') {
                let replaced = format!("{}(default: 0.94){}", &block[..pos], &tail[end + 1..]);
                h = replace_block(&h, "--gpu-memory-utilization", Some(&replaced));
            }
        }
    }
    // A tool-call parser renamed (`llama3_json` → `llama3`).
    h = h.replacen(",llama3_json,", ",llama3,", 1);
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::help_flags::parse_help;

    #[test]
    fn the_synthetic_release_differs_only_where_it_says() {
        let old = parse_help(VLLM_HELP);
        let next = Release::parse(&format!("vllm@{NEXT_VLLM}")).unwrap();
        let new = parse_help(&next.engine_help());
        assert!(old.find("--long-prefill-token-threshold").is_some());
        assert!(new.find("--long-prefill-token-threshold").is_none());
        assert!(new.find("--enable-logging-iteration-details").is_none());
        assert!(new.find("--log-iteration-details").is_some());
        assert_eq!(
            new.find("--enable-chunked-prefill").unwrap().metavar.as_deref(),
            Some("{auto,on,off}")
        );
        assert!(new.find("--disable-log-stats").unwrap().deprecated);
        assert_eq!(
            new.find("--gpu-memory-utilization").unwrap().default.as_deref(),
            Some("0.94")
        );
        let parsers = new.find("--tool-call-parser").unwrap().choices().unwrap();
        assert!(parsers.contains(&"llama3".to_string()) && !parsers.contains(&"llama3_json".to_string()));
        // Everything else is as captured.
        assert_eq!(old.flags.len(), new.flags.len() + 1);
    }
}
