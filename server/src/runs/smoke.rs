//! `roofline smoke-toolcall`: tool calling end to end through the engine's parser and chat
//! template (or a proxy in front of it), case by case as in the runbook's gate step.
//! The checks themselves are pure (`app::domain::toolcall`); this module sends the requests.

use app::domain::toolcall::{
    check, from_json, from_sse, parsed_args, Answer, CaseResult, Expect, Failure, SmokeReport,
};
use serde_json::{json, Value};
use std::time::Duration;

/// How many times the streamed auto case is repeated (stream-only corruption shows at a few
/// percent, sglang PR#36339).
pub const REPEATS: usize = 5;

/// What the launch flags say about tool calling (from the profile), for the preflight case.
#[derive(Clone, Debug)]
pub struct Preflight {
    pub failures: Vec<Failure>,
    pub detail: String,
}

fn weather_tool() -> Value {
    json!({"type": "function", "function": {"name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city to find the weather for, e.g. 'San Francisco'"},
            "state": {"type": "string", "description": "The two-letter abbreviation for the state, e.g. 'CA'"},
            "unit": {"type": "string", "description": "The unit to fetch the temperature in", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city", "state", "unit"]}}})
}

fn search_tool() -> Value {
    json!({"type": "function", "function": {"name": "web_search", "description": "Search the internet",
        "parameters": {"type": "object", "properties": {"search_term": {"type": "string", "description": "The term to search for"}}, "required": ["search_term"]}}})
}

fn time_tool() -> Value {
    json!({"type": "function", "function": {"name": "get_time", "description": "The current time; takes no arguments", "parameters": {"type": "object", "properties": {}}}})
}

const WEATHER_Q: &str = "What is the weather in Dallas, TX in Fahrenheit?";

fn expected_dallas() -> Value {
    json!({"city": "Dallas", "state": "TX", "unit": "fahrenheit"})
}

struct Client {
    http: reqwest::Client,
    url: String,
    model: String,
}

impl Client {
    async fn send(&self, mut body: Value, stream: bool) -> (Result<Answer, Failure>, String) {
        body["model"] = json!(self.model);
        body["temperature"] = json!(0);
        body["max_tokens"] = json!(256);
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        let resp = match self
            .http
            .post(format!("{}/v1/chat/completions", self.url))
            .json(&body)
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => {
                return (
                    Err(Failure {
                        check: "request".into(),
                        detail: e.to_string(),
                    }),
                    String::new(),
                )
            }
        };
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        if !status.is_success() {
            return (
                Err(Failure {
                    check: "http-status".into(),
                    detail: format!(
                        "HTTP {}: {}",
                        status.as_u16(),
                        text.chars().take(300).collect::<String>()
                    ),
                }),
                text,
            );
        }
        let answer = if stream {
            from_sse(&text)
        } else {
            serde_json::from_str::<Value>(&text)
                .map_err(|e| Failure {
                    check: "bad-json".into(),
                    detail: e.to_string(),
                })
                .and_then(|v| from_json(&v))
        };
        (answer, text)
    }
}

fn result(case: &str, failures: Vec<Failure>, raw: Vec<String>) -> CaseResult {
    CaseResult {
        case: case.into(),
        pass: failures.is_empty(),
        skipped: false,
        failures,
        raw,
    }
}

/// Runs every case against `url` (an engine or a proxy) for `model`, in the runbook's
/// order; `progress` sees each case as it finishes.
pub async fn run(
    url: &str,
    model: &str,
    preflight: Option<Preflight>,
    mut progress: impl FnMut(&CaseResult),
) -> SmokeReport {
    #[expect(
        clippy::expect_used,
        reason = "the builder fails only when the TLS backend cannot start, which the console's own client did at startup"
    )]
    let c = Client {
        http: crate::engine::client_builder()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("static client"),
        url: url.trim_end_matches('/').to_string(),
        model: model.to_string(),
    };
    let mut cases = Vec::new();
    let mut push = |r: CaseResult| {
        progress(&r);
        cases.push(r);
    };
    push(preflight_case(preflight));
    let tools = vec![weather_tool(), search_tool()];
    // 1. auto, non-stream: its arguments are the reference the streamed cases must equal.
    let (first, reference) = auto_nonstream(&c, &tools).await;
    push(first);
    push(auto_stream(&c, &tools, reference.as_ref()).await);
    push(required(&c, &tools).await);
    push(named(&c, &tools).await);
    push(none(&c, &tools).await);
    push(second_turn(&c, &tools).await);
    push(parallel(&c, &tools).await);
    push(zero_arguments(&c).await);
    push(repeated_streams(&c, &tools, reference.as_ref()).await);
    SmokeReport {
        url: c.url,
        model: c.model,
        cases,
    }
}

