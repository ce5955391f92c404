//! The tool-call smoke test's checker: it reads chat answers (whole JSON or an SSE stream)
//! into one shape and checks them the way vLLM's and SGLang's own tool-use tests and the
//! BFCL AST checker do. Each failed check has a stable code (`smoke-check-<code>` in Fluent)
//! and a detail naming what was seen.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The smoke-toolcall cases, in the order they run (`smoke-case-<id>` in Fluent).
pub const CASES: &[&str] = &[
    "preflight",
    "auto-nonstream",
    "auto-stream",
    "required",
    "named",
    "none",
    "second-turn",
    "parallel",
    "zero-arguments",
    "repeated-streams",
];

/// Every check code a failure can carry (`smoke-check-<code>` in Fluent).
pub const CHECKS: &[&str] = &[
    "no-choices",
    "args-not-string",
    "bad-chunk",
    "no-done",
    "role-deltas",
    "finish-count",
    "finish-reason",
    "markup-leak",
    "call-count",
    "content-with-calls",
    "duplicate-id",
    "missing-id",
    "fragments",
    "wrong-name",
    "unknown-tool",
    "args-not-json",
    "args-schema",
    "args-value",
    "content-missing",
    "request",
    "http-status",
    "bad-json",
    "stream-differs",
    "no-parser",
    "no-auto-tool-choice",
    "parser-unknown",
];

/// Tool markup that must never reach `content` or the reasoning fields.
pub const MARKUP: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "<|tool▁calls▁begin|>",
    "<|tool_call_begin|>",
    "<function=",
    "<|python_tag|>",
];

/// One tool call as assembled from the answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Call {
    pub index: u64,
    pub id: Option<String>,
    pub name: Option<String>,
    /// The `arguments` string, concatenated over stream fragments.
    pub arguments: String,
    /// How many fragments carried an id / a name (each should be exactly one).
    pub id_fragments: u32,
    pub name_fragments: u32,
}

/// A chat answer, streamed or not, in one shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Answer {
    pub streamed: bool,
    pub content: String,
    pub reasoning: String,
    pub calls: Vec<Call>,
    pub finish_reasons: Vec<String>,
    pub role_deltas: u32,
    pub usage: Option<Value>,
}

/// A failed check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Failure {
    pub check: String,
    pub detail: String,
}

fn fail(check: &str, detail: impl Into<String>) -> Failure {
    Failure {
        check: check.to_string(),
        detail: detail.into(),
    }
}

fn text_of(v: Option<&Value>) -> String {
    v.and_then(|x| x.as_str()).unwrap_or("").to_string()
}

/// Reads a non-streamed chat completion.
pub fn from_json(body: &Value) -> Result<Answer, Failure> {
    let choice = body
        .pointer("/choices/0")
        .ok_or_else(|| fail("no-choices", body.to_string().chars().take(200).collect::<String>()))?;
    let msg = choice
        .get("message")
        .ok_or_else(|| fail("no-choices", "choices[0] has no message"))?;
    let mut answer = Answer {
        streamed: false,
        content: text_of(msg.get("content")),
        usage: body.get("usage").cloned(),
        ..Default::default()
    };
    answer.reasoning = text_of(msg.get("reasoning_content")) + &text_of(msg.get("reasoning"));
    if let Some(r) = choice.get("finish_reason").and_then(|f| f.as_str()) {
        answer.finish_reasons.push(r.to_string());
    }
    for (i, c) in msg
        .get("tool_calls")
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
        .enumerate()
    {
        let arguments = match c.pointer("/function/arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(fail("args-not-string", other.to_string())),
            None => String::new(),
        };
        answer.calls.push(Call {
            index: i as u64,
            id: c.get("id").and_then(|x| x.as_str()).map(str::to_string),
            name: c.pointer("/function/name").and_then(|x| x.as_str()).map(str::to_string),
            arguments,
            id_fragments: 1,
            name_fragments: 1,
        });
    }
    Ok(answer)
}

