//! Prometheus text exposition (0.0.4 and 1.0.0), parsed line by line.
//!
//! Engines' names contain colons (`vllm:num_requests_running`) and their label values can hold
//! quotes, backslashes and braces; published parser crates drop or choke on some of these. A
//! bad line is reported with its number and skipped, never fatal for the rest of the body.

use serde::{Deserialize, Serialize};

/// One sample line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
    pub timestamp_ms: Option<i64>,
}

impl Sample {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A line of the body, as the parser understood it.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    Help { name: String, text: String },
    Type { name: String, kind: String },
    Comment,
    Blank,
    Sample(Sample),
}

/// Why a line could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct LineError {
    pub line: usize,
    pub reason: &'static str,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// Parses a float as Prometheus writes it (`+Inf`, `-Inf`, `NaN`, exponents).
pub fn parse_value(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" | "inf" | "+inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        "NaN" | "nan" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// Parses one line (without its newline).
pub fn parse_line(text: &str, line: usize) -> Result<Line, LineError> {
    let err = |reason| LineError { line, reason };
    let t = text.trim_end_matches('\r');
    if t.trim().is_empty() {
        return Ok(Line::Blank);
    }
    if let Some(rest) = t.strip_prefix('#') {
        let rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("HELP ") {
            let (name, text) = r.split_once(' ').unwrap_or((r, ""));
            return Ok(Line::Help {
                name: name.to_string(),
                text: text.to_string(),
            });
        }
        if let Some(r) = rest.strip_prefix("TYPE ") {
            let (name, kind) = r.split_once(' ').ok_or(err("TYPE without a type"))?;
            return Ok(Line::Type {
                name: name.to_string(),
                kind: kind.trim().to_string(),
            });
        }
        return Ok(Line::Comment);
    }
    parse_sample(t, line).map(Line::Sample)
}

/// Parses a sample line (not a comment, not blank). Byte-wise: names and label keys are ASCII
/// by the format, and label values are sliced whole unless they contain an escape.
fn parse_sample(t: &str, line: usize) -> Result<Sample, LineError> {
    let err = |reason| LineError { line, reason };
    let b = t.as_bytes();
    if !b.first().is_some_and(|c| is_name_start(*c as char)) {
        return Err(err("a sample must start with a metric name"));
    }
    let end = b.iter().position(|c| !is_name_char(*c as char)).unwrap_or(b.len());
    let name = t[..end].to_string();
    let mut labels = Vec::new();
    let mut rest = &t[end..];
    if let Some(body) = rest.strip_prefix('{') {
        let mut i = 0;
        let b = body.as_bytes();
        loop {
            while i < b.len() && (b[i] == b' ' || b[i] == b',') {
                i += 1;
            }
            if i >= b.len() {
                return Err(err("unterminated label set"));
            }
            if b[i] == b'}' {
                i += 1;
                break;
            }
            let ks = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if ks == i {
                return Err(err("bad label name"));
            }
            let key = body[ks..i].to_string();
            while i < b.len() && b[i] == b' ' {
                i += 1;
            }
            if i >= b.len() || b[i] != b'=' {
                return Err(err("label without ="));
            }
            i += 1;
            while i < b.len() && b[i] == b' ' {
                i += 1;
            }
            if i >= b.len() || b[i] != b'"' {
                return Err(err("label value must be quoted"));
            }
            i += 1;
            // Fast path: the value up to the next quote has no escape in it.
            let stop = b[i..].iter().position(|c| *c == b'"' || *c == b'\\');
            let value = match stop {
                Some(n) if b[i + n] == b'"' => {
                    let v = body[i..i + n].to_string();
                    i += n + 1;
                    v
                }
                _ => {
                    let (v, used) = unescape_value(&body[i..]).ok_or(err("unterminated label value"))?;
                    i += used;
                    v
                }
            };
            labels.push((key, value));
        }
        rest = &body[i..];
    }
    let mut parts = rest.split_ascii_whitespace();
    let value = parts.next().ok_or(err("sample without a value"))?;
    let value = parse_value(value).ok_or(err("sample value is not a number"))?;
    let timestamp_ms = match parts.next() {
        Some(ts) => Some(ts.parse::<i64>().map_err(|_| err("timestamp is not an integer"))?),
        None => None,
    };
    if parts.next().is_some() {
        return Err(err("text after the timestamp"));
    }
    Ok(Sample {
        name,
        labels,
        value,
        timestamp_ms,
    })
}

/// A quoted label value with escapes, from just after its opening quote: the value and how
/// many bytes it took, closing quote included. `None` when it never closes.
fn unescape_value(s: &str) -> Option<(String, usize)> {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((j, c)) = chars.next() {
        match c {
            '"' => return Some((value, j + 1)),
            '\\' => match chars.next()? {
                (_, 'n') => value.push('\n'),
                (_, '\\') => value.push('\\'),
                (_, '"') => value.push('"'),
                (_, other) => {
                    value.push('\\');
                    value.push(other);
                }
            },
            other => value.push(other),
        }
    }
    None
}

/// The samples of a body plus the lines that could not be parsed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub samples: Vec<Sample>,
    pub types: Vec<(String, String)>,
    pub errors: Vec<LineError>,
}

