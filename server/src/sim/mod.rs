//! The engine simulator: `roofline sim vllm serve MODEL …` / `roofline sim sglang
//! --model-path M …`, a test double of vLLM and SGLang launched exactly like them.
//!
//! It accepts their flags, prints their startup log lines, binds and serves at the moments
//! they do, answers their endpoints (health, models, version, completions with streaming and
//! tool calls, metrics with their exact names) and plays the runbooks' failures. Knobs that
//! no real engine has come from `--sim-*` flags or `ROOFLINE_SIM_*` variables, so profiles
//! stay valid for the real engine.

pub mod args;
pub mod faults;
pub mod metrics;
mod openai;
pub mod release;
pub mod responder;
pub mod sched;
pub mod startup;

use app::domain::engine::EngineKind;
use args::{Invocation, SimArgs};
use faults::Fault;
use metrics::{Gauges, Metrics, Template};
use sched::Sched;
use startup::{Logger, ModelFacts};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Shared state of a running simulator.
pub struct Sim {
    pub args: SimArgs,
    pub facts: ModelFacts,
    pub max_model_len: u64,
    pub sched: Mutex<Sched>,
    pub template: Template,
    pub started_unix: f64,
    pub log: Logger,
    /// Set once the engine is dead; `/health` answers 503 until the process exits.
    pub dead: std::sync::atomic::AtomicBool,
    /// Instant mode (`ROOFLINE_SIM_INSTANT=1`): fixed latencies instead of the load model.
    pub instant: Option<Instant>,
}

/// Fixed latencies of instant mode, from `ROOFLINE_SIM_TTFT_MS` and `ROOFLINE_SIM_ITL_MS`.
#[derive(Clone, Copy, Debug)]
pub struct Instant {
    pub ttft: Duration,
    pub itl: Duration,
}

impl Instant {
    fn from_env() -> Option<Self> {
        if std::env::var("ROOFLINE_SIM_INSTANT").ok().as_deref() != Some("1") {
            return None;
        }
        let ms = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
                .max(0.0)
        };
        Some(Self {
            ttft: Duration::from_secs_f64(ms("ROOFLINE_SIM_TTFT_MS") / 1000.0),
            itl: Duration::from_secs_f64(ms("ROOFLINE_SIM_ITL_MS") / 1000.0),
        })
    }
}

impl Sim {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Sched> {
        self.sched.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn has_fault(&self, f: Fault) -> bool {
        self.lock().faults.contains(&f)
    }

    fn gauges(&self) -> Gauges {
        let s = self.lock();
        let q = s.window_queries as f64;
        Gauges {
            running: s.running.len() as f64,
            waiting: s.waiting.len() as f64,
            kv_usage: s.kv_usage(),
            kv_used_tokens: s.kv_used() as f64,
            kv_capacity_tokens: s.capacity() as f64,
            gen_throughput: s.gen_throughput,
            cache_hit_rate: if q > 0.0 { s.window_hits as f64 / q } else { 0.0 },
            context_len: self.max_model_len as f64,
        }
    }

    pub fn render_metrics(&self) -> String {
        let g = self.gauges();
        let s = self.lock();
        let mut text = self
            .template
            .render(self.args.model_name(), self.started_unix, &s.metrics, &g);
        // A release that renamed a family serves it (HELP, TYPE and every series) renamed.
        for (from, to) in self.args.release.metric_renames() {
            text = text.replace(from, to);
        }
        text
    }
}

/// Entry point of `roofline sim <kind> …`; returns the process exit code.
/// `spec` is `vllm`, `sglang` or `vllm@VERSION` (a release the simulator carries).
pub fn main(spec: &str, argv: &[String]) -> i32 {
    let release = match release::Release::parse(spec) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let args = match args::parse(release, argv) {
        Ok(Invocation::Help(text)) => {
            print!("{text}");
            return 0;
        }
        Ok(Invocation::Version(v)) => {
            println!("{v}");
            return 0;
        }
        Ok(Invocation::EnvReport(text)) => {
            print!("{text}");
            return 0;
        }
        Ok(Invocation::Serve(a)) => *a,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start runtime: {e}");
            return 1;
        }
    };
    rt.block_on(run(args))
}

fn sleep_s(s: f64) -> tokio::time::Sleep {
    tokio::time::sleep(Duration::from_secs_f64(s.max(0.0)))
}

