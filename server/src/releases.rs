//! The engine releases the built-in simulator plays: the two captured ones (vLLM 0.33.0,
//! SGLang 0.5.23) and one synthetic next vLLM release. A fact of this build that host
//! configuration is checked against (`simulator_version`) before anything starts; how the
//! simulator plays each one (its help, its metric names) is `sim::release`.

use app::domain::engine::EngineKind;

/// One release the simulator can play. Installations choose it in host configuration
/// (`simulator_version`); the simulator is then launched as `roofline sim vllm@VERSION`.
/// A simulator spec naming no engine or release it plays (the second argument of `sim`).
#[derive(Debug, thiserror::Error)]
pub enum UnknownRelease {
    #[error("the simulator plays vllm or sglang, not `{0}`")]
    Engine(String),
    #[error("the simulator has no {engine} {version}; it plays {known}")]
    Version {
        engine: &'static str,
        version: String,
        known: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    pub kind: EngineKind,
    pub version: &'static str,
    pub synthetic: bool,
}

/// The synthetic next vLLM release.
pub const NEXT_VLLM: &str = "0.34.0+synthetic";

pub const RELEASES: &[Release] = &[
    Release {
        kind: EngineKind::Vllm,
        version: "0.33.0",
        synthetic: false,
    },
    Release {
        kind: EngineKind::Sglang,
        version: "0.5.23",
        synthetic: false,
    },
    Release {
        kind: EngineKind::Vllm,
        version: NEXT_VLLM,
        synthetic: true,
    },
];

impl Release {
    /// The captured release of an engine: what a plain `simulator = true` installation plays.
    pub fn current(kind: EngineKind) -> Release {
        RELEASES
            .iter()
            .copied()
            .find(|r| r.kind == kind && !r.synthetic)
            .unwrap_or(Release {
                kind,
                version: "0",
                synthetic: false,
            })
    }

    pub fn find(kind: EngineKind, version: &str) -> Option<Release> {
        RELEASES
            .iter()
            .copied()
            .find(|r| r.kind == kind && r.version == version)
    }

    /// `vllm`, `sglang` or `vllm@VERSION`, as the simulator's second argument.
    pub fn parse(spec: &str) -> Result<Release, UnknownRelease> {
        let (kind, version) = match spec.split_once('@') {
            Some((k, v)) => (k, Some(v)),
            None => (spec, None),
        };
        let kind = match kind {
            "vllm" => EngineKind::Vllm,
            "sglang" => EngineKind::Sglang,
            other => return Err(UnknownRelease::Engine(other.chars().take(64).collect())),
        };
        match version {
            None => Ok(Release::current(kind)),
            Some(v) => Release::find(kind, v).ok_or_else(|| UnknownRelease::Version {
                engine: kind.as_str(),
                version: v.chars().take(64).collect(),
                known: RELEASES
                    .iter()
                    .filter(|r| r.kind == kind)
                    .map(|r| r.version)
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The spec `parse` reads back.
    pub fn spec(&self) -> String {
        if *self == Release::current(self.kind) {
            self.kind.as_str().to_string()
        } else {
            format!("{}@{}", self.kind.as_str(), self.version)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_unknown_versions_are_refused() {
        for r in RELEASES {
            assert_eq!(Release::parse(&r.spec()).unwrap(), *r);
        }
        assert_eq!(Release::parse("vllm").unwrap().version, "0.33.0");
        let e = Release::parse("vllm@9.9").unwrap_err().to_string();
        assert!(e.contains("0.33.0") && e.contains(NEXT_VLLM), "{e}");
        assert!(Release::parse("tgi").is_err());
    }
}
