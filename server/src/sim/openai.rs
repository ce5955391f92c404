//! The simulator's HTTP surface: health, models, version, metrics, OpenAI completions
//! (streaming and not, with usage and tool calls) and the loopback-only fault switch.

use super::faults::Fault;
use super::sched::{Finished, TokenEvent};
use super::Sim;
use app::domain::engine::EngineKind;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

type S = State<Arc<Sim>>;

pub fn router(sim: Arc<Sim>) -> Router {
    let mut r = Router::new()
        .route("/health", get(health))
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
        .route("/v1/completions", post(completions))
        .route("/metrics", get(metrics))
        .route("/sim/faults", get(get_faults).post(set_faults));
    r = match sim.args.kind {
        EngineKind::Vllm => r
            .route("/ping", get(health).post(health))
            .route("/version", get(version))
            .route("/load", get(load)),
        EngineKind::Sglang => r
            .route("/health_generate", get(health))
            .route("/ready", get(ready))
            .route("/model_info", get(model_info))
            .route("/server_info", get(server_info)),
    };
    r.layer(axum::extract::DefaultBodyLimit::max(8 << 20)).with_state(sim)
}

fn error(status: StatusCode, kind: &str, message: &str, param: Option<&str>) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": kind, "param": param, "code": status.as_u16()}})),
    )
        .into_response()
}

/// An OpenAI-style error, kept small until it becomes a response.
struct OaiError(Box<(StatusCode, &'static str, String, Option<&'static str>)>);

impl OaiError {
    fn new(status: StatusCode, kind: &'static str, message: &str, param: Option<&'static str>) -> Self {
        Self(Box::new((status, kind, message.to_string(), param)))
    }
}

impl IntoResponse for OaiError {
    fn into_response(self) -> Response {
        let (status, kind, message, param) = *self.0;
        error(status, kind, &message, param)
    }
}

async fn health(State(sim): S) -> Response {
    if sim.dead.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    // SGLang's /health runs a one-token generation; a hung scheduler times it out.
    if sim.args.kind == EngineKind::Sglang && sim.has_fault(Fault::Hang) {
        let timeout: u64 = std::env::var("SGLANG_HEALTH_CHECK_TIMEOUT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20);
        tokio::time::sleep(Duration::from_secs(timeout)).await;
        sim.log.sglang(&format!(
            "Health check failed. Server couldn't get a response from detokenizer for last {timeout} seconds."
        ));
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    StatusCode::OK.into_response()
}

async fn ready(State(sim): S) -> StatusCode {
    if sim.dead.load(Ordering::SeqCst) {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    }
}

async fn version(State(sim): S) -> Json<Value> {
    Json(json!({"version": sim.args.release.version}))
}

async fn load(State(sim): S) -> Json<Value> {
    let s = sim.lock();
    Json(json!({"server_load": s.running.len() + s.waiting.len()}))
}

async fn models(State(sim): S) -> Json<Value> {
    let owner = sim.args.kind.as_str();
    Json(json!({"object": "list", "data": [{
        "id": sim.args.model_name(), "object": "model", "created": sim.started_unix as u64, "owned_by": owner,
        "root": sim.args.model, "parent": null, "max_model_len": sim.max_model_len,
        "permission": [{"id": "modelperm-roofline-sim", "object": "model_permission", "allow_sampling": true}]
    }]}))
}

async fn model_info(State(sim): S) -> Json<Value> {
    Json(json!({
        "model_path": sim.args.model, "served_model_name": sim.args.model_name(), "tokenizer_path": sim.args.model,
        "is_generation": true, "tool_call_parser": sim.args.tool_call_parser, "architectures": [sim.facts.architecture],
    }))
}

async fn server_info(State(sim): S) -> Json<Value> {
    Json(json!({
        "model_path": sim.args.model, "served_model_name": sim.args.model_name(), "tp_size": sim.args.tp,
        "context_length": sim.max_model_len, "port": sim.args.port, "version": sim.args.release.version, "frontend": "python",
        "roofline_simulator": true,
    }))
}

async fn metrics(State(sim): S) -> Response {
    if !sim.args.metrics_enabled {
        // SGLang without --enable-metrics has no route; vLLM with --disable-log-stats has no vllm:* families.
        return match sim.args.kind {
            EngineKind::Sglang => (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))).into_response(),
            EngineKind::Vllm => ([(header::CONTENT_TYPE, "text/plain; version=1.0.0; charset=utf-8")], "# HELP http_requests_total Total number of requests by method, status and handler.\n# TYPE http_requests_total counter\n").into_response(),
        };
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=1.0.0; charset=utf-8")],
        sim.render_metrics(),
    )
        .into_response()
}