/// Parses a whole body, skipping and counting bad lines.
pub fn parse(body: &str) -> Parsed {
    let mut out = Parsed {
        samples: Vec::with_capacity(body.len() / 96),
        ..Default::default()
    };
    for (i, l) in body.lines().enumerate() {
        let t = l.trim_end_matches('\r');
        let result = match t.as_bytes().first() {
            // Only TYPE comments matter here; HELP text is not worth an allocation.
            Some(b'#') if !t[1..].trim_start().starts_with("TYPE ") => continue,
            Some(b'#') => parse_line(t, i + 1),
            Some(_) if !t.trim_start().is_empty() => parse_sample(t, i + 1).map(Line::Sample),
            _ => continue,
        };
        match result {
            Ok(Line::Sample(s)) => out.samples.push(s),
            Ok(Line::Type { name, kind }) => out.types.push((name, kind)),
            Ok(_) => {}
            Err(e) => out.errors.push(e),
        }
    }
    out
}

/// Escapes a label value for exposition.
pub fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Formats a value the way prometheus_client does (`12.0`, `1.5e+09`, `+Inf`).
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colon_names_escaped_labels_and_braces() {
        let body = "# HELP vllm:x X\n# TYPE vllm:x gauge\nvllm:x{engine=\"0\",model_name=\"a \\\"b\\\" {c}\"} 12.0\nplain_total 3 1700000000000\nbad line\nh_bucket{le=\"+Inf\"} +Inf\n";
        let p = parse(body);
        assert_eq!(p.samples.len(), 3);
        assert_eq!(p.samples[0].name, "vllm:x");
        assert_eq!(p.samples[0].label("model_name"), Some("a \"b\" {c}"));
        assert_eq!(p.samples[1].timestamp_ms, Some(1_700_000_000_000));
        assert!(p.samples[2].value.is_infinite());
        assert_eq!(
            p.errors,
            vec![LineError {
                line: 5,
                reason: "sample value is not a number"
            }]
        );
        assert_eq!(p.types, vec![("vllm:x".to_string(), "gauge".to_string())]);
    }

    #[test]
    fn bad_lines_never_panic() {
        for l in [
            "{",
            "x{",
            "x{a}",
            "x{a=}",
            "x{a=\"",
            "x{a=\"v\"",
            "x{a=\"v\"} ",
            "x 1 2 3",
            "x{=\"v\"} 1",
            "é 1",
            "x{a=\"\\",
        ] {
            assert!(parse_line(l, 1).is_err(), "{l}");
        }
    }

    #[test]
    fn value_formatting_matches_prometheus_client() {
        assert_eq!(format_value(12.0), "12.0");
        assert_eq!(format_value(0.25), "0.25");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arbitrary_lines_never_panic(line in "\\PC{0,80}") {
            let _ = parse_line(&line, 1);
        }

        #[test]
        fn escaped_label_values_parse_back(v in "\\PC{0,40}", value in -1.0e9f64..1.0e9) {
            let line = format!("vllm:x{{model_name=\"{}\"}} {}", escape_label(&v), format_value(value));
            let Line::Sample(s) = parse_line(&line, 1).unwrap() else { panic!("not a sample") };
            prop_assert_eq!(s.label("model_name"), Some(v.as_str()));
            prop_assert!((s.value - value).abs() <= value.abs() * 1e-12);
        }
    }
}