/// `roofline sim worker`: a tensor-parallel worker process, as vLLM's multiprocessing
/// executor and SGLang's scheduler start them: in the engine's process group, holding (a
/// share of) the GPU until it exits. With `ROOFLINE_SIM_WORKERS_IGNORE_SIGTERM=1` it ignores
/// SIGTERM, like a worker stuck in a CUDA call: only SIGKILL ends it.
pub fn worker_main(name: Option<&str>) -> i32 {
    if let Some(name) = name {
        set_process_name(name);
    }
    let ignore = std::env::var("ROOFLINE_SIM_WORKERS_IGNORE_SIGTERM").is_ok_and(|v| v == "1");
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(_) => return 1,
    };
    rt.block_on(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        loop {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                    if !ignore {
                        return 0;
                    }
                }
                None => std::future::pending::<()>().await,
            }
        }
    })
}

/// Names the process as the real engine's processes name themselves (vLLM's setproctitle:
/// `VLLM::EngineCore`, `VLLM::Worker_TP1`; Linux keeps the first 15 bytes as `comm`), so the
/// console and an operator's `ps` see the same tree as on a real host.
fn set_process_name(name: &str) {
    if let Ok(c) = std::ffi::CString::new(name.as_bytes().iter().take(15).copied().collect::<Vec<u8>>()) {
        let _ = nix::sys::prctl::set_name(&c);
    }
}

/// Starts one helper process of the engine (`roofline sim worker NAME` or `roofline sim
/// engine-core TP`), in our process group, its output discarded.
fn spawn_helper(args: &[String]) -> Option<std::process::Child> {
    let exe = std::env::current_exe().ok()?;
    std::process::Command::new(exe)
        .arg("sim")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
}

/// The engine's processes below the API server, shaped as the engine shapes them. vLLM V1:
/// the API server starts `EngineCore`, which starts one worker per TP rank when TP > 1 (a
/// TP-1 GPU engine runs the model inside EngineCore). SGLang: one scheduler per TP rank
/// beyond the first. Killing the API server leaves them running, as on a real host.
fn spawn_workers(kind: EngineKind, tp: u32) -> Vec<std::process::Child> {
    match kind {
        EngineKind::Vllm => spawn_helper(&["engine-core".into(), tp.to_string()])
            .into_iter()
            .collect(),
        EngineKind::Sglang => (1..tp.min(64))
            .filter_map(|rank| spawn_helper(&["worker".into(), format!("sglang::scheduler_TP{rank}")]))
            .collect(),
    }
}

/// `roofline sim engine-core TP`: vLLM's EngineCore process, parent of the TP workers. It
/// ends on SIGTERM (the console signals the whole group) and outlives a killed API server.
pub fn engine_core_main(args: &[String]) -> i32 {
    set_process_name("VLLM::EngineCore");
    let tp: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1).clamp(1, 64);
    let _workers: Vec<std::process::Child> = if tp > 1 {
        (0..tp)
            .filter_map(|rank| spawn_helper(&["worker".into(), format!("VLLM::Worker_TP{rank}")]))
            .collect()
    } else {
        Vec::new()
    };
    worker_main(None)
}

async fn run(args: SimArgs) -> i32 {
    // Kept for the life of the engine; never waited on (stop is engine control's job).
    let mut helpers = spawn_workers(args.kind, args.tp);
    let code = engine(args).await;
    if code != 0 {
        // A crash or a failed start is EngineCore's death in the real engine: the API server
        // exits after it, and nothing of the tree is left. (A SIGTERM shutdown leaves them to
        // the signal the whole group received, as vLLM's process manager does.)
        for h in &mut helpers {
            let _ = h.kill();
            let _ = h.wait();
        }
    }
    code
}