/// Reads an SSE stream of chat completion chunks, concatenating tool-call fragments by index.
pub fn from_sse(text: &str) -> Result<Answer, Failure> {
    let mut a = Answer {
        streamed: true,
        ..Default::default()
    };
    let mut saw_done = false;
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            saw_done = true;
            continue;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            fail(
                "bad-chunk",
                format!("{e}: {}", data.chars().take(120).collect::<String>()),
            )
        })?;
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            a.usage = Some(u.clone());
        }
        for choice in chunk.get("choices").and_then(|c| c.as_array()).into_iter().flatten() {
            let delta = choice.get("delta").cloned().unwrap_or(Value::Null);
            if delta.get("role").is_some() {
                a.role_deltas += 1;
            }
            a.content.push_str(&text_of(delta.get("content")));
            a.reasoning
                .push_str(&(text_of(delta.get("reasoning_content")) + &text_of(delta.get("reasoning"))));
            for tc in delta.get("tool_calls").and_then(|t| t.as_array()).into_iter().flatten() {
                let index = tc.get("index").and_then(|i| i.as_u64()).unwrap_or(0);
                let pos = match a.calls.iter().position(|c| c.index == index) {
                    Some(p) => p,
                    None => {
                        a.calls.push(Call {
                            index,
                            ..Default::default()
                        });
                        a.calls.len() - 1
                    }
                };
                let call = &mut a.calls[pos];
                if let Some(id) = tc.get("id").and_then(|x| x.as_str()) {
                    call.id_fragments += 1;
                    call.id.get_or_insert_with(|| id.to_string());
                }
                if let Some(name) = tc.pointer("/function/name").and_then(|x| x.as_str()) {
                    call.name_fragments += 1;
                    call.name.get_or_insert_with(|| name.to_string());
                }
                if let Some(args) = tc.pointer("/function/arguments").and_then(|x| x.as_str()) {
                    call.arguments.push_str(args);
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(|f| f.as_str()) {
                a.finish_reasons.push(r.to_string());
            }
        }
    }
    if !saw_done {
        return Err(fail("no-done", "the stream ended without data: [DONE]"));
    }
    a.calls.sort_by_key(|c| c.index);
    Ok(a)
}

/// One case's verdict, with the raw answers kept for the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct CaseResult {
    pub case: String,
    pub pass: bool,
    pub skipped: bool,
    pub failures: Vec<Failure>,
    pub raw: Vec<String>,
}

/// The whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct SmokeReport {
    pub url: String,
    pub model: String,
    pub cases: Vec<CaseResult>,
}

/// How much of each raw answer a page shows: a noisy model's answers run to megabytes, and a
/// page carries what it renders twice (the HTML and the hydration data).
pub const PAGE_RAW_BYTES: usize = 2048;

impl SmokeReport {
    /// The report as a page shows it: each raw answer cut to `max` bytes (on a character
    /// boundary) with the cut said; verdicts and failures whole. The stored run keeps all.
    pub fn for_page(mut self, max: usize) -> Self {
        for c in &mut self.cases {
            for r in &mut c.raw {
                let cut = crate::domain::text::cut(r, max);
                if cut > 0 {
                    r.push_str(&format!("\n… ({cut} more bytes in the stored run)"));
                }
            }
        }
        self
    }

    pub fn passed(&self) -> bool {
        self.cases.iter().all(|c| c.pass || c.skipped)
    }

    /// The cases that ran and failed, by name.
    pub fn failed_cases(&self) -> Vec<String> {
        self.cases
            .iter()
            .filter(|c| !c.pass && !c.skipped)
            .map(|c| c.case.clone())
            .collect()
    }
}

/// What a case expects of an answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Expect {
    /// Exactly this many calls (`Some(0)`: none at all).
    pub calls: Option<usize>,
    /// At least one call (required / named choice).
    pub at_least_one_call: bool,
    pub tool: Option<String>,
    /// Expected argument values (compared as parsed JSON, per call in order).
    pub args: Vec<Value>,
    /// Allowed finish reasons.
    pub finish: Vec<String>,
    pub content_contains: Option<String>,
}

