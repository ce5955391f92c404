//! What the simulated model answers: a deterministic stand-in for a well-behaved
//! tool-calling model, so smoke tests have a known-good engine to pass on.
//!
//! It calls a tool when the user's message is about it (a word of the tool's name appears),
//! when `tool_choice` is `required` or names it; fills arguments from the message (places as
//! "City, ST", enum values mentioned, the search phrase); makes one call per place for
//! parallel requests; and after a tool result answers with that result. Answers depend only
//! on the request, so streamed and whole answers are equal.

use serde_json::{json, Map, Value};

/// The planned answer: tool calls (name, arguments JSON) or text.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub calls: Vec<(String, String)>,
    pub text: String,
}

fn user_text(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(|r| r.as_str()) == Some("user"))
        .and_then(|m| m.get("content"))
        .map(|c| match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

/// "City, ST" pairs in the message, in order ("Dallas, TX and Orlando, FL").
pub fn places(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let Some(city) = w.strip_suffix(',') else { continue };
        let Some(state) = words
            .get(i + 1)
            .map(|s| s.trim_matches(|c: char| !c.is_ascii_alphabetic()))
        else {
            continue;
        };
        if state.len() == 2
            && state.chars().all(|c| c.is_ascii_uppercase())
            && city.chars().next().is_some_and(char::is_uppercase)
        {
            // Multi-word cities: take preceding capitalised words too ("New York, NY").
            let mut name = vec![city];
            let mut j = i;
            while j > 0 && words[j - 1].chars().next().is_some_and(char::is_uppercase) && !words[j - 1].ends_with(',') {
                j -= 1;
                name.insert(0, words[j]);
            }
            out.push((name.join(" "), state.to_string()));
        }
    }
    out
}

fn value_for(name: &str, prop: &Value, text: &str, place: Option<&(String, String)>) -> Value {
    let lower = text.to_lowercase();
    if let Some(choices) = prop.get("enum").and_then(|e| e.as_array()) {
        let mentioned = choices
            .iter()
            .find(|c| c.as_str().is_some_and(|s| lower.contains(&s.to_lowercase())));
        return mentioned.or(choices.first()).cloned().unwrap_or(Value::Null);
    }
    match prop.get("type").and_then(|t| t.as_str()).unwrap_or("string") {
        "integer" => json!(1),
        "number" => json!(1.5),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => arguments(prop, text, place),
        _ => {
            let n = name.to_lowercase();
            if n.contains("city") || n.contains("location") {
                json!(place.map(|p| p.0.clone()).unwrap_or_else(|| "Paris".into()))
            } else if n.contains("state") {
                json!(place.map(|p| p.1.clone()).unwrap_or_else(|| "CA".into()))
            } else if n.contains("search") || n.contains("query") || n.contains("term") {
                let phrase = ["search for ", "search the web for ", "look up ", "about "]
                    .iter()
                    .find_map(|k| {
                        lower
                            .find(k)
                            .map(|p| text[p + k.len()..].trim_end_matches(['.', '?', '!']).to_string())
                    });
                json!(phrase.unwrap_or_else(|| text.trim_end_matches(['.', '?', '!']).to_string()))
            } else {
                json!("example")
            }
        }
    }
}

/// Arguments for a tool's parameters from the message.
pub fn arguments(schema: &Value, text: &str, place: Option<&(String, String)>) -> Value {
    let mut out = Map::new();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    for (name, prop) in schema
        .get("properties")
        .and_then(|p| p.as_object())
        .into_iter()
        .flatten()
    {
        if required.is_empty() || required.contains(&name.as_str()) {
            out.insert(name.clone(), value_for(name, prop, text, place));
        }
    }
    Value::Object(out)
}

/// Whether a message is about a tool: a word of its name (other than verbs like get/set).
fn about(tool_name: &str, text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains(&tool_name.to_lowercase())
        || tool_name
            .split(['_', '-'])
            .filter(|w| w.len() > 3 && !["get", "set", "current", "fetch", "list"].contains(w))
            .any(|w| lower.contains(&w.to_lowercase()))
}

