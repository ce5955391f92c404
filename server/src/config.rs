//! Host configuration: which engine installations may run here, where models and state live,
//! where the console listens. It is a TOML file in the data directory that only the host's
//! operator edits; profiles can name an installation but never an executable.

use anyhow::{bail, Context};
use app::domain::engine::EngineKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};

/// The file name of host configuration inside the data directory.
pub const CONFIG_FILE: &str = "roofline.toml";

/// One engine installation that may run on this host.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EngineInstall {
    pub kind: EngineKind,
    /// The executable and its fixed arguments (`["vllm"]`, `["python", "-m",
    /// "sglang.launch_server"]`). Ignored for the simulator, which is this binary.
    #[serde(default)]
    pub command: Vec<String>,
    /// Run the Roofline engine simulator instead of a real engine.
    #[serde(default)]
    pub simulator: bool,
    /// The release the simulator plays (`"0.34.0+synthetic"`); the captured one when absent.
    /// Only with `simulator = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulator_version: Option<String>,
    /// Code-loading flags profiles may pass to this installation in `EXTRA_ARGS`
    /// (`["--trust-remote-code"]`). A profile can never allow them itself.
    #[serde(default)]
    pub allow_flags: Vec<String>,
    /// Run the engine in a container through this CLI (`"podman"` or `"docker"`). `command` is
    /// then the container CLI with its own global arguments (`["podman", "--runtime", "runc"]`;
    /// default: the runtime's name), and `image` is what runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<ContainerRuntime>,
    /// The image, pinned by digest (`vllm/vllm-openai@sha256:…`): a tag can move under a
    /// profile that a review approved, a digest cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// GPUs the container gets: `"all"`, `"none"` or device indexes (`"0,1"`); as CDI devices
    /// (`nvidia.com/gpu=…`) under podman, `--gpus` under docker. Default: all, none for the
    /// simulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<String>,
    /// `"host"` (default: the engine binds the profile's address on the host) or `"ports"`
    /// (the container's own network, the profile's port published on its address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<ContainerNetwork>,
    /// What starts the engine inside the image (program and fixed arguments). Default:
    /// `vllm`, `python3 -m sglang.launch_server`, or `roofline sim KIND` for the simulator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entrypoint: Vec<String>,
    /// More options for the container CLI's `run` (`["--shm-size", "16g"]`): the host's
    /// choice, placed before the image, never a profile's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_args: Vec<String>,
}

impl EngineInstall {
    /// What starts the engine inside a container installation's image: `entrypoint`, else the
    /// engines' usual programs (the simulator is the `roofline` binary in the image).
    pub fn image_entrypoint(&self) -> Vec<String> {
        if !self.entrypoint.is_empty() {
            return self.entrypoint.clone();
        }
        if self.simulator {
            return vec!["roofline".into(), "sim".into(), self.simulator_spec()];
        }
        match self.kind {
            EngineKind::Vllm => vec!["vllm".into()],
            EngineKind::Sglang => vec!["python3".into(), "-m".into(), "sglang.launch_server".into()],
        }
    }

    /// The simulator's `sim` argument: the kind, with the release it plays when configured.
    fn simulator_spec(&self) -> String {
        match &self.simulator_version {
            Some(v) => format!("{}@{v}", self.kind.as_str()),
            None => self.kind.as_str().to_string(),
        }
    }
}

/// The container CLI an installation runs its engine through.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ContainerRuntime {
    Podman,
    Docker,
}

impl ContainerRuntime {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Podman => "podman",
            Self::Docker => "docker",
        }
    }
}

/// How a container reaches the network.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ContainerNetwork {
    #[default]
    Host,
    Ports,
}