/// Checks one answer against the tools offered and what the case expects.
pub fn check(answer: &Answer, tools: &[Value], expect: &Expect) -> Vec<Failure> {
    let mut out = Vec::new();
    if answer.streamed {
        if answer.role_deltas != 1 {
            out.push(fail(
                "role-deltas",
                format!("{} role deltas, expected 1", answer.role_deltas),
            ));
        }
        if answer.finish_reasons.len() != 1 {
            out.push(fail(
                "finish-count",
                format!("{} chunks set finish_reason, expected 1", answer.finish_reasons.len()),
            ));
        }
    }
    if let Some(f) = answer.finish_reasons.last() {
        if !expect.finish.is_empty() && !expect.finish.contains(f) {
            out.push(fail(
                "finish-reason",
                format!("finish_reason {f:?}, expected one of {:?}", expect.finish),
            ));
        }
    } else {
        out.push(fail("finish-reason", "no finish_reason"));
    }
    for field in [("content", &answer.content), ("reasoning", &answer.reasoning)] {
        if let Some(m) = MARKUP.iter().find(|m| field.1.contains(*m)) {
            out.push(fail("markup-leak", format!("{m} in {}", field.0)));
        }
    }
    if let Some(n) = expect.calls {
        if answer.calls.len() != n {
            out.push(fail(
                "call-count",
                format!("{} tool calls, expected {n}", answer.calls.len()),
            ));
        }
    }
    if expect.at_least_one_call && answer.calls.is_empty() {
        out.push(fail("call-count", "no tool call"));
    }
    if !answer.calls.is_empty() && !answer.content.trim().is_empty() && expect.calls.is_some_and(|n| n > 0) {
        out.push(fail(
            "content-with-calls",
            format!(
                "content beside the calls: {:?}",
                answer.content.chars().take(80).collect::<String>()
            ),
        ));
    }
    let mut ids = std::collections::HashSet::new();
    for (i, call) in answer.calls.iter().enumerate() {
        match &call.id {
            Some(id) if !id.is_empty() => {
                if !ids.insert(id.clone()) {
                    out.push(fail("duplicate-id", id.clone()));
                }
            }
            _ => out.push(fail("missing-id", format!("call {i} has no id"))),
        }
        if answer.streamed && (call.id_fragments != 1 || call.name_fragments != 1) {
            out.push(fail(
                "fragments",
                format!(
                    "call {i}: id sent {} times, name {} times",
                    call.id_fragments, call.name_fragments
                ),
            ));
        }
        let name = call.name.clone().unwrap_or_default();
        if let Some(want) = &expect.tool {
            if &name != want {
                out.push(fail("wrong-name", format!("called {name:?}, expected {want:?}")));
            }
        }
        let tool = tools
            .iter()
            .find(|t| t.pointer("/function/name").and_then(|n| n.as_str()) == Some(name.as_str()));
        let Some(tool) = tool else {
            out.push(fail("unknown-tool", format!("{name:?} was not offered")));
            continue;
        };
        let args: Value = match serde_json::from_str(if call.arguments.trim().is_empty() {
            "{}"
        } else {
            &call.arguments
        }) {
            Ok(v) => v,
            Err(e) => {
                out.push(fail(
                    "args-not-json",
                    format!(
                        "call {i}: {e}: {:?}",
                        call.arguments.chars().take(80).collect::<String>()
                    ),
                ));
                continue;
            }
        };
        let schema = tool.pointer("/function/parameters").cloned().unwrap_or(Value::Null);
        for problem in validate(&args, &schema) {
            out.push(fail("args-schema", format!("call {i}: {problem}")));
        }
        if let Some(want) = expect.args.get(i) {
            if &args != want {
                out.push(fail("args-value", format!("call {i}: {args}, expected {want}")));
            }
        }
    }
    if let Some(needle) = &expect.content_contains {
        if !answer.content.contains(needle.as_str()) {
            out.push(fail(
                "content-missing",
                format!(
                    "content lacks {needle:?}: {:?}",
                    answer.content.chars().take(80).collect::<String>()
                ),
            ));
        }
    }
    out
}

