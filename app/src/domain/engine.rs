//! What an engine is, as both the console and the browser see it.

use serde::{Deserialize, Serialize};

/// The serving engine family; decides the flag names and the launch form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Vllm,
    Sglang,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vllm => "vllm",
            Self::Sglang => "sglang",
        }
    }

    /// The port the engine listens on when a profile names none.
    pub fn default_port(self) -> u16 {
        match self {
            Self::Vllm => 8000,
            Self::Sglang => 30000,
        }
    }

    /// The log line each engine prints when it starts answering requests.
    pub fn ready_line(self) -> &'static str {
        match self {
            Self::Vllm => "Application startup complete.",
            Self::Sglang => "The server is fired up and ready to roll!",
        }
    }
}

impl std::str::FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "vllm" => Ok(Self::Vllm),
            "sglang" => Ok(Self::Sglang),
            other => Err(format!("unknown engine kind `{other}` (expected vllm or sglang)")),
        }
    }
}

/// The lifecycle state the fleet page colours an engine by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, crate::decode::FromWire)]
#[serde(rename_all = "lowercase")]
pub enum EngineState {
    /// No process: never started or stopped on purpose.
    Stopped,
    /// The process is up and the console is waiting for `/health`.
    Starting,
    /// `/health` answers 200.
    Healthy,
    /// The process is alive but `/health` fails or does not answer.
    Unhealthy,
    /// The process went away without being stopped.
    Dead,
    /// `/health` answers, but requests are queued and no token has been generated for a
    /// while (a stuck collective, a wedged CUDA call).
    Hung,
    /// A remote console or bare engine in the fleet that did not answer: its engines' state
    /// is unknown, which is not the same as dead.
    Unreachable,
}

impl EngineState {
    pub const ALL: [EngineState; 7] = [
        Self::Stopped,
        Self::Starting,
        Self::Healthy,
        Self::Unhealthy,
        Self::Dead,
        Self::Hung,
        Self::Unreachable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stopped => "stopped",
            Self::Starting => "starting",
            Self::Healthy => "healthy",
            Self::Unhealthy => "unhealthy",
            Self::Dead => "dead",
            Self::Hung => "hung",
            Self::Unreachable => "unreachable",
        }
    }

    /// Whether a process is believed to run (serve is then idempotent, stop has work to do).
    pub fn is_running(self) -> bool {
        matches!(self, Self::Starting | Self::Healthy | Self::Unhealthy | Self::Hung)
    }
}

/// One row of the fleet page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct EngineStatus {
    pub profile: String,
    pub engine: String,
    pub kind: EngineKind,
    pub simulated: bool,
    /// The console plays demo traffic to it (`console --demo`): its load is not clients'.
    #[serde(default)]
    pub demo_traffic: bool,
    pub host: String,
    pub port: u16,
    pub state: EngineState,
    pub pid: Option<i32>,
    /// Seconds since the process started, when one runs.
    pub uptime_s: Option<u64>,
    /// The startup phase reached, while starting.
    pub phase: Option<super::phases::StartupPhase>,
    /// While starting: the current phase has run far past its median in earlier starts.
    #[serde(default)]
    pub stall: Option<super::phases::Stall>,
    /// The matching startup-failure row, when the last start failed.
    pub failure: Option<crate::domain::startup_failure::FailureMatch>,
    /// The console's own note (a refused port, a stale pid file), already in English for logs.
    pub note: Option<String>,
    /// A hang verdict in the reader's language: the pages render it where `note` would be
    /// English (`note` then carries its English text, for logs and the JSON API).
    #[serde(default)]
    pub verdict: Option<crate::domain::reading::Reading>,
    /// Live signals from the engine's `/metrics`, when the console collects them.
    #[serde(default)]
    pub live: Option<crate::domain::signals::Live>,
    /// Why there are no live signals (no `/metrics`, a failed scrape).
    #[serde(default)]
    pub metrics_note: Option<String>,
    /// The name clients address the model by (what the completion probe asks for).
    #[serde(default)]
    pub model_name: String,
    /// The last one-token completion probe: latency in ms, or `None` while none finished.
    #[serde(default)]
    pub probe_ms: Option<f64>,
    /// The engine's GPUs, when the GPU collector sees one of its processes on them.
    #[serde(default)]
    pub gpu: Option<crate::domain::gpu::GpuSummary>,
    /// The fleet host the engine runs on: empty for this console's own engines, else the name
    /// of a remote console or bare engine from the host configuration.
    #[serde(default)]
    pub node: String,
    /// Where its page is, for an engine of another console (that console's engine page).
    #[serde(default)]
    pub link: Option<String>,
    /// The engine of another host sharing this console's database: actions on it go to that
    /// host as jobs (the Hosts page), not through a link to its console.
    #[serde(default)]
    pub shared_host: bool,
    /// When `live` was scraped (Unix ms): how fresh the figures are.
    #[serde(default)]
    pub scraped_at_ms: Option<i64>,
    /// What `/health` answered on this read; `None` when nothing answered in time (a stopped
    /// or wedged API server accepts the connection and never replies) or it was not asked.
    #[serde(default)]
    pub health_code: Option<u16>,
}

impl EngineStatus {
    /// Dead, yet processes of its tree still run (a killed vLLM API server's EngineCore and
    /// workers): the status names them and keeps the leader's pid, which nothing else that
    /// is dead has.
    pub fn has_survivors(&self) -> bool {
        self.state == EngineState::Dead && self.pid.is_some()
    }

    /// The console's note in `lang`: a hang verdict rendered there, any other note as written.
    /// Only a hang verdict's key renders: a row from another host's console could name any
    /// message of the locale, and then reads as its plain note.
    pub fn note_text(&self, lang: crate::i18n::Lang) -> Option<String> {
        self.verdict
            .as_ref()
            .filter(|v| crate::domain::stall::HangKind::of_key(&v.key).is_some())
            .map(|v| v.text(lang))
            .or_else(|| self.note.clone())
    }

    /// A row with only its identity and state known; the collectors fill in the rest.
    pub fn blank(profile: &str, kind: EngineKind, state: EngineState) -> Self {
        Self {
            profile: profile.to_string(),
            engine: String::new(),
            kind,
            simulated: false,
            demo_traffic: false,
            host: String::new(),
            port: 0,
            state,
            pid: None,
            uptime_s: None,
            phase: None,
            stall: None,
            failure: None,
            note: None,
            verdict: None,
            live: None,
            metrics_note: None,
            model_name: String::new(),
            probe_ms: None,
            gpu: None,
            node: String::new(),
            link: None,
            shared_host: false,
            scraped_at_ms: None,
            health_code: None,
        }
    }
}