/// The host configuration file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Where the console listens.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Model weights must live under this directory (relative paths are inside the data dir).
    #[serde(default = "default_models_root")]
    pub models_root: PathBuf,
    /// Pid files and engine logs (relative paths are inside the data dir).
    #[serde(default = "default_state_dir")]
    pub state_dir: PathBuf,
    /// How long `serve` waits for `/health` before giving up.
    #[serde(default = "default_serve_timeout")]
    pub serve_timeout_s: u64,
    /// How long `stop` waits after SIGTERM before SIGKILL.
    #[serde(default = "default_stop_grace")]
    pub stop_grace_s: u64,
    /// Profiles the console serves the first time it sees them (the demo fleet); later starts
    /// leave them as the operator left them.
    #[serde(default)]
    pub autostart: Vec<String>,
    /// Set by `console --demo`, never read from the file: the console plays demo traffic to
    /// its simulated engines (`demo::load`), and their rows say so.
    #[serde(skip)]
    pub demo_load: bool,
    #[serde(default)]
    pub engines: BTreeMap<String, EngineInstall>,
    /// How often each engine's `/metrics` is scraped, in seconds (1 to 60; default 5).
    #[serde(default = "default_scrape_interval")]
    pub scrape_interval_s: u64,
    /// Other hosts in the fleet overview: remote Roofline consoles or bare engine URLs.
    #[serde(default)]
    pub fleet: Vec<FleetMember>,
    /// What a profile change's gate runs and must meet before the candidate becomes active.
    #[serde(default)]
    pub gate: app::domain::review::GateThresholds,
    #[serde(default)]
    pub auth: AuthConfig,
    /// What profiles may set beyond the defaults (`app::domain::launch`).
    #[serde(default)]
    pub launch: LaunchConfig,
    #[serde(default)]
    pub journal: JournalConfig,
    /// How strict serving is about model directories (the runbook's air-gap rules).
    #[serde(default)]
    pub verify: VerifyMode,
    #[serde(default)]
    pub tls: TlsConfig,
    /// A PostgreSQL shared by every console of the fleet (`postgres://user@host:port/db`):
    /// accounts, sessions, the journal, changes and incidents are then one set for all of
    /// them. Absent: the data directory's own SQLite file.
    #[serde(default)]
    pub database_url: Option<String>,
    /// A file holding the database password (kept out of the URL and of this file, 0600).
    #[serde(default)]
    pub database_password_file: Option<PathBuf>,
    /// This host's name in a shared database (the fleet's hosts, jobs, live rows): default
    /// the kernel's host name. Unique in the fleet.
    #[serde(default)]
    pub host_name: Option<String>,
    /// The team's Prometheus: history beyond the console's own (`[prometheus] url`).
    #[serde(default)]
    pub prometheus: PrometheusConfig,
    /// Where other consoles' pages link to this one (`https://gpu-b.example:8080`): default
    /// the listener's address with this host's name.
    #[serde(default)]
    pub advertise_url: Option<String>,
}

/// The team's Prometheus, fed by the console's HTTP service discovery (`/api/prometheus/sd`,
/// which labels each engine with `profile` and `host`): the charts' 1 h and 24 h ranges and the
/// minutes before a symptom read `query_range` there, so history is as long as it keeps.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PrometheusConfig {
    /// `http://prometheus.internal:9090`
    #[serde(default)]
    pub url: Option<String>,
}

/// TLS: the console's own HTTPS listener, and what outbound HTTPS (remote consoles and engines
/// in `[[fleet]]`) trusts beyond the system's CA store.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM certificate chain (the server's certificate first). With `key`, the console serves
    /// HTTPS only, and its cookies are `Secure`.
    #[serde(default)]
    pub cert: Option<PathBuf>,
    /// PEM private key of `cert` (PKCS#8, PKCS#1 or SEC1).
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// PEM file of CA certificates to trust for outbound HTTPS besides the system's (a private
    /// CA that signed the other consoles' certificates).
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
}

impl TlsConfig {
    /// The listener's certificate and key, when both are set.
    pub fn listener(&self) -> Option<(&Path, &Path)> {
        self.cert.as_deref().zip(self.key.as_deref())
    }
}

/// `warn` serves a model directory whatever its check found (and says what); `require`
/// refuses one with an error or without a checked SHA256SUMS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    #[default]
    Warn,
    Require,
}

/// The change journal's protection beyond its hash chain.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JournalConfig {
    /// A file holding a secret key (kept away from the database, 0600): every entry then
    /// carries an HMAC of its hash, so the chain cannot be rewritten without the key.
    #[serde(default)]
    pub hmac_key_file: Option<PathBuf>,
}

/// Host additions to what a profile may set.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LaunchConfig {
    /// More `ENV_*` names profiles may set, each by its exact name (a wildcard is refused:
    /// `VLLM_*` let through the engines' development and insecure-deserialisation switches).
    /// Linker, Python and shell variables (`LD_*`, `PYTHON*`, `PATH`, …) stay refused.
    #[serde(default)]
    pub allow_env: Vec<String>,
    /// Addresses beyond loopback an engine may bind or reach through a flag's value
    /// (`--otlp-traces-endpoint`, `--kv-events-config`'s endpoint, SGLang's
    /// `--dist-init-addr`), each an exact address or host name: a wildcard or an any-address
    /// (`*`, `0.0.0.0`, `::`) is refused when the console starts.
    #[serde(default)]
    pub allow_endpoints: Vec<String>,
    /// What `serve` does when processes of a profile's previous engine still run after its
    /// leader died (vLLM's EngineCore and workers, holding GPU memory): refuse and name them
    /// (`false`, the default), or end them first and journal that (`true`).
    #[serde(default)]
    pub reap_survivors: bool,
}

/// The fewest characters a bearer token in `[auth]` may have (`openssl rand -hex 32` gives 64).
pub const MIN_TOKEN: usize = 32;