/// The simulated engine, start to end, phase by phase as the engine logs them: the
/// arguments and the early bind, the model's facts and start faults, the weights, the KV
/// cache and graphs, the scheduler, the listener, the routes; then it serves until SIGTERM or
/// an injected crash.
async fn engine(args: SimArgs) -> i32 {
    let kind = args.kind;
    let log = Logger::new(kind);
    let delay = args.startup_delay_s;
    let gpu_gib: f64 = std::env::var("ROOFLINE_SIM_GPU_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(80.0);
    let bind_addr = format!(
        "{}:{}",
        if args.host.contains(':') {
            format!("[{}]", args.host)
        } else {
            args.host.clone()
        },
        args.port
    );
    let early_socket = match announce(&args, &log, &bind_addr) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let facts = match start_faults_or_model(&args, &log) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let budget = startup::budget(&args, &facts, gpu_gib);
    if let Err(code) = load_weights(&args, &log, &facts, &budget, gpu_gib).await {
        return code;
    }
    if let Err(code) = allocate_kv(&args, &log, &budget, gpu_gib).await {
        return code;
    }
    let crash_after_ready = args.faults.contains(&Fault::Crash);
    let sim = ready_sim(args, facts, &budget, log);
    sleep_s(delay * 0.2).await;
    let listener = match listen(&sim, early_socket, &bind_addr) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let app = openai::router(sim.clone());
    // uvicorn sets TCP_NODELAY; without it small SSE writes wait for delayed ACKs (~40 ms).
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    );
    announce_routes(&sim, &bind_addr);
    tokio::spawn(engine_loop(sim.clone()));
    if crash_after_ready {
        let s = sim.clone();
        tokio::spawn(async move {
            sleep_s(3.0).await;
            s.lock().crashed = Some("crash");
        });
    }
    let code = tokio::select! {
        res = server => { if res.is_err() { 1 } else { 0 } }
        code = until_down(sim.clone()) => code,
    };
    code
}

/// The arguments as the engine prints them first; vLLM binds its port before anything else,
/// so a busy port fails within seconds (SGLang binds last).
fn announce(args: &SimArgs, log: &Logger, bind_addr: &str) -> Result<Option<tokio::net::TcpSocket>, i32> {
    if args.kind == EngineKind::Vllm {
        log.vllm(
            "APIServer",
            "utils.py:326",
            &format!(
                "non-default args: {{'model': '{}', 'host': '{}', 'port': {}}}",
                args.model, args.host, args.port
            ),
        );
        match bind(bind_addr) {
            Ok(s) => Ok(Some(s)),
            Err(e) => {
                log.raw("Traceback (most recent call last):");
                log.raw("  File \"vllm/entrypoints/launchers/launcher.py\", line 530, in run_server");
                log.raw("    sock.bind((args.host, args.port))");
                log.raw(&format!("OSError: [Errno 98] Address already in use ({e})"));
                Err(1)
            }
        }
    } else {
        log.line("", "", "", &format!("server_args=ServerArgs(model_path='{}', served_model_name='{}', tp_size={}, host='{}', port={}, enable_metrics={})", args.model, args.model_name(), args.tp, args.host, args.port, if args.metrics_enabled { "True" } else { "False" }));
        Ok(None)
    }
}

/// Loading the weights: an out-of-memory load (or the fault) ends the start here.
async fn load_weights(
    args: &SimArgs,
    log: &Logger,
    facts: &ModelFacts,
    budget: &startup::Budget,
    gpu_gib: f64,
) -> Result<(), i32> {
    let (kind, delay, max_model_len) = (args.kind, args.startup_delay_s, budget.max_model_len);
    match kind {
        EngineKind::Vllm => {
            log.vllm("EngineCore_DP0", "core.py:93", &format!("Initializing a V1 LLM engine (v{}) with config: model='{}', served_model_name={}, max_seq_len={}, tensor_parallel_size={}, kv_cache_dtype={}", args.release.version, args.model, args.model_name(), max_model_len, args.tp, args.kv_cache_dtype));
            log.vllm(
                "Worker_TP0",
                "gpu_model_runner.py:3015",
                &format!("Starting to load model {}...", args.model),
            );
        }
        EngineKind::Sglang => log.sglang(&format!("Load weight begin. avail mem={:.2} GB", gpu_gib - 1.5)),
    }
    sleep_s(delay * 0.4).await;
    if budget.weights_gib + 1.0 > gpu_gib * args.mem_fraction || args.faults.contains(&Fault::OomLoad) {
        print_oom_load(log, kind, gpu_gib, budget.weights_gib);
        return Err(1);
    }
    match kind {
        EngineKind::Vllm => {
            log.raw("Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:01<00:00,  2.81it/s]");
            log.vllm(
                "Worker_TP0",
                "default_loader.py:384",
                &format!("Loading weights took {:.2} seconds", delay * 0.3),
            );
            log.vllm(
                "Worker_TP0",
                "gpu_model_runner.py:4879",
                &format!(
                    "Model loading took {:.2} GiB memory and {:.6} seconds",
                    budget.weights_gib,
                    delay * 0.4
                ),
            );
        }
        EngineKind::Sglang => log.sglang(&format!(
            "Load weight end. elapsed={:.2} s, type={}, dtype=torch.bfloat16, avail mem={:.2} GB, mem usage={:.2} GB.",
            delay * 0.4,
            facts.architecture,
            gpu_gib - budget.weights_gib - 1.5,
            budget.weights_gib
        )),
    }
    sleep_s(delay * 0.2).await;

    Ok(())
}

