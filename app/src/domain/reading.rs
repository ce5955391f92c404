//! A message the console shows as a locale key and its arguments, rendered in the reader's
//! language where it is read: triage readings, and the monitor's hang verdicts. The server
//! decides the key; the page (or the CLI) renders it, so a Russian operator reads Russian, and
//! English only where a log or the JSON API wants a fixed language.

use crate::i18n::{tr_args, Arg, Lang};
use serde::{Deserialize, Serialize};

/// A locale key and its arguments (numbers already formatted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Reading {
    pub key: String,
    pub args: Vec<(String, String)>,
}

impl Reading {
    pub fn new(key: &str, args: &[(&str, String)]) -> Self {
        Reading {
            key: key.to_string(),
            args: args.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }

    /// The message in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        let args: Vec<(&str, Arg)> = self
            .args
            .iter()
            .map(|(k, v)| {
                let arg = match v.parse::<u64>() {
                    Ok(n) if COUNTS.contains(&k.as_str()) => Arg::from(n),
                    _ => v.clone().into(),
                };
                (k.as_str(), arg)
            })
            .collect();
        tr_args(lang, &self.key, &args)
    }
}

/// Arguments that count something: they go to Fluent as numbers, so the Russian plural forms are
/// chosen by them (the rest are formatted text).
const COUNTS: [&str; 3] = ["starts", "count", "pending"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_pick_russian_plural_forms() {
        let one = Reading::new(
            "hang-flat",
            &[("pending", "1".into()), ("seconds", "20".into()), ("held", "0".into())],
        );
        let few = Reading::new(
            "hang-flat",
            &[("pending", "3".into()), ("seconds", "20".into()), ("held", "0".into())],
        );
        let many = Reading::new(
            "hang-flat",
            &[("pending", "7".into()), ("seconds", "20".into()), ("held", "5".into())],
        );
        assert!(one.text(Lang::Ru).contains("1 запрос "), "{}", one.text(Lang::Ru));
        assert!(few.text(Lang::Ru).contains("3 запроса"), "{}", few.text(Lang::Ru));
        assert!(many.text(Lang::Ru).contains("7 запросов"), "{}", many.text(Lang::Ru));
        assert!(
            many.text(Lang::En).contains("7 requests pending"),
            "{}",
            many.text(Lang::En)
        );
    }
}
