//! `KEY=VALUE` files, the format of the runbook's `profiles/<name>.env`.
//!
//! The toolbox sourced these files from a shell; the console never does. Quoting follows the
//! subset a shell and a human agree on: bare words, `'literal'` and `"escaped \" \\"`. Anything
//! else is an error that names the line, so a typo never silently becomes a different value.

use thiserror::Error;

/// One `KEY=VALUE` assignment with the line it came from, kept for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub line: usize,
    pub key: String,
    pub value: String,
}

/// Why a line of an env file could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EnvFileError {
    #[error("line {line}: expected KEY=VALUE")]
    NotAnAssignment { line: usize },
    #[error("line {line}: `{key}` is not a valid key (letters, digits and _; not starting with a digit)")]
    BadKey { line: usize, key: String },
    #[error("line {line}: unterminated quote in the value of {key}")]
    UnterminatedQuote { line: usize, key: String },
    #[error("line {line}: text after the closing quote in the value of {key}")]
    TrailingText { line: usize, key: String },
    #[error("line {line}: {key} is set twice (first on line {first})")]
    Duplicate { line: usize, key: String, first: usize },
}

impl EnvFileError {
    /// The key the line assigns, when the line got that far.
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::NotAnAssignment { .. } => None,
            Self::BadKey { key, .. }
            | Self::UnterminatedQuote { key, .. }
            | Self::TrailingText { key, .. }
            | Self::Duplicate { key, .. } => Some(key),
        }
    }

    /// The message without its `line N:` prefix (for reports that show the line already).
    pub fn message(&self) -> String {
        let text = self.to_string();
        match text.split_once(": ") {
            Some((prefix, rest)) if prefix.starts_with("line ") => rest.to_string(),
            _ => text,
        }
    }

    /// The 1-based line the error is on.
    pub fn line(&self) -> usize {
        match self {
            Self::NotAnAssignment { line }
            | Self::BadKey { line, .. }
            | Self::UnterminatedQuote { line, .. }
            | Self::TrailingText { line, .. }
            | Self::Duplicate { line, .. } => *line,
        }
    }
}

fn valid_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses an env file; comments (`#`) and blank lines are skipped, every other line must be an
/// assignment, and a key may appear once.
pub fn parse(text: &str) -> Result<Vec<Assignment>, EnvFileError> {
    let mut out: Vec<Assignment> = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, rest)) = trimmed.split_once('=') else {
            return Err(EnvFileError::NotAnAssignment { line });
        };
        let key = key.trim_end();
        if !valid_key(key) {
            return Err(EnvFileError::BadKey {
                line,
                key: key.to_string(),
            });
        }
        let value = parse_value(rest, line, key)?;
        if let Some(first) = out.iter().find(|a| a.key == key) {
            return Err(EnvFileError::Duplicate {
                line,
                key: key.to_string(),
                first: first.line,
            });
        }
        out.push(Assignment {
            line,
            key: key.to_string(),
            value,
        });
    }
    Ok(out)
}

fn parse_value(rest: &str, line: usize, key: &str) -> Result<String, EnvFileError> {
    let unterminated = || EnvFileError::UnterminatedQuote {
        line,
        key: key.to_string(),
    };
    let trailing = |after: &str| {
        let after = after.trim();
        if after.is_empty() || after.starts_with('#') {
            Ok(())
        } else {
            Err(EnvFileError::TrailingText {
                line,
                key: key.to_string(),
            })
        }
    };
    if let Some(body) = rest.strip_prefix('\'') {
        let end = body.find('\'').ok_or_else(unterminated)?;
        trailing(&body[end + 1..])?;
        return Ok(body[..end].to_string());
    }
    if let Some(body) = rest.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    trailing(&body[i + 1..])?;
                    return Ok(value);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => value.push(other),
                    None => return Err(unterminated()),
                },
                other => value.push(other),
            }
        }
        return Err(unterminated());
    }
    // A bare value ends at an unquoted ` #` comment.
    let value = match rest.find(" #") {
        Some(pos) => &rest[..pos],
        None => rest,
    };
    Ok(value.trim().to_string())
}

/// Quotes a value so that [`parse`] reads it back unchanged; bare when that is unambiguous.
pub fn quote(value: &str) -> String {
    let bare = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,+@%".contains(c));
    if bare {
        value.to_string()
    } else if !value.contains('\'') && !value.contains('\n') {
        format!("'{value}'")
    } else {
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
        format!("\"{escaped}\"")
    }
}

/// Why a command-line fragment does not split into words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum WordsError {
    #[error("unterminated ' quote")]
    SingleQuote,
    #[error("unterminated \" quote")]
    DoubleQuote,
    #[error("trailing backslash")]
    TrailingBackslash,
}

/// Splits a command-line fragment (a profile's `EXTRA_ARGS`) into words without a shell:
/// whitespace separates, quotes group, nothing is expanded.
pub fn split_words(text: &str) -> Result<Vec<String>, WordsError> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => current.push(ch),
                        None => return Err(WordsError::SingleQuote),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch) => current.push(ch),
                            None => return Err(WordsError::DoubleQuote),
                        },
                        Some(ch) => current.push(ch),
                        None => return Err(WordsError::DoubleQuote),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(ch) => current.push(ch),
                    None => return Err(WordsError::TrailingBackslash),
                }
            }
            other => {
                in_word = true;
                current.push(other);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
}