/// Profiling, the KV cache and the graphs: a pool too small for one request of the longest
/// context ends the start here; the graph stall fault hangs in its capture.
async fn allocate_kv(args: &SimArgs, log: &Logger, budget: &startup::Budget, gpu_gib: f64) -> Result<(), i32> {
    let (kind, delay, max_model_len) = (args.kind, args.startup_delay_s, budget.max_model_len);
    if budget.kv_tokens < max_model_len {
        print_kv_too_small(log, kind, budget, args.mem_fraction);
        return Err(1);
    }
    let concurrency = budget.kv_tokens as f64 / max_model_len as f64;
    match kind {
        EngineKind::Vllm => {
            log.vllm(
                "EngineCore_DP0",
                "gpu_worker.py:283",
                &format!(
                    "Memory profiling takes {:.2} seconds. Total non KV cache memory: {:.2}GiB; torch peak memory increase: {:.2}GiB; non-torch forward increase memory: {:.2}GiB; weights memory: {:.2}GiB.",
                    delay * 0.1,
                    budget.weights_gib + budget.activation_gib + budget.non_torch_gib + budget.graphs_gib,
                    budget.activation_gib,
                    budget.non_torch_gib,
                    budget.weights_gib
                ),
            );
            if budget.graphs_gib > 0.0 {
                log.vllm(
                    "EngineCore_DP0",
                    "gpu_worker.py:290",
                    &format!("Estimated CUDA graph memory: {:.2} GiB total", budget.graphs_gib),
                );
            }
            log.vllm(
                "EngineCore_DP0",
                "gpu_worker.py:298",
                &format!("Available KV cache memory: {:.2} GiB", budget.kv_gib),
            );
            log.vllm(
                "EngineCore_DP0",
                "kv_cache_utils.py:1087",
                &format!(
                    "GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {:.2}x",
                    startup::thousands(budget.kv_tokens),
                    startup::thousands(max_model_len),
                    concurrency
                ),
            );
            if args.faults.contains(&Fault::StallGraphs) {
                log.raw(
                    "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|          | 0/67 [00:00<?, ?it/s]",
                );
                let stall: f64 = std::env::var("ROOFLINE_SIM_STALL_S")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(600.0);
                sleep_s(stall).await;
            }
            log.raw("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|##########| 67/67 [00:01<00:00, 45.10it/s]");
        }
        EngineKind::Sglang => {
            let half = budget.kv_gib / 2.0;
            log.sglang(&format!(
                "KV Cache is allocated. dtype: torch.bfloat16, #tokens: {}, K size: {half:.2} GB, V size: {half:.2} GB",
                budget.kv_tokens
            ));
            log.sglang(&format!(
                "Memory pool end. avail mem={:.2} GB",
                gpu_gib * (1.0 - args.mem_fraction) + 1.0
            ));
            log.sglang("Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem=4.00 GB");
        }
    }
    sleep_s(delay * 0.2).await;
    if kind == EngineKind::Vllm {
        log.vllm(
            "EngineCore_DP0",
            "gpu_model_runner.py:3480",
            "Graph capturing finished in 1 secs, took 0.45 GiB",
        );
        log.vllm(
            "EngineCore_DP0",
            "core.py:210",
            &format!(
                "init engine (profile, create kv cache, warmup model) took {:.2} seconds",
                delay * 0.6
            ),
        );
    } else {
        log.sglang("Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 16, 32], elapsed=1.02 s, mem usage=0.45 GB, avail mem=3.55 GB.");
        log.sglang(&format!(
            "max_total_num_tokens={}, chunked_prefill_size={}, max_prefill_tokens=16384, max_running_requests={}, context_len={}, available_gpu_mem=3.55 GB",
            budget.kv_tokens, budget.max_batched_tokens, budget.max_running, max_model_len
        ));
    }

    Ok(())
}