/// The answer to a chat request.
pub fn plan(body: &Value) -> Plan {
    let messages = body
        .get("messages")
        .and_then(|m| m.as_array())
        .cloned()
        .unwrap_or_default();
    let text = user_text(&messages);
    let last = messages.last();
    if last.and_then(|m| m.get("role")).and_then(|r| r.as_str()) == Some("tool") {
        let result = last
            .and_then(|m| m.get("content"))
            .and_then(|c| c.as_str())
            .unwrap_or("");
        return Plan {
            calls: vec![],
            text: format!("According to the tool, it is {result}."),
        };
    }
    let tools: Vec<Value> = body
        .get("tools")
        .and_then(|t| t.as_array())
        .cloned()
        .unwrap_or_default();
    let choice = body.get("tool_choice").cloned().unwrap_or(json!("auto"));
    let fallback = Plan {
        calls: vec![],
        text: format!("Here is a short answer to: {}", text.trim()),
    };
    if tools.is_empty() || choice.as_str() == Some("none") {
        return fallback;
    }
    let name_of = |t: &Value| {
        t.pointer("/function/name")
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .to_string()
    };
    let chosen: Vec<&Value> = if let Some(named) = choice.pointer("/function/name").and_then(|n| n.as_str()) {
        tools.iter().filter(|t| name_of(t) == named).take(1).collect()
    } else {
        let relevant: Vec<&Value> = tools.iter().filter(|t| about(&name_of(t), &text)).collect();
        match (relevant.is_empty(), choice.as_str()) {
            (false, _) => relevant,
            (true, Some("required")) => tools.iter().take(1).collect(),
            _ => return fallback,
        }
    };
    let parallel = body
        .get("parallel_tool_calls")
        .and_then(|p| p.as_bool())
        .unwrap_or(true);
    let found = places(&text);
    let mut calls = Vec::new();
    for tool in chosen {
        let schema = tool.pointer("/function/parameters").cloned().unwrap_or(json!({}));
        let wants_place =
            schema.pointer("/properties/city").is_some() || schema.pointer("/properties/location").is_some();
        if wants_place && found.len() > 1 && parallel {
            for p in &found {
                calls.push((name_of(tool), arguments(&schema, &text, Some(p)).to_string()));
            }
        } else {
            calls.push((name_of(tool), arguments(&schema, &text, found.first()).to_string()));
        }
    }
    if !parallel {
        calls.truncate(1);
    }
    Plan {
        calls,
        text: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weather() -> Value {
        json!({"type": "function", "function": {"name": "get_current_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "state": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city", "state", "unit"]}}})
    }

    fn search() -> Value {
        json!({"type": "function", "function": {"name": "web_search", "parameters": {"type": "object", "properties": {"search_term": {"type": "string"}}, "required": ["search_term"]}}})
    }

    fn ask(text: &str, extra: Value) -> Plan {
        let mut body = json!({"tools": [weather(), search()], "messages": [{"role": "user", "content": text}]});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        plan(&body)
    }

    #[test]
    fn calls_the_relevant_tool_with_arguments_from_the_message() {
        let p = ask("What is the weather in Dallas, TX in Fahrenheit?", json!({}));
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].0, "get_current_weather");
        let args: Value = serde_json::from_str(&p.calls[0].1).unwrap();
        assert_eq!(args, json!({"city": "Dallas", "state": "TX", "unit": "fahrenheit"}));
        let p = ask("Please search for rust async runtimes.", json!({}));
        assert_eq!(
            serde_json::from_str::<Value>(&p.calls[0].1).unwrap(),
            json!({"search_term": "rust async runtimes"})
        );
    }

    #[test]
    fn parallel_places_none_required_and_tool_results() {
        let p = ask(
            "What is the weather in Dallas, TX and Orlando, FL in celsius?",
            json!({}),
        );
        assert_eq!(p.calls.len(), 2);
        assert!(p.calls[1].1.contains("Orlando"));
        assert_eq!(
            ask(
                "What is the weather in Dallas, TX and Orlando, FL?",
                json!({"parallel_tool_calls": false})
            )
            .calls
            .len(),
            1
        );
        assert!(ask("Tell me a joke.", json!({})).calls.is_empty());
        assert!(ask("Weather in Dallas, TX?", json!({"tool_choice": "none"}))
            .calls
            .is_empty());
        assert_eq!(
            ask("Tell me a joke.", json!({"tool_choice": "required"})).calls.len(),
            1
        );
        let named = ask(
            "Tell me a joke.",
            json!({"tool_choice": {"type": "function", "function": {"name": "web_search"}}}),
        );
        assert_eq!(named.calls[0].0, "web_search");
        let body = json!({"tools": [weather()], "messages": [{"role": "user", "content": "weather?"}, {"role": "assistant", "tool_calls": []}, {"role": "tool", "tool_call_id": "x", "content": "98 degrees"}]});
        assert!(plan(&body).text.contains("98 degrees"));
        assert_eq!(places("New York, NY"), vec![("New York".to_string(), "NY".to_string())]);
    }
}