/// Validates arguments against a tool's JSON schema: object type, required keys, no
/// unexpected keys, property types and enums (BFCL's missing_required / unexpected_param /
/// type_error / value_error).
pub fn validate(args: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(obj) = args.as_object() else {
        return vec![format!("arguments are {}, not an object", type_name(args))];
    };
    let props = schema.get("properties").and_then(|p| p.as_object());
    for req in schema
        .get("required")
        .and_then(|r| r.as_array())
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str())
    {
        if !obj.contains_key(req) {
            out.push(format!("missing required `{req}`"));
        }
    }
    for (k, v) in obj {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            out.push(format!("unexpected parameter `{k}`"));
            continue;
        };
        if let Some(t) = p.get("type").and_then(|t| t.as_str()) {
            let ok = match t {
                "string" => v.is_string(),
                "integer" => v.is_i64() || v.is_u64(),
                "number" => v.is_number(),
                "boolean" => v.is_boolean(),
                "array" => v.is_array(),
                "object" => v.is_object(),
                _ => true,
            };
            if !ok {
                out.push(format!("`{k}` is {}, expected {t}", type_name(v)));
            }
        }
        if let Some(choices) = p.get("enum").and_then(|e| e.as_array()) {
            if !choices.contains(v) {
                out.push(format!("`{k}` = {v} is not one of {}", Value::Array(choices.clone())));
            }
        }
    }
    out
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The arguments of each call, parsed (unparseable ones as their raw string).
pub fn parsed_args(answer: &Answer) -> Vec<Value> {
    answer
        .calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/fixtures")
            .join(name);
        let text = std::fs::read_to_string(p).unwrap();
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn weather_tool(name: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}})
    }

    #[test]
    fn captured_nonstream_answer_passes() {
        let body: Value = serde_json::from_str(&fixture("toolcall-ok-nonstream-vllm-llama31.json")).unwrap();
        let a = from_json(&body).unwrap();
        let expect = Expect {
            calls: Some(1),
            tool: Some("get_weather".into()),
            args: vec![json!({"city": "New York"})],
            finish: vec!["tool_calls".into()],
            ..Default::default()
        };
        assert_eq!(check(&a, &[weather_tool("get_weather")], &expect), vec![]);
    }

    #[test]
    fn captured_stream_answer_passes() {
        let a = from_sse(&fixture("toolcall-ok-stream-vllm.sse")).unwrap();
        assert_eq!(
            parsed_args(&a),
            vec![json!({"location": "Boston, MA", "unit": "fahrenheit"})]
        );
        let expect = Expect {
            calls: Some(1),
            tool: Some("get_current_weather".into()),
            finish: vec!["tool_calls".into()],
            ..Default::default()
        };
        assert_eq!(check(&a, &[weather_tool("get_current_weather")], &expect), vec![]);
    }

    #[test]
    fn captured_broken_stream_fails_with_named_checks() {
        // Truncated capture: no role delta, no [DONE], name but no arguments.
        let text = fixture("toolcall-broken-stream-no-arguments.sse");
        assert_eq!(from_sse(&text).unwrap_err().check, "no-done");
        let a = from_sse(&format!("{text}\ndata: [DONE]\n")).unwrap();
        let tool = json!({"type": "function", "function": {"name": "getWorkspaceFileList", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}});
        let failures = check(
            &a,
            &[tool],
            &Expect {
                calls: Some(1),
                finish: vec!["tool_calls".into()],
                ..Default::default()
            },
        );
        let codes: Vec<&str> = failures.iter().map(|f| f.check.as_str()).collect();
        assert!(codes.contains(&"role-deltas"), "{codes:?}");
        assert!(codes.contains(&"args-schema"), "missing required path: {codes:?}");
    }

    #[test]
    fn markup_in_content_and_schema_errors_are_caught() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": "<tool_call>{\"name\":\"f\"}</tool_call>", "tool_calls": []}, "finish_reason": "stop"}]});
        let a = from_json(&body).unwrap();
        let codes: Vec<String> = check(
            &a,
            &[],
            &Expect {
                calls: Some(1),
                ..Default::default()
            },
        )
        .into_iter()
        .map(|f| f.check)
        .collect();
        assert_eq!(codes, vec!["markup-leak", "call-count"]);
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}, "u": {"type": "string", "enum": ["a"]}}, "required": ["n"]});
        assert_eq!(validate(&json!({"n": "1", "u": "b", "x": 1}), &schema).len(), 3);
        assert_eq!(validate(&json!({"u": "a"}), &schema), vec!["missing required `n`"]);
        assert!(validate(&json!({"n": 2}), &schema).is_empty());
        assert_eq!(validate(&json!([1]), &schema).len(), 1);
    }

    #[test]
    fn a_page_gets_the_raw_answers_cut() {
        let long = "é".repeat(5000);
        let report = SmokeReport {
            url: "u".into(),
            model: "m".into(),
            cases: vec![CaseResult {
                case: "c".into(),
                pass: false,
                skipped: false,
                failures: Vec::new(),
                raw: vec![long.clone(), "short".into()],
            }],
        };
        let page = report.for_page(PAGE_RAW_BYTES);
        let raw = &page.cases[0].raw;
        assert!(raw[0].len() < PAGE_RAW_BYTES + 64, "{}", raw[0].len());
        assert!(raw[0].ends_with("more bytes in the stored run)"));
        assert_eq!(raw[1], "short");
    }
}