/// The engine's state once initialised: the scheduler sized by the budget, with the faults
/// that act while serving.
fn ready_sim(args: SimArgs, facts: ModelFacts, budget: &startup::Budget, log: Logger) -> Arc<Sim> {
    let kind = args.kind;
    let max_model_len = budget.max_model_len;
    let template = Template::for_engine(kind);
    let metrics = Metrics::for_engine(kind, &template);
    let mut sched = Sched::new(
        budget.max_running,
        budget.max_batched_tokens,
        budget.kv_tokens,
        args.prefix_caching,
        metrics,
    );
    let runtime_faults: Vec<Fault> = args
        .faults
        .iter()
        .copied()
        .filter(|f| !f.at_start() && *f != Fault::Crash)
        .collect();
    sched.faults.extend(runtime_faults);
    let started_unix = time::OffsetDateTime::now_utc().unix_timestamp_nanos() as f64 / 1e9;
    Arc::new(Sim {
        args,
        facts,
        max_model_len,
        sched: Mutex::new(sched),
        template,
        started_unix,
        log,
        dead: std::sync::atomic::AtomicBool::new(false),
        instant: Instant::from_env(),
    })
}

/// The listening socket: vLLM's early one, or SGLang's bound now.
fn listen(
    sim: &Sim,
    early_socket: Option<tokio::net::TcpSocket>,
    bind_addr: &str,
) -> Result<tokio::net::TcpListener, i32> {
    match early_socket {
        Some(sock) => match sock.listen(1024) {
            Ok(l) => Ok(l),
            Err(e) => {
                sim.log.raw(&format!("OSError: {e}"));
                Err(1)
            }
        },
        None => {
            sim.log.line("", "", "", "INFO:     Started server process");
            bind(bind_addr).and_then(|s| s.listen(1024)).map_err(|_| {
                sim.log.line("", "", "", &format!("ERROR:    [Errno 98] error while attempting to bind on address ('{}', {}): address already in use", sim.args.host, sim.args.port));
                1
            })
        }
    }
}

/// The lines that say the server is up (vLLM's route list, uvicorn's and SGLang's own).
fn announce_routes(sim: &Sim, bind_addr: &str) {
    match sim.args.kind {
        EngineKind::Vllm => {
            sim.log.vllm(
                "APIServer",
                "api_server.py:602",
                &format!("Starting vLLM server on http://{bind_addr}"),
            );
            sim.log.vllm("APIServer", "launcher.py:37", "Available routes are:");
            for route in [
                "/health",
                "/v1/models",
                "/version",
                "/load",
                "/metrics",
                "/v1/chat/completions",
                "/v1/completions",
            ] {
                sim.log.vllm(
                    "APIServer",
                    "launcher.py:46",
                    &format!(
                        "Route: {route}, Methods: {}",
                        if route.starts_with("/v1/c") { "POST" } else { "GET" }
                    ),
                );
            }
            sim.log
                .vllm("APIServer", "launcher.py:46", "Application startup complete.");
        }
        EngineKind::Sglang => {
            sim.log.line("", "", "", "INFO:     Application startup complete.");
            sim.log.line(
                "",
                "",
                "",
                &format!("INFO:     Uvicorn running on http://{bind_addr} (Press CTRL+C to quit)"),
            );
            sim.log.raw("The server is fired up and ready to roll!");
        }
    }
}