impl AuthConfig {
    /// Refuses a bearer token that anyone could guess: shorter than [`MIN_TOKEN`], or the
    /// example configuration's placeholder (it worked as a real token). Checked when the
    /// console starts; the error names the key.
    pub fn check_secrets(&self) -> anyhow::Result<()> {
        for (key, token) in [
            ("alertmanager_token", &self.alertmanager_token),
            ("prometheus_sd_token", &self.prometheus_sd_token),
            ("fleet_token", &self.fleet_token),
        ] {
            let Some(t) = token else { continue };
            let lower = t.to_ascii_lowercase();
            let placeholder = ["change-me", "changeme", "example", "placeholder", "replace"]
                .iter()
                .any(|p| lower.contains(p));
            let one_char = t.chars().all(|c| t.starts_with(c));
            if placeholder || one_char {
                bail!("{CONFIG_FILE}: [auth] {key} is a placeholder, not a secret: set a random one (`openssl rand -hex 32`)");
            }
            if t.chars().count() < MIN_TOKEN {
                bail!(
                    "{CONFIG_FILE}: [auth] {key} has {} characters; a token needs at least {MIN_TOKEN} (`openssl rand -hex 32`)",
                    t.chars().count()
                );
            }
        }
        Ok(())
    }
}

/// Sign-in and machine access settings. Its `Debug` hides the token: configuration is logged
/// and printed in errors, secrets must not be.
#[derive(Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// Mark cookies `Secure` (HTTPS only). Default: on unless the console listens on loopback
    /// (a console reachable from the network belongs behind TLS).
    #[serde(default)]
    pub secure_cookies: Option<bool>,
    /// Bearer token Alertmanager sends to `/api/alerts/alertmanager`
    /// (`http_config.authorization.credentials`). Without it the webhook is refused.
    #[serde(default)]
    pub alertmanager_token: Option<String>,
    /// Bearer token Prometheus sends to `/api/prometheus/sd` (HTTP service discovery,
    /// `http_sd_configs[].authorization.credentials`) and to `/metrics` (the scrape job's
    /// `authorization.credentials`). Without it service discovery is off and `/metrics` is
    /// public; with it `/metrics` needs the token or a session (it names every profile).
    #[serde(default)]
    pub prometheus_sd_token: Option<String>,
    /// Bearer token the consoles of one fleet share: this console sends it to read the
    /// `[[fleet]]` consoles' `/api/engines`, and accepts it on its own (which otherwise needs a
    /// signed-in session: the fleet's profiles, hosts, ports and models are not public).
    #[serde(default)]
    pub fleet_token: Option<String>,
    /// Reverse proxies (TLS terminators) in front of the console. Their `X-Forwarded-For`
    /// names the client; without this, every client behind a proxy shares its address in the
    /// sign-in rate limit.
    #[serde(default)]
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The names this console is reached by (`gpu-a.internal`), beyond IP addresses,
    /// `localhost` and the machine's own hostname. A request naming another host is refused:
    /// a page on another site whose name resolves here (DNS rebinding) must not read even
    /// the console's public endpoints.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("secure_cookies", &self.secure_cookies)
            .field(
                "alertmanager_token",
                &self.alertmanager_token.as_ref().map(|_| "<hidden>"),
            )
            .field(
                "prometheus_sd_token",
                &self.prometheus_sd_token.as_ref().map(|_| "<hidden>"),
            )
            .field("fleet_token", &self.fleet_token.as_ref().map(|_| "<hidden>"))
            .field("trusted_proxies", &self.trusted_proxies)
            .field("allowed_hosts", &self.allowed_hosts)
            .finish()
    }
}

/// Another host in the fleet overview: either a remote Roofline console (its engines are read
/// from its `/api/engines`) or a bare engine this console scrapes itself.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FleetMember {
    pub name: String,
    /// Base URL of a remote Roofline console, e.g. `http://gpu-b:3000`.
    #[serde(default)]
    pub console: Option<String>,
    /// Base URL of a bare vLLM or SGLang server, e.g. `http://gpu-c:8000`.
    #[serde(default)]
    pub engine: Option<String>,
    /// The bare engine's kind (default vllm).
    #[serde(default)]
    pub kind: Option<EngineKind>,
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 3000))
}
fn default_models_root() -> PathBuf {
    PathBuf::from("models")
}
fn default_state_dir() -> PathBuf {
    PathBuf::from("state")
}
fn default_serve_timeout() -> u64 {
    900
}
fn default_stop_grace() -> u64 {
    10
}
fn default_scrape_interval() -> u64 {
    5
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            listen: default_listen(),
            models_root: default_models_root(),
            state_dir: default_state_dir(),
            serve_timeout_s: default_serve_timeout(),
            stop_grace_s: default_stop_grace(),
            demo_load: false,
            autostart: Vec::new(),
            engines: BTreeMap::new(),
            scrape_interval_s: default_scrape_interval(),
            fleet: Vec::new(),
            gate: Default::default(),
            auth: Default::default(),
            launch: Default::default(),
            journal: Default::default(),
            verify: Default::default(),
            tls: Default::default(),
            database_url: None,
            database_password_file: None,
            host_name: None,
            advertise_url: None,
            prometheus: Default::default(),
        }
    }
}