async fn get_faults(State(sim): S) -> Json<Value> {
    let mut f: Vec<&str> = sim.lock().faults.iter().map(|f| f.name()).collect();
    f.sort();
    Json(json!({"faults": f, "known": Fault::ALL.map(|f| f.name())}))
}

/// `POST /sim/faults {"enable": ["hang"], "disable": [...]}`, loopback clients only.
async fn set_faults(State(sim): S, ConnectInfo(peer): ConnectInfo<SocketAddr>, body: axum::body::Bytes) -> Response {
    if !peer.ip().is_loopback() {
        return error(
            StatusCode::FORBIDDEN,
            "PermissionError",
            "the fault switch answers loopback clients only",
            None,
        );
    }
    let v: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "BadRequestError",
                &format!("body is not JSON: {e}"),
                None,
            )
        }
    };
    let parse_list = |key: &str| -> Result<Vec<Fault>, String> {
        match v.get(key) {
            None => Ok(vec![]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().unwrap_or("").parse::<Fault>())
                .collect(),
            Some(_) => Err(format!("`{key}` must be a list of fault names")),
        }
    };
    let (enable, disable) = match (parse_list("enable"), parse_list("disable")) {
        (Ok(e), Ok(d)) => (e, d),
        (Err(e), _) | (_, Err(e)) => return error(StatusCode::BAD_REQUEST, "BadRequestError", &e, Some("enable")),
    };
    if let Some(f) = enable.iter().find(|f| f.at_start()) {
        return error(
            StatusCode::BAD_REQUEST,
            "BadRequestError",
            &format!(
                "{} acts at startup; pass --sim-fault {} when serving",
                f.name(),
                f.name()
            ),
            Some("enable"),
        );
    }
    {
        let mut s = sim.lock();
        for f in disable {
            s.faults.remove(&f);
        }
        for f in enable {
            match f {
                Fault::Crash => s.crashed = Some("crash"),
                other => {
                    s.faults.insert(other);
                }
            }
        }
    }
    get_faults(State(sim)).await.into_response()
}

/// Rough token count: about four characters per token, at least one.
fn estimate_tokens(text: &str) -> u32 {
    (text.chars().count() as u32).div_ceil(4).max(1)
}

fn prefix_key(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.chars().take(256).collect::<String>().hash(&mut h);
    h.finish()
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}-{:032x}", rand::random::<u128>())
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

struct Parsed {
    body: Value,
    prompt_text: String,
    max_tokens: u32,
    stream: bool,
    include_usage: bool,
}

fn parse_request(sim: &Sim, bytes: &[u8], chat: bool) -> Result<Parsed, OaiError> {
    if sim.dead.load(Ordering::SeqCst) {
        return Err(OaiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalServerError",
            "The server had an error while processing your request.",
            None,
        ));
    }
    let body: Value = serde_json::from_slice(bytes).map_err(|e| {
        OaiError::new(
            StatusCode::BAD_REQUEST,
            "BadRequestError",
            &format!("JSON decode error: {e}"),
            None,
        )
    })?;
    let model = body.get("model").and_then(|m| m.as_str()).unwrap_or("");
    if model != sim.args.model_name() && model != sim.args.model {
        return Err(OaiError::new(
            StatusCode::NOT_FOUND,
            "NotFoundError",
            &format!("The model `{model}` does not exist."),
            Some("model"),
        ));
    }
    let prompt_text = if chat {
        let msgs = body.get("messages").and_then(|m| m.as_array()).ok_or_else(|| {
            OaiError::new(
                StatusCode::BAD_REQUEST,
                "BadRequestError",
                "messages: Field required",
                Some("messages"),
            )
        })?;
        msgs.iter()
            .map(|m| {
                m.get("content")
                    .map(|c| match c {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        match body.get("prompt") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string()))
                .collect::<Vec<_>>()
                .join(" "),
            _ => {
                return Err(OaiError::new(
                    StatusCode::BAD_REQUEST,
                    "BadRequestError",
                    "prompt: Field required",
                    Some("prompt"),
                ))
            }
        }
    };
    let max_tokens = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(|v| v.as_u64())
        .unwrap_or(if chat { 64 } else { 16 });
    let prompt_tokens = estimate_tokens(&prompt_text) as u64;
    if prompt_tokens + max_tokens > sim.max_model_len {
        return Err(OaiError::new(
            StatusCode::BAD_REQUEST,
            "BadRequestError",
            &format!("This model's maximum context length is {} tokens. However, you requested {} tokens ({prompt_tokens} in the messages, {max_tokens} in the completion). Please reduce the length of the messages or completion.", sim.max_model_len, prompt_tokens + max_tokens),
            Some("max_tokens"),
        ));
    }
    let stream = body.get("stream").and_then(|v| v.as_bool()).unwrap_or(false);
    let include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    Ok(Parsed {
        body,
        prompt_text,
        max_tokens: max_tokens as u32,
        stream,
        include_usage,
    })
}