/// Until the engine goes down: SIGTERM (logged the way each engine shuts down; a wedged one
/// ignores it) or an injected crash (logged, the health check failing first). The exit code.
async fn until_down(sim: Arc<Sim>) -> i32 {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    loop {
        tokio::select! {
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {
                if std::env::var("ROOFLINE_SIM_IGNORE_SIGTERM").is_ok_and(|v| v == "1") {
                    // A wedged engine (stuck CUDA call) that only SIGKILL ends.
                    sim.log.line("APIServer", "WARNING", "launcher.py:80", "SIGTERM received while a CUDA call is blocked; not shutting down.");
                    continue;
                }
                if sim.args.kind == EngineKind::Vllm {
                    // vLLM's way down (0.32, captured on a real engine): the signal, the
                    // engine client stopped, and an EngineDeadError on the way, which
                    // is no death (testdata/fixtures/vllm-cpu-clean-stop.log).
                    sim.log.line("EngineCore_DP0", "INFO", "core.py:1454", "[shutdown] EngineCore: trigger received signal=SIGTERM");
                    sim.log.line("APIServer", "INFO", "launcher.py:254", "[shutdown] API server: shutdown triggered");
                    sim.log.line("APIServer", "INFO", "utils.py:628", "[shutdown] Process manager: send sigterm to process EngineCore");
                    sim.log.line("APIServer", "ERROR", "async_llm.py:906", "AsyncLLM output_handler failed.");
                    sim.log.line("APIServer", "ERROR", "async_llm.py:906", "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.");
                    sim.log.line("APIServer", "INFO", "launcher.py:304", "[shutdown] API server: shutting down FastAPI HTTP server");
                    sim.log.raw("INFO:     Shutting down");
                    sim.log.raw("INFO:     Waiting for application shutdown.");
                    sim.log.raw("INFO:     Application shutdown complete.");
                } else {
                    sim.log.line("APIServer", "INFO", "launcher.py:80", "Shutting down FastAPI HTTP server.");
                }
                return 0;
            }
            _ = tokio::time::sleep(Duration::from_millis(50)) => {
                let crashed = sim.lock().crashed;
                if let Some(reason) = crashed {
                    print_crash(&sim, reason);
                    sim.dead.store(true, std::sync::atomic::Ordering::SeqCst);
                    if sim.args.kind == EngineKind::Vllm {
                        // vLLM's watchdog answers 503 briefly, then shuts uvicorn down.
                        tokio::time::sleep(Duration::from_millis(1500)).await;
                        sim.log.raw("INFO:     Shutting down");
                        sim.log.raw("INFO:     Application shutdown complete.");
                    }
                    return 1;
                }
            }
        }
    }
}

fn bind(addr: &str) -> std::io::Result<tokio::net::TcpSocket> {
    let addr: std::net::SocketAddr = addr.parse().map_err(std::io::Error::other)?;
    let sock = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // uvicorn sets SO_REUSEADDR, so a restart is not blocked by the last run's TIME_WAIT sockets.
    sock.set_reuseaddr(true)?;
    sock.bind(addr)?;
    Ok(sock)
}

/// Start-time faults that are not about memory end the process here, like the real engines.
fn start_faults_or_model(args: &SimArgs, log: &Logger) -> Result<ModelFacts, i32> {
    let kind = args.kind;
    if args.faults.contains(&Fault::DriverMismatch) {
        log.raw("RuntimeError: CUDA error: no kernel image is available for execution on the device");
        return Err(1);
    }
    if args.faults.contains(&Fault::GpuMemoryTaken) {
        // vllm/v1/worker/utils.py (SGLang has no separate wording: it fails on the KV pool).
        log.raw("ValueError: Free memory on device cuda:0 (10.21/79.19 GiB) on startup is less than desired GPU memory utilization (0.90, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.");
        return Err(1);
    }
    if args.faults.contains(&Fault::AddressInUse) {
        log.raw("OSError: [Errno 98] Address already in use");
        return Err(1);
    }
    if args.faults.contains(&Fault::MissingConfig) {
        log.raw(
            &startup::read_model(kind, "/nonexistent-model-dir")
                .err()
                .unwrap_or_default(),
        );
        return Err(1);
    }
    let facts = match startup::read_model(kind, &args.model) {
        Ok(f) => f,
        Err(line) => {
            log.raw(&line);
            return Err(1);
        }
    };
    if args.faults.contains(&Fault::UnsupportedArch) {
        log.raw(&format!("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Model architectures ['{}'] are not supported for now. Supported architectures: dict_keys(['LlamaForCausalLM', 'Qwen3ForCausalLM'])", facts.architecture));
        return Err(1);
    }
    Ok(facts)
}

fn print_oom_load(log: &Logger, kind: EngineKind, gpu_gib: f64, weights_gib: f64) {
    let line = format!(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of {gpu_gib:.2} GiB of which 1.79 GiB is free. Including non-PyTorch memory, this process has {:.2} GiB memory in use. Of the allocated memory {:.2} GiB is allocated by PyTorch, and 13.88 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
        gpu_gib - 1.79,
        weights_gib.min(gpu_gib - 2.0)
    );
    match kind {
        EngineKind::Vllm => {
            log.line("Worker_TP0", "ERROR", "multiproc_executor.py:492", &line);
            log.line("EngineCore_DP0", "ERROR", "core.py:515", "EngineCore failed to start.");
            log.raw("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}");
        }
        EngineKind::Sglang => {
            log.sglang("Scheduler hit an exception: Traceback (most recent call last):");
            log.raw(&line);
            log.sglang("Received sigquit from a child process. It usually means the child failed.");
        }
    }
}