impl HostConfig {
    /// Parses the file, naming the offending key or line on error.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let cfg: HostConfig = toml::from_str(text).map_err(|e| anyhow::anyhow!("{CONFIG_FILE}: {e}"))?;
        if let Some(name) = &cfg.host_name {
            if !valid_host_name(name) {
                bail!("{CONFIG_FILE}: host_name `{name}`: 1 to 63 characters of a-z, 0-9, '-' and '.', starting with a letter or digit");
            }
        }
        if let Some(url) = &cfg.prometheus.url {
            if !(url.starts_with("http://") || url.starts_with("https://"))
                || url.len() > 512
                || url.contains(char::is_whitespace)
            {
                bail!("{CONFIG_FILE}: [prometheus] url `{url}` must be an http:// or https:// URL");
            }
        }
        if let Some(url) = &cfg.advertise_url {
            if !(url.starts_with("http://") || url.starts_with("https://"))
                || url.len() > 512
                || url.contains(char::is_whitespace)
            {
                bail!("{CONFIG_FILE}: advertise_url `{url}` must be an http:// or https:// URL");
            }
        }
        if let Some(url) = &cfg.database_url {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                bail!(
                    "{CONFIG_FILE}: database_url `{}` must be a postgres:// URL (without it the console keeps its own SQLite file)",
                    redacted(url)
                );
            }
        }
        for (name, install) in &cfg.engines {
            if !app::domain::profile::valid_name(name) {
                bail!("{CONFIG_FILE}: engine installation name `{name}` must match [a-z0-9_-]");
            }
            if !install.simulator && install.command.is_empty() && install.runtime.is_none() {
                bail!(
                    "{CONFIG_FILE}: [engines.{name}] needs `command` (or `simulator = true`, or a container `runtime`)"
                );
            }
            check_container(name, install)?;
            if let Some(v) = &install.simulator_version {
                if !install.simulator {
                    bail!("{CONFIG_FILE}: [engines.{name}] simulator_version is only for `simulator = true`");
                }
                crate::releases::Release::parse(&format!("{}@{v}", install.kind.as_str()))
                    .map_err(|e| anyhow::anyhow!("{CONFIG_FILE}: [engines.{name}] simulator_version: {e}"))?;
            }
        }
        for name in &cfg.launch.allow_env {
            if let Err(why) = app::domain::launch::host_env_entry(name) {
                bail!(
                    "{CONFIG_FILE}: [launch] allow_env entry `{name}` is refused ({why}): list each environment name exactly; linker, Python and shell variables are never allowed"
                );
            }
        }
        for host in &cfg.launch.allow_endpoints {
            let any = host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_unspecified());
            if any || host.is_empty() || host.contains(['*', '?', '/', ' ']) {
                bail!(
                    "{CONFIG_FILE}: [launch] allow_endpoints entry `{host}` is refused: name each address or host exactly; a wildcard or an any-address would let a profile bind every interface"
                );
            }
        }
        if !(1..=60).contains(&cfg.scrape_interval_s) {
            bail!(
                "{CONFIG_FILE}: scrape_interval_s = {} must be between 1 and 60 seconds",
                cfg.scrape_interval_s
            );
        }
        if cfg.tls.cert.is_some() != cfg.tls.key.is_some() {
            bail!("{CONFIG_FILE}: [tls] needs both `cert` and `key` for an HTTPS listener (or neither)");
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, m) in cfg.fleet.iter().enumerate() {
            let at = format!("{CONFIG_FILE}: [[fleet]] #{} ({})", i + 1, m.name);
            if !app::domain::profile::valid_name(&m.name) {
                bail!("{at}: name must match [a-z0-9_-]");
            }
            if !seen.insert(m.name.as_str()) {
                bail!("{at}: the name is used twice");
            }
            let url = match (&m.console, &m.engine) {
                (Some(u), None) | (None, Some(u)) => u,
                _ => bail!("{at}: give exactly one of `console` (a Roofline console) or `engine` (a bare engine URL)"),
            };
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
                bail!("{at}: `{url}` is not an http:// or https:// URL");
            }
            if m.console.is_some() && m.kind.is_some() {
                bail!("{at}: `kind` applies to a bare `engine` only");
            }
        }
        Ok(cfg)
    }
}