/// Queues a request and returns its token stream; the client's disconnect drops the request.
fn submit(sim: &Sim, p: &Parsed, max_tokens: u32) -> mpsc::UnboundedReceiver<TokenEvent> {
    let (tx, rx) = mpsc::unbounded_channel();
    let prompt_tokens = estimate_tokens(&p.prompt_text);
    if let Some(instant) = sim.instant {
        // Benchmark-client calibration: a fixed TTFT and ITL, no scheduler in the way.
        tokio::spawn(async move {
            tokio::time::sleep(instant.ttft).await;
            for k in 0..max_tokens.max(1) {
                if k > 0 && !instant.itl.is_zero() {
                    tokio::time::sleep(instant.itl).await;
                }
                if tx.send(TokenEvent::Token(String::new())).is_err() {
                    return;
                }
            }
            let done = Finished {
                finish_reason: "length",
                prompt_tokens,
                completion_tokens: max_tokens.max(1),
                cached_tokens: 0,
            };
            let _ = tx.send(TokenEvent::Done(done));
        });
        return rx;
    }
    sim.lock()
        .submit(prompt_tokens, max_tokens, prefix_key(&p.prompt_text), p.stream, tx);
    rx
}

fn sse(chunk: &Value) -> String {
    format!("data: {chunk}\n\n")
}

impl Finished {
    /// The OpenAI `usage` object.
    fn usage(&self) -> Value {
        let (p, c) = (self.prompt_tokens, self.completion_tokens);
        let details = if self.cached_tokens > 0 {
            json!({"cached_tokens": self.cached_tokens})
        } else {
            Value::Null
        };
        json!({"prompt_tokens": p, "total_tokens": p + c, "completion_tokens": c, "prompt_tokens_details": details})
    }
}

/// Waits for a whole non-streamed answer: its text and how it ended (`None` if the engine
/// dropped the request).
async fn collect(rx: &mut mpsc::UnboundedReceiver<TokenEvent>) -> Option<(String, Finished)> {
    let mut text = String::new();
    while let Some(ev) = rx.recv().await {
        match ev {
            TokenEvent::Token(t) => text.push_str(&t),
            TokenEvent::Done(done) => return Some((text, done)),
        }
    }
    None
}

fn engine_error() -> Response {
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "InternalServerError",
        "The server had an error while processing your request.",
        None,
    )
}

async fn completions(State(sim): S, bytes: axum::body::Bytes) -> Response {
    let p = match parse_request(&sim, &bytes, false) {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    let mut rx = submit(&sim, &p, p.max_tokens);
    let id = new_id("cmpl");
    let model = sim.args.model_name().to_string();
    let created = now_unix();
    if !p.stream {
        let Some((text, done)) = collect(&mut rx).await else {
            return engine_error();
        };
        return Json(json!({"id": id, "object": "text_completion", "created": created, "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": done.finish_reason, "stop_reason": null, "prompt_logprobs": null}],
            "usage": done.usage()}))
        .into_response();
    }
    let include_usage = p.include_usage;
    let stream = async_stream(move |out| async move {
        while let Some(ev) = rx.recv().await {
            match ev {
                TokenEvent::Token(t) => {
                    let c = json!({"id": id, "object": "text_completion", "created": created, "model": model,
                        "choices": [{"index": 0, "text": t, "logprobs": null, "finish_reason": null, "stop_reason": null}]});
                    if out.send(sse(&c)).is_err() {
                        return;
                    }
                }
                TokenEvent::Done(done) => {
                    let c = json!({"id": id, "object": "text_completion", "created": created, "model": model,
                        "choices": [{"index": 0, "text": "", "logprobs": null, "finish_reason": done.finish_reason, "stop_reason": null}]});
                    let _ = out.send(sse(&c));
                    if include_usage {
                        let u = json!({"id": id, "object": "text_completion", "created": created, "model": model, "choices": [], "usage": done.usage()});
                        let _ = out.send(sse(&u));
                    }
                    let _ = out.send("data: [DONE]\n\n".into());
                    return;
                }
            }
        }
    });
    sse_response(stream)
}