/// Joins words so that [`split_words`] returns them unchanged.
pub fn join_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:,=+@%".contains(c));
            if plain {
                w.clone()
            } else {
                format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bare_quoted_and_comments() {
        let text = "# profile\nA=1\nB='x y' # note\nC=\"q\\\"z\"\n\nD=plain # trailing\nE=\n";
        let got = parse(text).unwrap();
        let pairs: Vec<_> = got.iter().map(|a| (a.key.as_str(), a.value.as_str())).collect();
        assert_eq!(
            pairs,
            vec![("A", "1"), ("B", "x y"), ("C", "q\"z"), ("D", "plain"), ("E", "")]
        );
        assert_eq!(got[1].line, 3);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            parse("A=1\nnonsense\n").unwrap_err(),
            EnvFileError::NotAnAssignment { line: 2 }
        );
        assert_eq!(parse("A=1\nA=2\n").unwrap_err().line(), 2);
        assert!(matches!(
            parse("1A=1").unwrap_err(),
            EnvFileError::BadKey { line: 1, .. }
        ));
        assert!(matches!(
            parse("A='x").unwrap_err(),
            EnvFileError::UnterminatedQuote { line: 1, .. }
        ));
        assert!(matches!(
            parse("A='x' y").unwrap_err(),
            EnvFileError::TrailingText { line: 1, .. }
        ));
    }

    #[test]
    fn quote_round_trips() {
        for v in [
            "",
            "plain",
            "a b",
            "{\"method\":\"eagle3\"}",
            "it's",
            "back\\slash \"q\"",
            "line\nbreak",
        ] {
            let text = format!("K={}\n", quote(v));
            assert_eq!(parse(&text).unwrap()[0].value, v, "value {v:?} via {text:?}");
        }
    }

    #[test]
    fn words_round_trip() {
        let words = split_words(r#"--a 1 --json '{"k": 1}' "x y" z\ w"#).unwrap();
        assert_eq!(words, vec!["--a", "1", "--json", "{\"k\": 1}", "x y", "z w"]);
        assert_eq!(split_words(&join_words(&words)).unwrap(), words);
        assert!(split_words("'open").is_err());
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_value_survives_quoting(v in "\\PC*") {
            let text = format!("K={}\n", quote(&v));
            prop_assert_eq!(&parse(&text).unwrap()[0].value, &v.trim_end_matches('\r').to_string());
        }

        #[test]
        fn any_words_survive_joining(words in proptest::collection::vec("\\PC*", 0..6)) {
            prop_assert_eq!(split_words(&join_words(&words)).unwrap(), words);
        }

        #[test]
        fn parsing_arbitrary_text_never_panics(text in "\\PC*(\n\\PC*){0,5}") {
            let _ = parse(&text);
            let _ = split_words(&text);
        }
    }
}

/// Lines removed (`-`) and added (`+`) between two env files: what a profile change did.
pub fn env_diff(old: &str, new: &str) -> Vec<String> {
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let mut out: Vec<String> = old_lines
        .iter()
        .filter(|l| !new_lines.contains(l))
        .map(|l| format!("-{l}"))
        .collect();
    out.extend(
        new_lines
            .iter()
            .filter(|l| !old_lines.contains(l))
            .map(|l| format!("+{l}")),
    );
    out
}

/// One key a profile change touched: its value before and after (`None`: not set).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, crate::decode::FromWire)]
pub struct KeyChange {
    pub key: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The keys whose values differ between two env files, in the order the old file has them,
/// then the keys only the new one sets: what a reviewer reads as `TENSOR_PARALLEL 1 → 2`.
/// Quoting and comments do not count (the values are compared as parsed); `None` when either
/// file does not parse (the line diff still shows what was written).
pub fn key_changes(old: &str, new: &str) -> Option<Vec<KeyChange>> {
    let (old, new) = (parse(old).ok()?, parse(new).ok()?);
    let value = |list: &[Assignment], key: &str| list.iter().find(|a| a.key == key).map(|a| a.value.clone());
    let mut keys: Vec<&str> = old.iter().map(|a| a.key.as_str()).collect();
    keys.extend(
        new.iter()
            .map(|a| a.key.as_str())
            .filter(|k| !old.iter().any(|a| a.key == *k)),
    );
    Some(
        keys.into_iter()
            .filter_map(|key| {
                let (before, after) = (value(&old, key), value(&new, key));
                (before != after).then(|| KeyChange {
                    key: key.to_string(),
                    before,
                    after,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod key_change_tests {
    use super::*;

    #[test]
    fn changed_added_and_removed_keys_in_reading_order() {
        let old = "ENGINE=vllm\nTENSOR_PARALLEL=1\n# memory\nMEM_FRACTION=0.9\nEXTRA_ARGS=--x\n";
        let new = "ENGINE=vllm\nTENSOR_PARALLEL=2\nMEM_FRACTION='0.9'\nCONTEXT_LENGTH=32768\n";
        let changes = key_changes(old, new).unwrap();
        let row = |k: &str, b: Option<&str>, a: Option<&str>| KeyChange {
            key: k.into(),
            before: b.map(Into::into),
            after: a.map(Into::into),
        };
        assert_eq!(
            changes,
            vec![
                row("TENSOR_PARALLEL", Some("1"), Some("2")),
                row("EXTRA_ARGS", Some("--x"), None),
                row("CONTEXT_LENGTH", None, Some("32768")),
            ]
        );
        assert_eq!(key_changes(old, old), Some(vec![]));
        assert_eq!(key_changes(old, "NOT AN ASSIGNMENT"), None);
    }
}