/// The container keys of an installation: all or none of them, and an image pinned by digest.
fn check_container(name: &str, install: &EngineInstall) -> anyhow::Result<()> {
    let at = format!("{CONFIG_FILE}: [engines.{name}]");
    let Some(_) = install.runtime else {
        let stray = [
            ("image", install.image.is_some()),
            ("gpus", install.gpus.is_some()),
            ("network", install.network.is_some()),
            ("entrypoint", !install.entrypoint.is_empty()),
            ("run_args", !install.run_args.is_empty()),
        ];
        if let Some((key, _)) = stray.iter().find(|(_, set)| *set) {
            bail!("{at} {key} is only for a container installation (`runtime = \"podman\"` or `\"docker\"`)");
        }
        return Ok(());
    };
    let image = install
        .image
        .as_deref()
        .ok_or_else(|| anyhow::anyhow!("{at} needs `image` (NAME@sha256:DIGEST) with `runtime`"))?;
    check_image(image).map_err(|e| anyhow::anyhow!("{at} image `{image}`: {e}"))?;
    if let Some(g) = &install.gpus {
        parse_gpus(g).map_err(|e| anyhow::anyhow!("{at} gpus = \"{g}\": {e}"))?;
    }
    if install.command.first().is_some_and(|c| c.starts_with('-')) {
        bail!("{at} command must start with the container CLI, not an option");
    }
    Ok(())
}

/// Whether an image reference is pinned by digest: `NAME@sha256:<64 hex>`, the name in the
/// registries' grammar (lowercase path components, an optional registry host and port). A
/// tag alone (`:latest`) is refused: it can point at other bytes tomorrow.
pub fn check_image(image: &str) -> Result<(), ValueError> {
    let Some((name, digest)) = image.split_once('@') else {
        return Err(ValueError::ImageTag);
    };
    let shown = || digest.chars().take(80).collect::<String>();
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| ValueError::DigestKind(shown()))?;
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(ValueError::DigestHex(shown()));
    }
    // The name may keep a tag beside the digest (`repo:1.0@sha256:…`): the digest decides.
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/:".contains(c);
    if name.is_empty() || name.starts_with(['-', '/', '.', ':']) || name.len() > 255 || !name.chars().all(ok) {
        return Err(ValueError::ImageName(name.chars().take(80).collect()));
    }
    Ok(())
}

/// A host configuration value that does not parse: what was wrong, for the message that
/// names the key and the value.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("docker image by digest, not by the latest tag: give NAME@sha256:DIGEST")]
    ImageTag,
    #[error("digest `{0}` is not sha256:…")]
    DigestKind(String),
    #[error("digest `{0}` is not sha256: and 64 lowercase hex digits")]
    DigestHex(String),
    #[error("`{0}` is not an image name (lowercase letters, digits, `._-/:`; not starting with `-`)")]
    ImageName(String),
    #[error("`{0}` is not a device index (give \"all\", \"none\" or \"0,1\")")]
    Device(String),
}

/// Which GPUs a container gets: `None` for none, `Some([])` for all, else the device indexes.
pub fn parse_gpus(text: &str) -> Result<Option<Vec<u32>>, ValueError> {
    match text.trim() {
        "none" => Ok(None),
        "all" => Ok(Some(Vec::new())),
        list => list
            .split(',')
            .map(|d| {
                d.trim()
                    .parse::<u32>()
                    .map_err(|_| ValueError::Device(d.trim().chars().take(80).collect()))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
    }
}

/// The data directory and everything resolved from it.
#[derive(Clone, Debug)]
pub struct DataDir {
    pub root: PathBuf,
    pub config: HostConfig,
    journal_key: JournalKey,
}

/// The journal's HMAC key, read once when the data dir is opened. Its `Debug` hides it.
#[derive(Clone, Default)]
struct JournalKey(Option<std::sync::Arc<Vec<u8>>>);

impl std::fmt::Debug for JournalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "<hidden>" } else { "none" })
    }
}

/// The largest key file read (a key is a few dozen bytes).
const MAX_KEY_FILE: u64 = 64 << 10;

/// A database URL as it may be logged: its password replaced by `***`.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(not a URL)".to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    // A password may also travel as a query parameter.
    let tail = match tail.find("password=") {
        Some(at) => {
            let end = tail[at..].find('&').map_or(tail.len(), |e| at + e);
            format!("{}password=***{}", &tail[..at], &tail[end..])
        }
        None => tail.to_string(),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or_default();
            let hidden = if userinfo.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}@{host}{tail}")
        }
        None => format!("{scheme}://{authority}{tail}"),
    }
}

/// A host name as the fleet's registry keeps it.
pub fn valid_host_name(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// The kernel's host name, lower-cased; `localhost` when it has none usable.
pub fn kernel_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| valid_host_name(h))
        .unwrap_or_else(|| "localhost".into())
}