/// vLLM's `/v1/chat/completions`: the tool-choice check, what the model writes (tool-call
/// markup or text, through the scheduler as tokens), then the whole answer or the stream.
async fn chat(State(sim): S, bytes: axum::body::Bytes) -> Response {
    let p = match parse_request(&sim, &bytes, true) {
        Ok(p) => p,
        Err(r) => return r.into_response(),
    };
    if let Some(refused) = tool_choice_refused(&sim, &p) {
        return refused;
    }
    let w = Written::for_request(&sim, &p);
    let rx = submit(&sim, &p, w.out_tokens);
    let head = ChatHead {
        id: new_id("chatcmpl"),
        model: sim.args.model_name().to_string(),
        created: now_unix(),
        tool_ids: w.calls.iter().map(|_| new_id("chatcmpl-tool")).collect(),
    };
    if p.stream {
        sse_response(streamed_chat(head, w, rx, p.include_usage))
    } else {
        whole_chat(head, w, rx).await
    }
}

/// vLLM refuses `tool_choice: auto` unless it was started with a tool-call parser.
fn tool_choice_refused(sim: &Sim, p: &Parsed) -> Option<Response> {
    let has_tools = p
        .body
        .get("tools")
        .and_then(|t| t.as_array())
        .is_some_and(|t| !t.is_empty());
    let choice = p
        .body
        .get("tool_choice")
        .cloned()
        .unwrap_or(if has_tools { json!("auto") } else { Value::Null });
    (has_tools
        && choice.as_str() == Some("auto")
        && sim.args.kind == EngineKind::Vllm
        && !(sim.args.auto_tool_choice && sim.args.tool_call_parser.is_some()))
    .then(|| {
        error(
            StatusCode::BAD_REQUEST,
            "BadRequestError",
            "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
            Some("tool_choice"),
        )
    })
}

/// What the model writes for a chat request: the call markup a parser would turn into
/// `tool_calls`, or text; its pieces pass through the scheduler as tokens, so load shapes
/// tool calls too.
struct Written {
    calls: Vec<(String, String)>,
    pieces: Vec<String>,
    out_tokens: u32,
    /// A model stops at its end token; only a budget cut short ends with "length".
    natural_finish: &'static str,
    /// The calls come back parsed (not with the broken-parser fault: then as text).
    parsed_calls: bool,
}

