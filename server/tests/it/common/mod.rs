//! Test harness: a temporary data directory with simulator installations, profiles imported
//! through the real CLI, and helpers to drive real processes over real HTTP.
#![allow(
    dead_code,
    clippy::expect_used,
    reason = "helpers shared by files that each use some of them; setup failures panic, naming them"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_roofline");

pub struct Env {
    pub dir: tempfile::TempDir,
}

/// A free loopback port (bound and released), never one this test process handed out before:
/// the kernel may give the same released port twice in a row, and two profiles of one test
/// would then collide.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

const HOST: &str = "models_root = \"models\"\nstate_dir = \"state\"\nserve_timeout_s = 60\nstop_grace_s = 5\n\n[engines.sim-vllm]\nkind = \"vllm\"\nsimulator = true\n\n[engines.sim-sglang]\nkind = \"sglang\"\nsimulator = true\n";
const CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "vocab_size": 128256}"#;

impl Env {
    pub fn new() -> Self {
        Self::with_extra_config("")
    }

    pub fn with_extra_config(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("roofline.toml"),
            format!("{extra}{HOST}\n[auth]\nfleet_token = \"{FLEET_TOKEN}\"\n"),
        )
        .unwrap();
        let model = dir.path().join("models/llama");
        std::fs::create_dir_all(&model).unwrap();
        std::fs::write(model.join("config.json"), CONFIG).unwrap();
        std::fs::create_dir_all(dir.path().join("models/empty")).unwrap();
        Self { dir }
    }

    pub fn data(&self) -> &Path {
        self.dir.path()
    }

    pub fn model(&self) -> PathBuf {
        self.dir.path().join("models/llama")
    }

    /// Runs `roofline --data DIR ARGS…`.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("--data")
            .arg(self.data())
            .args(args)
            .env_remove("INFER_PROFILE")
            .env_remove("INFER_URL")
            .env("LANG", "C")
            .output()
            .unwrap()
    }

    /// Imports a profile from `KEY=VALUE` text through the CLI.
    pub fn profile(&self, name: &str, text: &str) {
        let path = self.data().join(format!("{name}.env"));
        std::fs::write(&path, text).unwrap();
        let out = self.run(&["profile", "import", path.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "import {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Stores a profile behind the import's back, as one stored before the engine was
    /// upgraded (or by an older console) is: the launch policy has not seen it.
    pub fn store_unchecked(&self, name: &str, text: &str) {
        let data = self.data().to_path_buf();
        let (p, _) = app::domain::profile::Profile::from_env(name, text).unwrap();
        std::thread::spawn(move || {
            tokio::runtime::Runtime::new().unwrap().block_on(async {
                let data = server::config::DataDir::open(&data).unwrap();
                let store = server::profile_store::ProfileStore::new(server::db::open(&data.db_path()).await.unwrap());
                store.upsert(&p).await.unwrap();
            })
        })
        .join()
        .unwrap();
    }

    /// A simulated vLLM profile on `port` with a fast startup and extra lines.
    pub fn vllm_profile(&self, name: &str, port: u16, extra: &str) {
        self.profile(
            name,
            &format!("ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nTOOL_CALL_PARSER=hermes\nMAX_RUNNING_REQUESTS=8\nPORT={port}\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n{extra}", self.model().display()),
        );
    }

    pub fn sglang_profile(&self, name: &str, port: u16, extra: &str) {
        self.profile(
            name,
            &format!("ENGINE=sim-sglang\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nTOOL_CALL_PARSER=qwen25\nMAX_RUNNING_REQUESTS=8\nPORT={port}\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n{extra}", self.model().display()),
        );
    }

    pub fn status(&self, profile: &str) -> serde_json::Value {
        let out = self.run(&["status", "--json"]);
        let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        all.as_array()
            .unwrap()
            .iter()
            .find(|e| e["profile"] == profile)
            .cloned()
            .unwrap()
    }

    pub fn serve_ok(&self, profile: &str) -> serde_json::Value {
        let out = self.run(&["serve", "--profile", profile, "--json"]);
        assert!(
            out.status.success(),
            "serve {profile}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Env {
    /// Engines are separate process groups that outlive us by design: stop them all.
    fn drop(&mut self) {
        let out = self.run(&["status", "--json"]);
        if let Ok(serde_json::Value::Array(rows)) = serde_json::from_slice::<serde_json::Value>(&out.stdout) {
            for r in rows {
                if let Some(p) = r["profile"].as_str() {
                    let _ = self.run(&["stop", "--profile", p]);
                }
            }
        }
    }
}

pub fn str(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn pid_alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// Polls `f` until it returns `Some` or the timeout passes.
pub async fn eventually<T>(timeout: Duration, mut f: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if let Some(v) = f().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

pub fn client() -> reqwest::Client {
    server::tls::install_default_provider();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// Sends a request and returns its body as text (panics on a transport error: a test failure).
pub async fn text(request: reqwest::RequestBuilder) -> String {
    request.send().await.unwrap().text().await.unwrap()
}

/// Sends a request and reads its JSON answer.
pub async fn json(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// One metric value from an engine's `/metrics` (first series of that name).
pub async fn metric(port: u16, name: &str) -> f64 {
    let body = text(client().get(format!("http://127.0.0.1:{port}/metrics"))).await;
    let parsed = app::domain::prometheus::parse(&body);
    parsed.samples.iter().filter(|s| s.name == name).map(|s| s.value).sum()
}

/// One streaming completion, read to the end; errors are ignored (load, not a check).
pub async fn stream_completion(port: u16, prompt: String, max_tokens: u32) {
    let body = serde_json::json!({"model": "m", "prompt": prompt, "max_tokens": max_tokens, "stream": true});
    if let Ok(r) = client()
        .post(format!("http://127.0.0.1:{port}/v1/completions"))
        .json(&body)
        .send()
        .await
    {
        let _ = r.bytes().await;
    }
}

/// Sends `n` streaming completions and returns their join handles (they finish on their own).
pub fn load(port: u16, n: usize, prompt_chars: usize, max_tokens: u32) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n)
        .map(|i| {
            tokio::spawn(stream_completion(
                port,
                format!("{i} {}", "x".repeat(prompt_chars)),
                max_tokens,
            ))
        })
        .collect()
}

/// Sends `n` streaming completions and waits for all of them.
pub async fn load_and_wait(port: u16, n: usize, prompt_chars: usize, max_tokens: u32) {
    for h in load(port, n, prompt_chars, max_tokens) {
        h.await.unwrap();
    }
}

/// Waits until a metric exceeds `threshold`; false if it never does within `timeout`.
pub async fn metric_exceeds(port: u16, name: &str, threshold: f64, timeout: Duration) -> bool {
    eventually(timeout, async || (metric(port, name).await > threshold).then_some(()))
        .await
        .is_some()
}

impl Env {
    /// A fresh environment with one simulated vLLM profile already serving; returns its port.
    pub fn serving_vllm(name: &str, extra: &str) -> (Env, u16) {
        let env = Env::new();
        let port = free_port();
        env.vllm_profile(name, port, extra);
        env.serve_ok(name);
        (env, port)
    }
}

pub async fn set_fault(port: u16, fault: &str) {
    let r = client()
        .post(format!("http://127.0.0.1:{port}/sim/faults"))
        .json(&serde_json::json!({"enable": [fault]}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
}

/// A console process on `port`, killed (like `kill -9`) when dropped.
pub struct Console(pub std::process::Child);

impl Console {
    pub fn start(env: &Env, port: u16) -> Self {
        Self::start_with_env(env, port, &[])
    }

    /// A console with extra environment (a GPU recording, say).
    pub fn start_with_env(env: &Env, port: u16, vars: &[(&str, &std::path::Path)]) -> Self {
        Self::start_with(env, port, vars, std::process::Stdio::null())
    }

    /// A console whose standard output goes to `stdout` (piped: the test reads the log).
    pub fn start_with(env: &Env, port: u16, vars: &[(&str, &std::path::Path)], stdout: std::process::Stdio) -> Self {
        Console(
            Command::new(BIN)
                .envs(vars.iter().map(|(k, v)| (*k, *v)))
                .args([
                    "--data",
                    env.data().to_str().unwrap(),
                    "console",
                    "--addr",
                    &format!("127.0.0.1:{port}"),
                ])
                .stdout(stdout)
                .stderr(console_log(port))
                .spawn()
                .unwrap(),
        )
    }
}

/// Tests that sign in through a router in this process (argon2 in this process) hold it:
/// `signin_flood` counts the process's hashes, which another such test would add to.
pub static IN_PROCESS_SIGN_INS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Where a console's own log goes: nowhere, or `$ROOFLINE_TEST_CONSOLE_LOGS/console-PORT.log`
/// when a test is being looked into.
fn console_log(port: u16) -> std::process::Stdio {
    std::env::var_os("ROOFLINE_TEST_CONSOLE_LOGS")
        .and_then(|dir| std::fs::File::create(std::path::Path::new(&dir).join(format!("console-{port}.log"))).ok())
        .map(std::process::Stdio::from)
        .unwrap_or_else(std::process::Stdio::null)
}

/// The fleet token every test console shares (`[auth] fleet_token`): the consoles of a test
/// read each other's engines with it, and so do the tests.
pub const FLEET_TOKEN: &str = "test-fleet-token-5f2a9c4e7b1d3f6a8c0e2b4d";

/// The console's fleet as JSON (`GET /api/engines`, with the fleet token), `None` while it
/// does not answer.
pub async fn console_engines(console_port: u16) -> Option<serde_json::Value> {
    client()
        .get(format!("http://127.0.0.1:{console_port}/api/engines"))
        .bearer_auth(FLEET_TOKEN)
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The password every test account gets.
pub const PASSWORD: &str = "correct horse battery staple";

impl Env {
    /// Adds a console account through `roofline user add` (password on standard input).
    pub fn add_user(&self, name: &str, role: &str) {
        use std::io::Write;
        let mut child = Command::new(BIN)
            .arg("--data")
            .arg(self.data())
            .args(["user", "add", name, "--role", role])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        writeln!(child.stdin.take().unwrap(), "{PASSWORD}").unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "user add {name}: {:?}", str(&out));
    }

    /// Appends to the host configuration (tables after the engines).
    pub fn append_config(&self, text: &str) {
        let path = self.data().join("roofline.toml");
        let mut cfg = std::fs::read_to_string(&path).unwrap();
        // The test consoles' `[auth]` table exists (the fleet token): keys for it join it, as
        // a second `[auth]` header is a TOML error.
        match text.split_once("[auth]\n") {
            Some((before, auth)) if cfg.contains("\n[auth]\n") => {
                let (keys, rest) = auth.find("\n[").map_or((auth, ""), |i| auth.split_at(i + 1));
                cfg = cfg.replacen("\n[auth]\n", &format!("\n[auth]\n{keys}\n"), 1);
                cfg.push_str(before);
                cfg.push_str(rest);
            }
            _ => cfg.push_str(text),
        }
        std::fs::write(path, cfg).unwrap();
    }
}

pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A signed-in browser, as far as HTTP goes: the session cookie and the CSRF header.
#[derive(Clone)]
pub struct Session {
    pub base: String,
    pub cookie: String,
    pub csrf: String,
    pub c: reqwest::Client,
}

impl Session {
    /// Signs in through `/api/fn/login` (with `PASSWORD`); panics when refused.
    pub async fn login(base: &str, name: &str) -> Session {
        Self::try_login(base, name, PASSWORD).await.unwrap()
    }

    pub async fn try_login(base: &str, name: &str, password: &str) -> Result<Session, (u16, String)> {
        let c = client();
        let r = c
            .post(format!("{base}/api/fn/login"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("name={}&password={}", urlencode(name), urlencode(password)))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let cookies: Vec<String> = r
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or_default().to_string())
            .collect();
        let body = r.text().await.unwrap();
        if status != 200 {
            return Err((status, body));
        }
        let get = |n: &str| {
            cookies
                .iter()
                .find_map(|c| c.strip_prefix(&format!("{n}=")).map(str::to_string))
                .unwrap_or_default()
        };
        Ok(Session {
            base: base.to_string(),
            cookie: format!("roofline_session={}", get("roofline_session")),
            csrf: get("roofline_csrf"),
            c,
        })
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.c
            .get(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
    }

    /// A server function call with a form body, as the browser sends it.
    pub fn post_fn(&self, endpoint: &str, form: &str) -> reqwest::RequestBuilder {
        self.c
            .post(format!("{}/api/fn/{endpoint}", self.base))
            .header("cookie", &self.cookie)
            .header("x-csrf-token", &self.csrf)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.to_string())
    }

    /// A server function call with a JSON body (functions declared `input = Json`).
    pub fn post_json(&self, endpoint: &str, body: &serde_json::Value) -> reqwest::RequestBuilder {
        self.c
            .post(format!("{}/api/fn/{endpoint}", self.base))
            .header("cookie", &self.cookie)
            .header("x-csrf-token", &self.csrf)
            .json(body)
    }

    /// Calls and returns (status, body).
    pub async fn call(&self, endpoint: &str, form: &str) -> (u16, String) {
        let r = self.post_fn(endpoint, form).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }
}

/// A profile change as `get_change` returns it.
/// A change's extra flags as its page shows them: `(field, class)` for each, `field` being
/// `shown` (as written) or `flag` (the flag it resolved to).
pub fn extra_flags(c: &serde_json::Value, field: &str) -> Vec<(String, String)> {
    c["extra_flags"]
        .as_array()
        .unwrap_or_else(|| panic!("no extra flags in {c}"))
        .iter()
        .map(|f| {
            (
                f[field].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub async fn change(s: &Session, id: i64) -> serde_json::Value {
    let r = s.post_fn("get_change", &format!("id={id}")).send().await.unwrap();
    r.json().await.unwrap()
}

/// Waits until change `id`'s gate has finished (three minutes at most).
pub async fn settle(s: &Session, id: i64) -> serde_json::Value {
    eventually(Duration::from_secs(180), async || {
        let c = change(s, id).await;
        (c["summary"]["state"] != "gating").then_some(c)
    })
    .await
    .expect("the gate finishes")
}

/// Approves (or sends back) change `id` as it is now: with the content hash the page shows.
pub async fn review(s: &Session, id: i64, approve: bool, comment: &str) -> (u16, String) {
    let hash = change(s, id).await["content_hash"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    s.call(
        "review_change",
        &format!(
            "id={id}&approve={approve}&comment={}&content_hash={hash}",
            urlencode(comment)
        ),
    )
    .await
}

/// A console on `env` with an operator (alice) and an approver (bob) signed in.
pub async fn review_console(env: &Env) -> (Console, Session, Session) {
    for (n, r) in [("alice", "operator"), ("bob", "approver")] {
        env.add_user(n, r);
    }
    let console_port = free_port();
    let console = Console::start(env, console_port);
    eventually(Duration::from_secs(30), async || console_engines(console_port).await).await;
    let base = format!("http://127.0.0.1:{console_port}");
    let alice = Session::login(&base, "alice").await;
    let bob = Session::login(&base, "bob").await;
    (console, alice, bob)
}

/// A fresh PostgreSQL database on the test run's server (`ROOFLINE_TEST_PG`, started by
/// `scripts/postgres.sh`); `None` (the test then skips) when there is none, a failure when
/// `ROOFLINE_REQUIRE_PG=1`.
pub async fn pg_database() -> Option<String> {
    use sqlx::{Connection, Executor};
    let Ok(admin) = std::env::var("ROOFLINE_TEST_PG") else {
        assert!(
            std::env::var("ROOFLINE_REQUIRE_PG").as_deref() != Ok("1"),
            "ROOFLINE_REQUIRE_PG=1 but ROOFLINE_TEST_PG is not set"
        );
        eprintln!("no ROOFLINE_TEST_PG: skipped");
        return None;
    };
    let name = format!("it_{}", std::process::id()) + &format!("_{}", free_port());
    let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    conn.execute(format!("create database {name}").as_str()).await.unwrap();
    conn.close().await.ok();
    let (base, _) = admin.rsplit_once('/').unwrap();
    Some(format!("{base}/{name}"))
}