/// A secret kept in its own file (a password): read up to 64 KiB, trailing whitespace dropped;
/// an empty file is an error that names the file.
pub fn read_secret_file(path: &Path) -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_KEY_FILE).read_to_end(&mut bytes))
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
    let text = text.trim_end();
    if text.is_empty() {
        anyhow::bail!("{}: empty", path.display());
    }
    Ok(text.to_string())
}

impl DataDir {
    /// Opens a data directory, creating it (without a config file) when missing.
    pub fn open(root: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(root).with_context(|| format!("creating data dir {}", root.display()))?;
        let root = root
            .canonicalize()
            .with_context(|| format!("resolving {}", root.display()))?;
        let path = root.join(CONFIG_FILE);
        let config = if path.exists() {
            let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            HostConfig::parse(&text)?
        } else {
            HostConfig::default()
        };
        let mut data = Self {
            root,
            config,
            journal_key: JournalKey::default(),
        };
        data.journal_key = JournalKey(data.read_journal_key().map(std::sync::Arc::new));
        Ok(data)
    }

    /// Reads the key file host configuration names, once (a missing or unreadable file is
    /// logged, not fatal: entries are then not authenticated).
    fn read_journal_key(&self) -> Option<Vec<u8>> {
        use std::io::Read;
        let path = self.resolve(self.config.journal.hmac_key_file.as_ref()?);
        let mut key = Vec::new();
        match std::fs::File::open(&path).and_then(|f| f.take(MAX_KEY_FILE).read_to_end(&mut key)) {
            Ok(_) => Some(key.trim_ascii().to_vec()),
            Err(e) => {
                tracing::error!(path = %path.display(), error = %e, "journal key file unreadable; entries are not authenticated");
                None
            }
        }
    }

    /// This console's identity: a random id kept in the data directory (created on first use,
    /// private), put on every container it starts so it adopts only its own.
    pub fn console_id(&self) -> String {
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.root.join("console.id");
        if let Ok(id) = std::fs::read_to_string(&path) {
            let id = id.trim();
            if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return id.to_string();
            }
        }
        let id = hex::encode(rand::random::<[u8; 16]>());
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, id.as_bytes()));
        match written {
            Ok(()) => id,
            // Another process wrote it first: theirs is the one.
            Err(_) => std::fs::read_to_string(&path)
                .map(|s| s.trim().to_string())
                .unwrap_or(id),
        }
    }

    /// The journal's HMAC key, when host configuration names a readable key file.
    pub fn journal_key(&self) -> Option<Vec<u8>> {
        self.journal_key.0.as_deref().cloned()
    }

    /// This host's name in the fleet's registry.
    pub fn host_name(&self) -> String {
        self.config.host_name.clone().unwrap_or_else(kernel_host_name)
    }

    /// Where other consoles link to this one, listening on `addr`.
    pub fn console_url(&self, addr: std::net::SocketAddr) -> String {
        if let Some(url) = &self.config.advertise_url {
            return url.trim_end_matches('/').to_string();
        }
        let scheme = if self.config.tls.listener().is_some() {
            "https"
        } else {
            "http"
        };
        let host = if addr.ip().is_unspecified() {
            self.host_name()
        } else {
            addr.ip().to_string()
        };
        let host = if host.contains(':') { format!("[{host}]") } else { host };
        format!("{scheme}://{host}:{}", addr.port())
    }

    pub fn db_path(&self) -> PathBuf {
        self.root.join("roofline.db")
    }

    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        }
    }

    pub fn state_dir(&self) -> PathBuf {
        self.resolve(&self.config.state_dir)
    }

    pub fn models_root(&self) -> PathBuf {
        self.resolve(&self.config.models_root)
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// The installation a profile names, or an error naming both.
    pub fn engine(&self, name: &str) -> Option<&EngineInstall> {
        self.config.engines.get(name)
    }

    /// The argv prefix for an installation: its command, or this binary's `sim <kind>`.
    /// The launch policy for profiles of an installation: the host's additions and the
    /// models root every path must lie in.
    /// `help` is what the console knows of the installation's flags (`control::flags`).
    pub fn launch_policy(
        &self,
        install: &EngineInstall,
        help: app::domain::launch::Help,
    ) -> app::domain::launch::Policy {
        app::domain::launch::Policy {
            allow_env: self.config.launch.allow_env.clone(),
            allow_flags: install.allow_flags.clone(),
            models_root: Some(self.models_root().to_string_lossy().into_owned()),
            help,
            simulator: install.simulator,
            allow_endpoints: self.config.launch.allow_endpoints.clone(),
        }
    }

    pub fn command_for(&self, install: &EngineInstall) -> anyhow::Result<Vec<String>> {
        if install.runtime.is_some() {
            // The command inside the image; the container CLI wraps it (`control::container`).
            return Ok(install.image_entrypoint());
        }
        if install.simulator {
            let exe = std::env::current_exe().context("locating the roofline binary for the simulator")?;
            // After an upgrade in place Linux reports the running image as "PATH (deleted)";
            // the new binary at PATH is the one to launch.
            let exe = exe.to_string_lossy().trim_end_matches(" (deleted)").to_string();
            Ok(vec![exe, "sim".into(), install.simulator_spec()])
        } else {
            Ok(install.command.clone())
        }
    }
}