impl Written {
    fn for_request(sim: &Sim, p: &Parsed) -> Self {
        let plan = super::responder::plan(&p.body);
        let calls = plan.calls;
        let written: String = if calls.is_empty() {
            plan.text
        } else {
            calls
                .iter()
                .map(|(n, a)| format!("<tool_call>\n{{\"name\": \"{n}\", \"arguments\": {a}}}\n</tool_call>"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut pieces = split_pieces(&written);
        // `ignore_eos` (benchmarks) keeps a text answer going to max_tokens, as vLLM does.
        let ignore_eos = calls.is_empty() && p.body.get("ignore_eos").and_then(|v| v.as_bool()).unwrap_or(false);
        if ignore_eos && !pieces.is_empty() {
            let base = pieces.clone();
            pieces = base
                .iter()
                .cycle()
                .take(p.max_tokens.max(1) as usize)
                .cloned()
                .collect();
        }
        let out_tokens = (pieces.len() as u32).clamp(1, p.max_tokens.max(1));
        let natural_finish = if ignore_eos || (out_tokens as usize) < pieces.len() {
            "length"
        } else {
            "stop"
        };
        let parsed_calls = !calls.is_empty() && !sim.has_fault(Fault::BrokenToolParser);
        Self {
            calls,
            pieces,
            out_tokens,
            natural_finish,
            parsed_calls,
        }
    }
}

/// The fields every chunk of one answer repeats, and its calls' ids.
struct ChatHead {
    id: String,
    model: String,
    created: u64,
    tool_ids: Vec<String>,
}

/// The whole answer (`stream: false`): the parsed calls, or the text the tokens covered.
async fn whole_chat(h: ChatHead, w: Written, mut rx: mpsc::UnboundedReceiver<TokenEvent>) -> Response {
    let Some((_, done)) = collect(&mut rx).await else {
        return engine_error();
    };
    let (message, finish) = if w.parsed_calls {
        let tc: Vec<Value> = w
            .calls
            .iter()
            .zip(&h.tool_ids)
            .map(|((n, a), tid)| json!({"id": tid, "type": "function", "function": {"name": n, "arguments": a}}))
            .collect();
        (
            json!({"role": "assistant", "reasoning_content": null, "content": null, "tool_calls": tc}),
            "tool_calls",
        )
    } else {
        let text = w
            .pieces
            .iter()
            .take(done.completion_tokens as usize)
            .cloned()
            .collect::<String>();
        (
            json!({"role": "assistant", "reasoning_content": null, "content": text, "tool_calls": []}),
            w.natural_finish,
        )
    };
    Json(
        json!({"id": h.id, "object": "chat.completion", "created": h.created, "model": h.model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish, "stop_reason": null}],
        "usage": done.usage(), "prompt_logprobs": null}),
    )
    .into_response()
}

/// The stream: the role first, then a delta per token (tool-call argument text in pieces,
/// each call named by a delta before its first piece: vLLM's wire format), the finish, the
/// usage when asked for, `[DONE]`.
fn streamed_chat(
    h: ChatHead,
    w: Written,
    mut rx: mpsc::UnboundedReceiver<TokenEvent>,
    include_usage: bool,
) -> tokio_stream::wrappers::UnboundedReceiverStream<String> {
    async_stream(move |out| async move {
        let ChatHead {
            id,
            model,
            created,
            tool_ids,
        } = h;
        let Written {
            calls,
            pieces: written_pieces,
            natural_finish,
            parsed_calls,
            ..
        } = w;
        let chunk = |delta: Value, finish: Value| {
            json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
        };
        if out
            .send(sse(&chunk(json!({"role": "assistant", "content": ""}), Value::Null)))
            .is_err()
        {
            return;
        }
        // Tool-call argument text is streamed in pieces as tokens arrive; the first piece of
        // each call is preceded by a delta that names it (vLLM's wire format).
        let pieces: Vec<(usize, String)> = calls
            .iter()
            .enumerate()
            .flat_map(|(i, (_, a))| split_pieces(a).into_iter().map(move |p| (i, p)))
            .collect();
        let mut next_piece = 0;
        let mut announced = vec![false; calls.len()];
        let mut tool_deltas = |i: usize, piece: &str| -> Vec<Value> {
            let mut deltas = Vec::with_capacity(2);
            if !announced[i] {
                announced[i] = true;
                deltas.push(json!({"tool_calls": [{"id": tool_ids[i], "type": "function", "index": i, "function": {"name": calls[i].0}}]}));
            }
            deltas.push(json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}));
            deltas
        };
        while let Some(ev) = rx.recv().await {
            match ev {
                TokenEvent::Token(_) => {
                    next_piece += 1;
                    let deltas = if parsed_calls {
                        pieces
                            .get(next_piece - 1)
                            .map(|(i, piece)| tool_deltas(*i, piece))
                            .unwrap_or_default()
                    } else {
                        written_pieces
                            .get(next_piece - 1)
                            .map(|p| vec![json!({"content": p})])
                            .unwrap_or_default()
                    };
                    for d in deltas {
                        if out.send(sse(&chunk(d, Value::Null))).is_err() {
                            return;
                        }
                    }
                }
                TokenEvent::Done(done) => {
                    // Argument pieces the token budget did not cover are flushed before the finish.
                    if parsed_calls {
                        let rest: Vec<Value> = pieces
                            .iter()
                            .skip(next_piece)
                            .flat_map(|(i, piece)| tool_deltas(*i, piece))
                            .collect();
                        for d in rest {
                            let _ = out.send(sse(&chunk(d, Value::Null)));
                        }
                    }
                    let (last, finish) = if parsed_calls {
                        (
                            json!({"tool_calls": [{"index": calls.len() - 1, "function": {"arguments": ""}}]}),
                            "tool_calls",
                        )
                    } else {
                        (json!({"content": ""}), natural_finish)
                    };
                    let _ = out.send(sse(&chunk(last, json!(finish))));
                    if include_usage {
                        let u = json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": done.usage()});
                        let _ = out.send(sse(&u));
                    }
                    let _ = out.send("data: [DONE]\n\n".into());
                    return;
                }
            }
        }
    })
}

/// Splits text into a few streaming pieces, the way a tokenizer would (about 4 chars each).
fn split_pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

/// Runs a producer that pushes SSE frames into a channel, and returns the receiving stream.
fn async_stream<F, Fut>(producer: F) -> tokio_stream::wrappers::UnboundedReceiverStream<String>
where
    F: FnOnce(mpsc::UnboundedSender<String>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(producer(tx));
    tokio_stream::wrappers::UnboundedReceiverStream::new(rx)
}

fn sse_response(stream: tokio_stream::wrappers::UnboundedReceiverStream<String>) -> Response {
    use futures::StreamExt;
    let body = Body::from_stream(stream.map(Ok::<_, std::convert::Infallible>));
    (
        [
            (header::CONTENT_TYPE, "text/event-stream; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
