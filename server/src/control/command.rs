//! Runs one command of an installation or of the container CLI: argv (never a shell), a time
//! limit, a cap on what it prints, the child killed when either is exceeded. Shared by the flag
//! checks (help, version, environment report) and the container CLI calls, so neither imports
//! the other for it.

use std::time::Duration;

/// The most an installation's help, version or environment report may print (vLLM's
/// `--help=all` is about 200 KB): a broken or hostile installation cannot fill our memory.
const MAX_OUTPUT: u64 = 4 << 20;

/// What the installation is asked to see: help and version are read on a CPU target (no GPU
/// needed, nothing initialised); the environment report describes the host as it is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    Cpu,
    Host,
    /// The container CLI itself (inspect, stop, …): nothing added to its environment.
    Cli,
}

/// Why a command gave no output to use. Its text follows the step that ran it ("`podman
/// inspect`: …", "vllm --help: …"), so each says only what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// It could not be started (missing, not executable) or its pipes failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("printed more than {} MiB", .0 >> 20)]
    TooMuchOutput(u64),
    #[error("timed out after {0} s")]
    TimedOut(u64),
    /// It exited unsuccessfully; `last` is the last line of its standard error.
    #[error("{status} ({last})")]
    Failed {
        status: std::process::ExitStatus,
        last: String,
    },
}

/// How long one command may run before it is killed.
const TIME_LIMIT_S: u64 = 180;

/// The last `keep` bytes of a stream read to its end (a child's stderr: only its end explains).
async fn read_tail(mut r: impl tokio::io::AsyncRead + Unpin, keep: usize) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut tail = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > keep {
            tail.drain(..tail.len() - keep);
        }
    }
    tail
}

/// Runs an installation's command (argv, no shell) with a time limit and a cap on what it
/// prints; the child is killed when either is exceeded.
pub(super) async fn run(argv: &[String], target: Target) -> Result<String, CommandError> {
    use tokio::io::AsyncReadExt;
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    if target == Target::Cpu {
        cmd.env(
            "VLLM_TARGET_DEVICE",
            std::env::var("VLLM_TARGET_DEVICE").unwrap_or_else(|_| "cpu".into()),
        );
    }
    if target != Target::Cli {
        cmd.envs(app::domain::profile::AIR_GAP_ENV.iter().copied());
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let work = async {
        let mut child = cmd.spawn()?;
        let piped = |name| std::io::Error::other(format!("no standard {name}"));
        let stdout = child.stdout.take().ok_or_else(|| piped("output"))?;
        let stderr = child.stderr.take().ok_or_else(|| piped("error"))?;
        // stderr on its own task: it ends when the child does (killed on drop if stdout
        // overflows), so a child blocked on a full stdout pipe is never waited for.
        let err_tail = tokio::spawn(read_tail(stderr, 64 << 10));
        let mut out = Vec::new();
        stdout.take(MAX_OUTPUT + 1).read_to_end(&mut out).await?;
        if out.len() as u64 > MAX_OUTPUT {
            return Err(CommandError::TooMuchOutput(MAX_OUTPUT));
        }
        let status = child.wait().await?;
        // A grandchild may hold stderr open after the child exits: its tail is not worth waiting for.
        let err = tokio::time::timeout(Duration::from_secs(2), err_tail)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        Ok::<_, CommandError>((status, out, err))
    };
    let (status, out, err) = tokio::time::timeout(Duration::from_secs(TIME_LIMIT_S), work)
        .await
        .map_err(|_| CommandError::TimedOut(TIME_LIMIT_S))??;
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        return Err(CommandError::Failed {
            status,
            last: err.lines().last().unwrap_or("").chars().take(500).collect(),
        });
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