/// Why a path a profile (or a request) names is refused: each names the path.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PathError {
    #[error("{0} is not an absolute path")]
    Relative(String),
    #[error("{0} contains `..`")]
    ParentDir(String),
    /// Outside the root as resolved: a symlink inside the root may point out of it.
    #[error("{path} is outside the models root {root}")]
    Outside { path: String, root: String },
}

/// Checks that `path` lies under `root` without `..` tricks or symlinks leading out.
pub fn confined(root: &Path, path: &Path) -> Result<PathBuf, PathError> {
    let shown = || path.display().to_string();
    if !path.is_absolute() {
        return Err(PathError::Relative(shown()));
    }
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(PathError::ParentDir(shown()));
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let resolved = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(PathError::Outside {
            path: shown(),
            root: root.display().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key path of a TOML value: tables by name, the members of `engines` as
    /// `engines.*`, arrays of tables as `name[]`.
    fn key_paths(v: &toml::Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let k = if at == "engines" { "*" } else { k.as_str() };
                    let path = if at.is_empty() {
                        k.to_string()
                    } else {
                        format!("{at}.{k}")
                    };
                    out.insert(path.clone());
                    key_paths(v, &path, out);
                }
            }
            toml::Value::Array(items) if items.iter().all(|i| i.is_table()) && !items.is_empty() => {
                for i in items {
                    key_paths(i, &format!("{at}[]"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_packaged_example_parses_and_shows_every_key() {
        let text = include_str!("../../packaging/roofline.toml.example");
        HostConfig::parse(text).expect("the example is a valid configuration");
        // Keys shown commented out (off unless set: `# key = value`, `# [table]`) count as
        // shown, and must be valid once uncommented.
        let on: String = text
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest)
                    if (rest.starts_with('[')
                        && rest.ends_with(']')
                        && rest[1..rest.len() - 1]
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'.'))
                        || rest.split_once(" = ").is_some_and(|(k, _)| {
                            !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                        }) =>
                {
                    rest
                }
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        HostConfig::parse(&on).expect("the example with every commented key set is valid");
        let example: toml::Value = toml::from_str(&on).unwrap();
        // A configuration with every optional part present.
        let mut full = HostConfig::default();
        full.engines.insert(
            "sim".into(),
            EngineInstall {
                kind: EngineKind::Vllm,
                command: vec!["vllm".into()],
                simulator: true,
                simulator_version: Some("0.34.0+synthetic".into()),
                allow_flags: vec!["--trust-remote-code".into()],
                runtime: Some(ContainerRuntime::Podman),
                image: Some(format!("localhost/sim@sha256:{}", "0".repeat(64))),
                gpus: Some("all".into()),
                network: Some(ContainerNetwork::Host),
                entrypoint: vec!["vllm".into()],
                run_args: vec!["--shm-size".into(), "16g".into()],
            },
        );
        full.autostart = vec!["p".into()];
        full.fleet = vec![FleetMember {
            name: "b".into(),
            console: Some("http://b:3000".into()),
            engine: Some("http://c:8000".into()),
            kind: Some(EngineKind::Vllm),
        }];
        full.auth = AuthConfig {
            secure_cookies: Some(true),
            alertmanager_token: Some("t".into()),
            prometheus_sd_token: Some("p".into()),
            fleet_token: Some("f".into()),
            trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
            allowed_hosts: vec!["gpu-a.internal".into()],
        };
        full.launch.allow_env = vec!["X".into()];
        full.journal.hmac_key_file = Some("/k".into());
        full.tls = TlsConfig {
            cert: Some("/c".into()),
            key: Some("/k".into()),
            ca_file: Some("/ca".into()),
        };
        full.database_url = Some("postgres://db/r".into());
        full.database_password_file = Some("/p".into());
        full.host_name = Some("gpu-a".into());
        full.advertise_url = Some("http://gpu-a:3000".into());
        full.prometheus.url = Some("http://prom:9090".into());
        let (mut want, mut have) = (Default::default(), Default::default());
        key_paths(&toml::Value::try_from(&full).unwrap(), "", &mut want);
        key_paths(&example, "", &mut have);
        let missing: Vec<_> = want.difference(&have).collect();
        assert!(
            missing.is_empty(),
            "packaging/roofline.toml.example does not show {missing:?}"
        );
    }

    #[test]
    fn parses_engines_and_rejects_unknown_keys() {
        let cfg = HostConfig::parse("[engines.vllm-0-33]\nkind = \"vllm\"\ncommand = [\"vllm\"]\n[engines.sim]\nkind = \"sglang\"\nsimulator = true\n").unwrap();
        assert_eq!(cfg.engines["vllm-0-33"].command, vec!["vllm"]);
        assert!(cfg.engines["sim"].simulator);
        assert!(HostConfig::parse("lisen = \"x\"")
            .unwrap_err()
            .to_string()
            .contains("lisen"));
        assert!(HostConfig::parse("[engines.x]\nkind = \"vllm\"\n")
            .unwrap_err()
            .to_string()
            .contains("command"));
        assert!(HostConfig::parse("[engines.x]\nkind = \"tgi\"\nsimulator = true\n").is_err());
        let next = HostConfig::parse(
            "[engines.n]\nkind = \"vllm\"\nsimulator = true\nsimulator_version = \"0.34.0+synthetic\"\n",
        )
        .unwrap();
        assert_eq!(next.engines["n"].simulator_version.as_deref(), Some("0.34.0+synthetic"));
        let e = HostConfig::parse("[engines.n]\nkind = \"vllm\"\nsimulator = true\nsimulator_version = \"9.9\"\n")
            .unwrap_err();
        assert!(
            e.to_string().contains("[engines.n] simulator_version") && e.to_string().contains("0.33.0"),
            "{e}"
        );
        assert!(HostConfig::parse(
            "[engines.n]\nkind = \"vllm\"\ncommand = [\"vllm\"]\nsimulator_version = \"0.33.0\"\n"
        )
        .is_err());
    }

    #[test]
    fn fleet_members_and_scrape_interval_are_checked() {
        let cfg = HostConfig::parse("scrape_interval_s = 1\n[[fleet]]\nname = \"gpu-b\"\nconsole = \"http://gpu-b:3000\"\n[[fleet]]\nname = \"old\"\nengine = \"http://10.0.0.6:8000\"\nkind = \"sglang\"\n").unwrap();
        assert_eq!(cfg.fleet.len(), 2);
        assert_eq!(cfg.fleet[1].kind, Some(EngineKind::Sglang));
        assert_eq!(HostConfig::parse("").unwrap().scrape_interval_s, 5);
        let err = |t: &str| HostConfig::parse(t).unwrap_err().to_string();
        assert!(err("scrape_interval_s = 0").contains("scrape_interval_s = 0"));
        assert!(err("[[fleet]]\nname = \"b\"\n").contains("exactly one of"));
        assert!(err("[[fleet]]\nname = \"b\"\nengine = \"gpu:8000\"\n").contains("`gpu:8000` is not an http"));
        assert!(err("[[fleet]]\nname = \"B!\"\nengine = \"http://gpu:8000\"\n").contains("#1 (B!)"));
        assert!(err(
            "[[fleet]]\nname = \"b\"\nengine = \"http://a:1\"\n[[fleet]]\nname = \"b\"\nengine = \"http://c:1\"\n"
        )
        .contains("used twice"));
    }

    #[test]
    fn confinement() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("m");
        std::fs::create_dir(&inside).unwrap();
        assert!(confined(dir.path(), &inside).is_ok());
        assert!(confined(dir.path(), &dir.path().join("m/../../etc")).is_err());
        assert!(confined(dir.path(), Path::new("/etc")).is_err());
        assert!(confined(dir.path(), Path::new("rel")).is_err());
    }

    #[test]
    fn placeholder_and_short_tokens_are_refused_at_start() {
        let example = include_str!("../../packaging/roofline.toml.example");
        let c = HostConfig::parse(example).unwrap();
        let e = c.auth.check_secrets().unwrap_err().to_string();
        assert!(e.contains("alertmanager_token") && e.contains("placeholder"), "{e}");
        let short = HostConfig::parse("[auth]\nprometheus_sd_token = \"sd-token\"\n").unwrap();
        assert!(short
            .auth
            .check_secrets()
            .unwrap_err()
            .to_string()
            .contains("prometheus_sd_token"));
        let good =
            HostConfig::parse("[auth]\nalertmanager_token = \"6f1c0d2b9a8e7f6d5c4b3a29180716f5e4d3c2b1\"\n").unwrap();
        assert!(good.auth.check_secrets().is_ok());
    }

    #[test]
    fn debug_output_hides_the_tokens() {
        let c = HostConfig::parse("[auth]\nalertmanager_token = \"s3cret-token\"\nfleet_token = \"fl33t-token\"\n")
            .unwrap();
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("s3cret-token") && !shown.contains("fl33t-token"),
            "{shown}"
        );
        assert!(shown.contains("<hidden>"), "{shown}");
    }
}