fn print_kv_too_small(log: &Logger, kind: EngineKind, b: &startup::Budget, mem_fraction: f64) {
    match kind {
        EngineKind::Vllm => {
            let need = b.max_model_len as f64 * b.kv_bytes_per_token as f64 / (1u64 << 30) as f64;
            let estimated = b.kv_tokens;
            log.line("EngineCore_DP0", "ERROR", "core.py:515", "EngineCore failed to start.");
            log.raw(&format!(
                "ValueError: To serve at least one request with the model's max seq len ({}), ({need:.2} GiB KV cache is needed, which is larger than the available KV cache memory ({:.2} GiB). Based on the available memory, the estimated maximum model length is {estimated}. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
                b.max_model_len,
                b.kv_gib.max(0.0)
            ));
        }
        EngineKind::Sglang => {
            log.sglang("Scheduler hit an exception: Traceback (most recent call last):");
            log.raw(&format!("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static={mem_fraction}"));
            log.sglang("Received sigquit from a child process. It usually means the child failed.");
        }
    }
}

fn print_crash(sim: &Sim, reason: &str) {
    let log = &sim.log;
    match sim.args.kind {
        EngineKind::Vllm => {
            if reason == "oom-under-load" {
                log.line("EngineCore_DP0", "ERROR", "core.py:880", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.25 GiB of which 512.00 MiB is free.");
                log.line(
                    "APIServer",
                    "ERROR",
                    "async_llm.py:485",
                    "AsyncLLM output_handler failed.",
                );
            } else {
                log.line(
                    "EngineCore_DP0",
                    "ERROR",
                    "core.py:880",
                    "EngineCore encountered a fatal error.",
                );
            }
            log.line("APIServer", "ERROR", "async_llm.py:485", "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.");
        }
        EngineKind::Sglang => {
            log.sglang("Scheduler hit an exception: Traceback (most recent call last):");
            if reason == "oom-under-load" {
                log.raw("RuntimeError: CUDA error: out of memory");
            } else {
                log.raw("RuntimeError: CUDA error: an illegal memory access was encountered");
            }
            log.line(
                "",
                "",
                "",
                "Received sigquit from a child process. It usually means the child failed.",
            );
        }
    }
}

/// Runs engine steps in real time and prints the periodic stats lines.
async fn engine_loop(sim: Arc<Sim>) {
    let mut last = std::time::Instant::now();
    let mut last_stats = std::time::Instant::now();
    loop {
        let step = sim.lock().step_duration();
        tokio::time::sleep(step).await;
        let now = std::time::Instant::now();
        let elapsed = now.duration_since(last);
        last = now;
        sim.lock().step(now, elapsed);
        if now.duration_since(last_stats) >= Duration::from_secs(10) {
            let interval = now.duration_since(last_stats).as_secs_f64();
            last_stats = now;
            stats_line(&sim, interval);
        }
    }
}

fn stats_line(sim: &Sim, interval: f64) {
    let mut s = sim.lock();
    let (prompt, gen, hits, queries) = (s.window_prompt, s.window_gen, s.window_hits, s.window_queries);
    let idle = s.running.is_empty() && s.waiting.is_empty() && gen == 0 && prompt == 0;
    s.window_prompt = 0;
    s.window_gen = 0;
    let (running, waiting, usage) = (s.running.len(), s.waiting.len(), s.kv_usage());
    let preemptions = s.metrics.counter("preemptions");
    drop(s);
    if idle {
        return;
    }
    let hit_rate = if queries > 0 {
        hits as f64 / queries as f64 * 100.0
    } else {
        0.0
    };
    match sim.args.kind {
        EngineKind::Vllm => sim.log.vllm("APIServer", "loggers.py:127", &format!(
            "Engine 000: Avg prompt throughput: {:.1} tokens/s, Avg generation throughput: {:.1} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, Preemptions: {preemptions}, GPU KV cache usage: {:.1}%, Prefix cache hit rate: {hit_rate:.1}%",
            prompt as f64 / interval,
            gen as f64 / interval,
            usage * 100.0
        )),
        EngineKind::Sglang => sim.log.sglang(&format!(
            "Decode batch, #running-req: {running}, #token: {}, token usage: {usage:.2}, cuda graph: True, gen throughput (token/s): {:.2}, #queue-req: {waiting}",
            (usage * sim.lock().capacity() as f64) as u64,
            gen as f64 / interval
        )),
    }
}
