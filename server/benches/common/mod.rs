//! What every bench reads from its command line.
#![allow(
    dead_code,
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "helpers shared by files that each use some of them; setup failures panic, naming them"
)]

/// The value after `name` on the command line.
pub fn arg_text(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The value after `name`, parsed, else `default`.
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    arg_text(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Resident set size of a process, in MiB.
pub fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// The `p` quantile of sorted figures (NaN when there are none).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((p * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1)]
}

/// A free port on loopback (the OS picks it; a race with another process is possible but the
/// console then fails to bind loudly).
/// The `[auth] fleet_token` of a bench's console: what other consoles present to read its
/// `/api/engines`, as the benches do.
pub const FLEET_TOKEN: &str = "bench-fleet-token-8d3b6f1a9c2e4d7b0f5a";

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `roofline user add NAME --role ROLE` in `data`, the password on standard input (never argv).
pub fn add_user(data: &std::path::Path, name: &str, role: &str, password: &str) {
    use std::io::Write;
    let mut add = std::process::Command::new(env!("CARGO_BIN_EXE_roofline"))
        .arg("--data")
        .arg(data)
        .args(["user", "add", name, "--role", role])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("roofline user add");
    writeln!(add.stdin.take().unwrap(), "{password}").unwrap();
    assert!(add.wait().unwrap().success(), "roofline user add {name} failed");
}

/// A console on `data` at `127.0.0.1:port`, its output discarded.
pub fn start_console(data: &std::path::Path, port: u16) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_roofline"))
        .arg("--data")
        .arg(data)
        .args(["console", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting the console")
}

/// Signs in through the login server function; returns the session cookie (`name=value`).
pub async fn sign_in(http: &reqwest::Client, base: &str, name: &str, password: &str) -> String {
    let r = http
        .post(format!("{base}/api/fn/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("name={name}&password={}", password.replace(' ', "+")))
        .send()
        .await
        .expect("signing in");
    assert!(
        r.status().is_success(),
        "sign-in of {name} refused: HTTP {}",
        r.status()
    );
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .find(|c| c.starts_with("roofline_session="))
        .expect("a session cookie")
        .to_string()
}

/// Samples a console's RSS (every 10 ms) and another client's latency (a request every
/// 20 ms, made by `read`) until finished: what every flood bench reports beside its flood.
pub struct Watch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    peak: tokio::task::JoinHandle<f64>,
    lat: tokio::task::JoinHandle<Vec<f64>>,
}

impl Watch {
    pub fn start(pid: u32, read: impl Fn() -> reqwest::RequestBuilder + Send + 'static) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let peak = {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut peak: f64 = 0.0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    peak = peak.max(rss_mib(pid));
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
                peak
            })
        };
        let lat = {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut lat = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let t = std::time::Instant::now();
                    if read().send().await.is_ok_and(|r| r.status().is_success()) {
                        lat.push(t.elapsed().as_secs_f64() * 1000.0);
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                lat
            })
        };
        Self { stop, peak, lat }
    }

    /// The peak RSS (MiB) and the latencies (ms, sorted).
    pub async fn finish(self) -> (f64, Vec<f64>) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let peak = self.peak.await.unwrap();
        let mut lat = self.lat.await.unwrap();
        lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (peak, lat)
    }
}

/// p50 / p99 / max of sorted latencies, for a table cell.
pub fn lat_cells(lat: &[f64]) -> String {
    format!(
        "{:.1} / {:.1} / {:.1}",
        percentile(lat, 0.5),
        percentile(lat, 0.99),
        lat.last().copied().unwrap_or(f64::NAN)
    )
}

/// Waits (a minute at most) until the console at `base` answers `/healthz`.
pub async fn wait_ready(http: &reqwest::Client, base: &str) {
    let t0 = std::time::Instant::now();
    while http.get(format!("{base}/healthz")).send().await.is_err() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "the console did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