/// The launch flags' case: what the preflight found, or skipped without a profile.
fn preflight_case(preflight: Option<Preflight>) -> CaseResult {
    match preflight {
        Some(p) => CaseResult {
            case: "preflight".into(),
            pass: p.failures.is_empty(),
            skipped: false,
            failures: p.failures,
            raw: vec![p.detail],
        },
        None => CaseResult {
            case: "preflight".into(),
            pass: true,
            skipped: true,
            failures: vec![],
            raw: vec!["no profile: launch flags not checked".into()],
        },
    }
}

/// The weather question with the tools and `tool_choice: auto`.
fn auto_request(tools: &[Value]) -> Value {
    json!({"messages": [{"role": "user", "content": WEATHER_Q}], "tools": tools, "tool_choice": "auto"})
}

/// One call of the weather tool with Dallas' arguments.
fn expect_auto() -> Expect {
    Expect {
        calls: Some(1),
        tool: Some("get_current_weather".into()),
        args: vec![expected_dallas()],
        finish: vec!["tool_calls".into()],
        ..Default::default()
    }
}

/// 1. auto, non-stream; and its arguments, the reference for the streamed cases.
async fn auto_nonstream(c: &Client, tools: &[Value]) -> (CaseResult, Option<Vec<Value>>) {
    let (answer, raw) = c.send(auto_request(tools), false).await;
    let reference = answer.as_ref().ok().map(parsed_args);
    (
        result("auto-nonstream", outcome(&answer, tools, &expect_auto()), vec![raw]),
        reference,
    )
}

/// 2. auto, stream: the same, and equal to the non-stream arguments.
async fn auto_stream(c: &Client, tools: &[Value], reference: Option<&Vec<Value>>) -> CaseResult {
    let (answer, raw) = c.send(auto_request(tools), true).await;
    let mut failures = outcome(&answer, tools, &expect_auto());
    failures.extend(compare(&answer, reference));
    result("auto-stream", failures, vec![raw])
}

/// 3a. `tool_choice: required`: at least one call.
async fn required(c: &Client, tools: &[Value]) -> CaseResult {
    let mut required = auto_request(tools);
    required["tool_choice"] = json!("required");
    let (answer, raw) = c.send(required, false).await;
    let expect = Expect {
        at_least_one_call: true,
        finish: vec!["tool_calls".into()],
        ..Default::default()
    };
    result("required", outcome(&answer, tools, &expect), vec![raw])
}

/// 3b. A named tool choice, streamed: that tool is called.
async fn named(c: &Client, tools: &[Value]) -> CaseResult {
    let mut named = auto_request(tools);
    named["tool_choice"] = json!({"type": "function", "function": {"name": "get_current_weather"}});
    let (answer, raw) = c.send(named, true).await;
    let expect = Expect {
        at_least_one_call: true,
        tool: Some("get_current_weather".into()),
        finish: vec!["stop".into(), "tool_calls".into()],
        ..Default::default()
    };
    result("named", outcome(&answer, tools, &expect), vec![raw])
}

/// 4. `tool_choice: none`: no calls and no leaked markup.
async fn none(c: &Client, tools: &[Value]) -> CaseResult {
    let none = json!({"messages": [{"role": "user", "content": "Tell me a short joke about GPUs."}], "tools": tools, "tool_choice": "none"});
    let expect = Expect {
        calls: Some(0),
        finish: vec!["stop".into(), "length".into()],
        ..Default::default()
    };
    let (answer, raw) = c.send(none, false).await;
    result("none", outcome(&answer, tools, &expect), vec![raw])
}

/// 5. The second turn with the tool's result, streamed and whole alike.
async fn second_turn(c: &Client, tools: &[Value]) -> CaseResult {
    let second = json!({"tools": tools, "messages": [
        {"role": "user", "content": WEATHER_Q},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "chatcmpl-tool-dallas01", "type": "function", "function": {"name": "get_current_weather", "arguments": expected_dallas().to_string()}}]},
        {"role": "tool", "tool_call_id": "chatcmpl-tool-dallas01", "content": "98 degrees"}]});
    let expect = Expect {
        calls: Some(0),
        content_contains: Some("98".into()),
        finish: vec!["stop".into()],
        ..Default::default()
    };
    let (whole, raw1) = c.send(second.clone(), false).await;
    let (streamed, raw2) = c.send(second, true).await;
    let mut failures = outcome(&whole, tools, &expect);
    failures.extend(outcome(&streamed, tools, &expect));
    if let (Ok(a), Ok(b)) = (&whole, &streamed) {
        if a.content != b.content {
            failures.push(Failure {
                check: "stream-differs".into(),
                detail: format!("{:?} vs {:?}", a.content, b.content),
            });
        }
    }
    result("second-turn", failures, vec![raw1, raw2])
}

/// 6. Parallel calls: two cities, two calls.
async fn parallel(c: &Client, tools: &[Value]) -> CaseResult {
    let parallel = json!({"messages": [{"role": "user", "content": "What is the weather in Dallas, TX and in Orlando, FL in Fahrenheit?"}], "tools": tools, "parallel_tool_calls": true});
    let expect = Expect {
        calls: Some(2),
        tool: Some("get_current_weather".into()),
        finish: vec!["tool_calls".into()],
        ..Default::default()
    };
    let (answer, raw) = c.send(parallel, true).await;
    result("parallel", outcome(&answer, tools, &expect), vec![raw])
}

/// 7. A zero-argument tool: `{}` must survive streaming.
async fn zero_arguments(c: &Client) -> CaseResult {
    let zero_tools = vec![time_tool()];
    let zero = json!({"messages": [{"role": "user", "content": "What time is it? Use the get_time tool."}], "tools": zero_tools});
    let expect = Expect {
        calls: Some(1),
        tool: Some("get_time".into()),
        args: vec![json!({})],
        finish: vec!["tool_calls".into()],
        ..Default::default()
    };
    let (answer, raw) = c.send(zero, true).await;
    result("zero-arguments", outcome(&answer, &zero_tools, &expect), vec![raw])
}

/// 8. The auto case streamed again and again: every repeat equal to the reference.
async fn repeated_streams(c: &Client, tools: &[Value], reference: Option<&Vec<Value>>) -> CaseResult {
    let mut failures = Vec::new();
    let mut raws = Vec::new();
    for k in 0..REPEATS {
        let (answer, raw) = c.send(auto_request(tools), true).await;
        for mut f in outcome(&answer, tools, &expect_auto())
            .into_iter()
            .chain(compare(&answer, reference))
        {
            f.detail = format!("repeat {}: {}", k + 1, f.detail);
            failures.push(f);
        }
        raws.push(raw);
    }
    result("repeated-streams", failures, raws)
}

fn outcome(answer: &Result<Answer, Failure>, tools: &[Value], expect: &Expect) -> Vec<Failure> {
    match answer {
        Ok(a) => check(a, tools, expect),
        Err(f) => vec![f.clone()],
    }
}

fn compare(answer: &Result<Answer, Failure>, reference: Option<&Vec<Value>>) -> Vec<Failure> {
    match (answer, reference) {
        (Ok(a), Some(r)) if &parsed_args(a) != r => {
            vec![Failure {
                check: "stream-differs".into(),
                detail: format!("stream args {:?} vs non-stream {:?}", parsed_args(a), r),
            }]
        }
        _ => vec![],
    }
}

/// The preflight case from the launch flags: auto tool choice enabled (vLLM), a tool-call
/// parser set, and parser names the installed engine lists.
pub fn preflight(
    kind: app::domain::engine::EngineKind,
    argv: &[String],
    installed: Option<&app::domain::help_flags::FlagSet>,
) -> Preflight {
    use app::domain::engine::EngineKind;
    let mut failures = Vec::new();
    let has = |f: &str| argv.iter().any(|a| a == f || a.starts_with(&format!("{f}=")));
    if !has("--tool-call-parser") {
        failures.push(Failure {
            check: "no-parser".into(),
            detail: "the profile sets no TOOL_CALL_PARSER".into(),
        });
    }
    if kind == EngineKind::Vllm && !has("--enable-auto-tool-choice") {
        failures.push(Failure {
            check: "no-auto-tool-choice".into(),
            detail: "vLLM needs --enable-auto-tool-choice for tool_choice \"auto\"".into(),
        });
    }
    if let Some(set) = installed {
        for bad in set.bad_values(argv).into_iter().filter(|b| b.flag.ends_with("-parser")) {
            failures.push(Failure {
                check: "parser-unknown".into(),
                detail: format!(
                    "{} {} is not a {} parser name{}",
                    bad.flag,
                    bad.value,
                    kind.as_str(),
                    bad.suggestion.map(|s| format!(" (closest: {s})")).unwrap_or_default()
                ),
            });
        }
    }
    let detail = argv
        .iter()
        .skip_while(|a| !a.starts_with("--"))
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    Preflight { failures, detail }
}
