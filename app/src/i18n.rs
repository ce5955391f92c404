//! Translations: Fluent bundles for English and Russian, compiled into both the server and the
//! browser build, so SSR and hydration render the same words.
//!
//! The language is chosen on the server from the `lang` cookie (then `Accept-Language`) and
//! written into `<html lang>`; the browser reads it back from there, so both sides always agree.
//! Isolation marks are off: they break exact text matches in tests and chart labels.

use fluent_bundle::{concurrent::FluentBundle, FluentArgs, FluentResource, FluentValue};
use serde::{Deserialize, Serialize};
#[cfg(not(feature = "hydrate"))]
use std::sync::LazyLock;

/// A UI language.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, crate::decode::FromWire)]
pub enum Lang {
    #[default]
    En,
    Ru,
}

/// The cookie that persists the choice.
pub const LANG_COOKIE: &str = "lang";

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Ru];

    pub fn code(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Ru => "ru",
        }
    }

    /// The language's own name, shown in the switcher whatever the current language.
    pub fn native_name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::Ru => "Русский",
        }
    }

    pub fn from_code(code: &str) -> Option<Self> {
        let code = code.trim().to_ascii_lowercase();
        let primary = code.split(['-', '_', '.']).next().unwrap_or("");
        match primary {
            "en" => Some(Self::En),
            "ru" => Some(Self::Ru),
            _ => None,
        }
    }

    /// Picks the language for a request: the cookie wins, then the first supported language in
    /// `Accept-Language` (weights are respected by order; browsers send them sorted).
    pub fn negotiate(cookie_header: Option<&str>, accept_language: Option<&str>) -> Self {
        if let Some(cookies) = cookie_header {
            for pair in cookies.split(';') {
                if let Some((k, v)) = pair.trim().split_once('=') {
                    if k == LANG_COOKIE {
                        if let Some(lang) = Self::from_code(v) {
                            return lang;
                        }
                    }
                }
            }
        }
        accept_language
            .into_iter()
            .flat_map(|h| h.split(','))
            .filter_map(|part| Self::from_code(part.split(';').next().unwrap_or("")))
            .next()
            .unwrap_or_default()
    }

    /// The language for a terminal session, from `LC_ALL`, `LC_MESSAGES` or `LANG`.
    pub fn from_env_vars(get: impl Fn(&str) -> Option<String>) -> Self {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|k| get(k))
            .find(|v| !v.is_empty())
            .and_then(|v| Self::from_code(&v))
            .unwrap_or_default()
    }
}

/// The English messages, also the source of truth for which keys exist. Compiled in where
/// the server renders and the tests run; the browser's bundle carries neither language: it
/// loads its page's language (`install`) before it hydrates, so the part every page loads
/// is 25 KB (brotli) lighter and a page fetches one language, not two (issue 31).
#[cfg(not(feature = "hydrate"))]
pub const EN_FTL: &str = include_str!("../../locales/en/main.ftl");
/// The Russian messages; the runbook `roofline-incident-ru` is the reference wording.
#[cfg(not(feature = "hydrate"))]
pub const RU_FTL: &str = include_str!("../../locales/ru/main.ftl");

fn bundle(lang: &str, source: &str) -> FluentBundle<FluentResource> {
    let langid: unic_langid::LanguageIdentifier = lang.parse().unwrap_or_default();
    let mut bundle = FluentBundle::new_concurrent(vec![langid]);
    bundle.set_use_isolating(false);
    let resource = FluentResource::try_new(source.to_string()).unwrap_or_else(|(res, errors)| {
        // A broken line drops only that message; the locale test fails on it.
        debug_assert!(errors.is_empty(), "{lang} ftl errors: {errors:?}");
        res
    });
    let _ = bundle.add_resource(resource);
    bundle
}

fn index(lang: Lang) -> usize {
    match lang {
        Lang::En => 0,
        Lang::Ru => 1,
    }
}

#[cfg(not(feature = "hydrate"))]
static BUNDLES: LazyLock<[FluentBundle<FluentResource>; 2]> =
    LazyLock::new(|| [bundle("en", EN_FTL), bundle("ru", RU_FTL)]);

#[cfg(not(feature = "hydrate"))]
fn bundle_for(lang: Lang) -> Option<&'static FluentBundle<FluentResource>> {
    Some(&BUNDLES[index(lang)])
}

/// The languages the browser has loaded (`install`), each once.
#[cfg(feature = "hydrate")]
static LOADED: [std::sync::OnceLock<FluentBundle<FluentResource>>; 2] =
    [std::sync::OnceLock::new(), std::sync::OnceLock::new()];

#[cfg(feature = "hydrate")]
fn bundle_for(lang: Lang) -> Option<&'static FluentBundle<FluentResource>> {
    LOADED[index(lang)].get()
}

/// Gives the browser a language's messages (the `.ftl` text the console serves beside the
/// bundle); a second call for the same language keeps the first.
#[cfg(feature = "hydrate")]
pub fn install(lang: Lang, source: &str) {
    LOADED[index(lang)].get_or_init(|| bundle(lang.code(), source));
}

/// Whether the browser has a language's messages yet.
#[cfg(feature = "hydrate")]
pub fn installed(lang: Lang) -> bool {
    LOADED[index(lang)].get().is_some()
}

/// An argument value for a message: text or a number (numbers pick plural forms).
#[derive(Clone, Debug)]
pub enum Arg {
    Str(String),
    Num(f64),
}

impl From<&str> for Arg {
    fn from(s: &str) -> Self {
        Arg::Str(s.to_string())
    }
}
impl From<String> for Arg {
    fn from(s: String) -> Self {
        Arg::Str(s)
    }
}
impl From<u64> for Arg {
    fn from(n: u64) -> Self {
        Arg::Num(n as f64)
    }
}
impl From<usize> for Arg {
    fn from(n: usize) -> Self {
        Arg::Num(n as f64)
    }
}
impl From<i64> for Arg {
    fn from(n: i64) -> Self {
        Arg::Num(n as f64)
    }
}

/// Formats a message; a missing key renders as the key itself so a gap is visible, never blank.
pub fn tr_args(lang: Lang, key: &str, args: &[(&str, Arg)]) -> String {
    let Some(bundle) = bundle_for(lang) else {
        return key.to_string();
    };
    let Some(pattern) = bundle.get_message(key).and_then(|m| m.value()) else {
        return key.to_string();
    };
    let mut fargs = FluentArgs::new();
    for (name, value) in args {
        match value {
            Arg::Str(s) => fargs.set(*name, FluentValue::from(s.clone())),
            Arg::Num(n) => fargs.set(*name, FluentValue::from(*n)),
        }
    }
    let mut errors = Vec::new();
    bundle.format_pattern(pattern, Some(&fargs), &mut errors).into_owned()
}

/// Formats a message without arguments.
pub fn tr(lang: Lang, key: &str) -> String {
    tr_args(lang, key, &[])
}

/// Whether a key exists in a language (used by tests and by optional texts).
pub fn has(lang: Lang, key: &str) -> bool {
    bundle_for(lang).is_some_and(|b| b.has_message(key))
}

/// The message ids defined in an `.ftl` source, in file order.
pub fn keys_of(source: &str) -> Vec<String> {
    source
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_alphabetic()))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
        .collect()
}

/// Formats a duration in seconds compactly ("3 h 12 min", "45 s") in the language.
pub fn duration(lang: Lang, secs: u64) -> String {
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    if h > 0 {
        tr_args(lang, "duration-hm", &[("h", h.into()), ("m", m.into())])
    } else if m > 0 {
        tr_args(lang, "duration-ms", &[("m", m.into()), ("s", s.into())])
    } else {
        tr_args(lang, "duration-s", &[("s", s.into())])
    }
}

/// A number with `decimals` digits after the language's decimal separator (`13.90`, `13,90`).
/// Not grouped: the console's figures are read against the engines' logs, which do not group.
pub fn number(lang: Lang, v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let text = format!("{v:.decimals$}");
    match lang {
        Lang::En => text,
        Lang::Ru => text.replace('.', ","),
    }
}

/// A value with its unit in the language (`unit-ms`, `unit-gib`, …: "12 ms", "12 мс").
pub fn with_unit(lang: Lang, unit: &str, v: f64, decimals: usize) -> String {
    tr_args(lang, unit, &[("value", number(lang, v, decimals).into())])
}

/// Unix ms from the UTC times the console stores and sends (`2026-12-04T18:28:16Z`, with or
/// without fractional seconds, `T` or a space); `None` for anything else.
pub fn parse_utc(s: &str) -> Option<i64> {
    let s = s.trim();
    let s = s.strip_suffix('Z').or_else(|| s.strip_suffix(" UTC")).unwrap_or(s);
    let (date, time) = s.split_once(['T', ' '])?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, mo, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, mi) = (t.next()??, t.next()??);
    let sec = t.next().flatten().unwrap_or(0);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) || h > 23 || mi > 59 || sec > 60 || !(0..=9999).contains(&y)
    {
        return None;
    }
    let ms_frac = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(3).collect();
        if !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        format!("{digits:0<3}").parse::<i64>().ok()?
    };
    // Days since 1970-01-01 from a civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + h * 3600 + mi * 60 + sec) * 1000) + ms_frac)
}

/// `2026-12-04T18:28:16Z` from Unix ms: the `datetime` of a `<time>`.
pub fn iso_utc(ms: i64) -> String {
    let (date, hm) = civil(ms);
    format!("{date}T{hm}:{:02}Z", ms.div_euclid(1000).rem_euclid(60))
}

/// `2026-12-03 12:00 UTC` from Unix ms (no time crate in the browser build).
pub fn time_utc(ms: i64) -> String {
    let (date, hm) = civil(ms);
    format!("{date} {hm} UTC")
}

/// `2026-12-03 12:00:07 UTC` from Unix ms.
pub fn time_utc_secs(ms: i64) -> String {
    let (date, hm) = civil(ms);
    format!("{date} {hm}:{:02} UTC", ms.div_euclid(1000).rem_euclid(60))
}

/// The UTC date (`2026-12-03`) and hour and minute (`12:00`) of Unix ms.
fn civil(ms: i64) -> (String, String) {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    (
        format!("{y:04}-{mo:02}-{d:02}"),
        format!("{:02}:{:02}", rem / 3600, (rem % 3600) / 60),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn stored_times_parse_to_the_instant_they_name() {
        let ms = parse_utc("2026-12-04T18:28:16Z").unwrap();
        assert_eq!(iso_utc(ms), "2026-12-04T18:28:16Z");
        assert_eq!(time_utc_secs(ms), "2026-12-04 18:28:16 UTC");
        assert_eq!(parse_utc("2026-12-04 18:28:16"), Some(ms));
        assert_eq!(parse_utc("2026-12-04T18:28:16.250Z"), Some(ms + 250));
        assert_eq!(parse_utc("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_utc("2024-02-29T00:00:00Z").map(iso_utc).as_deref(),
            Some("2024-02-29T00:00:00Z")
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-12-04",
            "2026-12-04T25:00:00Z",
            "2026-12-04T18:28:16.x5Z",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn numbers_and_units_follow_the_language() {
        assert_eq!(number(Lang::En, 13.904, 2), "13.90");
        assert_eq!(number(Lang::Ru, 13.904, 2), "13,90");
        assert_eq!(number(Lang::Ru, f64::NAN, 1), "—");
        assert_eq!(with_unit(Lang::En, "value-ms", 212.4, 0), "212 ms");
        assert_eq!(with_unit(Lang::Ru, "value-ms", 212.4, 0), "212 мс");
        assert_eq!(with_unit(Lang::Ru, "value-gib", 55.61, 2), "55,61 ГиБ");
        assert_eq!(with_unit(Lang::Ru, "value-s", 1.5, 1), "1,5 с");
    }

    #[test]
    fn both_locales_parse_and_have_the_same_keys() {
        for (name, src) in [("en", EN_FTL), ("ru", RU_FTL)] {
            if let Err((_, errors)) = FluentResource::try_new(src.to_string()) {
                panic!("{name}: {errors:?}");
            }
        }
        let en: BTreeSet<_> = keys_of(EN_FTL).into_iter().collect();
        let ru: BTreeSet<_> = keys_of(RU_FTL).into_iter().collect();
        let only_en: Vec<_> = en.difference(&ru).collect();
        let only_ru: Vec<_> = ru.difference(&en).collect();
        assert!(
            only_en.is_empty() && only_ru.is_empty(),
            "only in en: {only_en:?}; only in ru: {only_ru:?}"
        );
        assert!(en.len() > 50);
    }

    #[test]
    fn keys_used_in_code_exist_in_both_locales() {
        let mut missing = Vec::new();
        let src_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src_dir];
        let mut used = BTreeSet::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text: String = std::fs::read_to_string(&path)
                        .unwrap()
                        .lines()
                        .filter(|l| !l.trim_start().starts_with("//"))
                        .collect::<Vec<_>>()
                        .join("\n");
                    // Literal keys passed to the translation helpers: t("key"…) and tr(lang, "key"…).
                    for marker in ["t(\"", "tr(lang, \"", "tr_args(lang, \"", "ta(\""] {
                        for (pos, _) in text.match_indices(marker) {
                            let before = text[..pos].chars().last().unwrap_or(' ');
                            if before.is_alphanumeric() || before == '_' {
                                continue;
                            }
                            let rest = &text[pos + marker.len()..];
                            if let Some(end) = rest.find('"') {
                                used.insert(rest[..end].to_string());
                            }
                        }
                    }
                }
            }
        }
        for key in &used {
            for lang in Lang::ALL {
                if !has(lang, key) {
                    missing.push(format!("{}:{key}", lang.code()));
                }
            }
        }
        assert!(missing.is_empty(), "keys used in code but missing: {missing:?}");
        assert!(used.len() > 20, "the scan found too few keys: {}", used.len());
    }

    #[test]
    #[expect(clippy::too_many_lines, reason = "one list of every key the code builds at run time")]
    fn keys_built_at_run_time_exist_in_both_locales() {
        use crate::domain::{engine::*, phases::StartupPhase, profile::IssueKind, startup_failure::FailureRow};
        let mut keys = Vec::new();
        for s in EngineState::ALL {
            keys.push(format!("state-{}", s.as_str()));
        }
        for p in StartupPhase::ALL {
            keys.push(format!("phase-{}", p.as_str()));
        }
        for a in ["serve", "stop", "restart"] {
            keys.push(format!("action-{a}"));
            keys.push(format!("confirm-{a}"));
        }
        for row in FailureRow::ALL {
            for part in ["symptom", "cause", "action"] {
                keys.push(format!("startup-failure-{}-{part}", row.id()));
            }
        }
        for case in crate::domain::toolcall::CASES {
            keys.push(format!("smoke-case-{case}"));
        }
        for check in crate::domain::toolcall::CHECKS {
            keys.push(format!("smoke-check-{check}"));
        }
        for verdict in ["pass", "fail", "skip"] {
            keys.push(format!("smoke-{verdict}"));
        }
        for kind in crate::domain::stall::HangKind::ALL {
            keys.push(kind.key().to_string());
        }
        for chart in crate::charts::ChartKind::ALL {
            keys.push(format!("chart-{}", chart.id()));
            if !chart.is_gpu() {
                keys.push(format!("chart-nosource-{}", chart.id()));
            }
            for series in chart.series() {
                keys.push(format!("series-{}", series.key));
            }
        }
        use crate::domain::triage::{Rule, Step};
        for rule in Rule::ALL {
            keys.push(format!("rule-{}-diagnosis", rule.id()));
            keys.push(format!("rule-{}-action", rule.id()));
        }
        for step in Step::ALL {
            keys.push(format!("step-{}", step.id()));
        }
        for a in ["smoke", "edit-profile", "serve", "stop", "restart"] {
            keys.push(format!("incident-action-{a}"));
        }
        for a in crate::api::JobAction::ALL {
            keys.push(format!("job-action-{}", a.as_str()));
        }
        for s in [
            crate::api::JobState::Queued,
            crate::api::JobState::Running,
            crate::api::JobState::Done,
            crate::api::JobState::Failed,
        ] {
            keys.push(format!("job-state-{}", s.as_str()));
        }
        for key in [
            "ev-health-status",
            "ev-health-none",
            "ev-probe-ok",
            "ev-probe-failed",
            "ev-state",
            "ev-queue-stuck",
            "investigator-no-row",
            "ev-stalled-phase",
            "startup-timeline-title",
            "startup-timeline-phase",
            "startup-timeline-this",
            "startup-timeline-previous",
            "vram-check-memory",
            "vram-check-calibrated",
            "ev-gpu-xid",
            "ev-gpu-ecc",
            "investigator-action",
            "ev-metrics-none",
            "ev-metrics-empty",
            "ev-waiting",
            "ev-kv",
            "ev-waiting-kv",
            "ev-preemptions",
            "ev-ttft-hit",
            "ev-tpot",
            "ev-gpu",
            "ev-gpu-none",
            "ev-gpu-foreign",
            "ev-log-line",
            "ev-log-signature",
            "ev-clients-errors",
            "ev-pin-moved",
            "ev-pin-same",
        ] {
            keys.push(key.to_string());
        }
        for (step, _) in crate::pages::profile_edit::STEPS {
            keys.push(format!("editor-step-{step}"));
        }
        for field in crate::domain::pins::PIN_FIELDS {
            keys.push(format!("pin-field-{field}"));
        }
        for id in crate::domain::upgrade::FINDING_IDS {
            keys.push(format!("upgrade-finding-{id}"));
        }
        for code in crate::domain::modelcheck::CODES {
            keys.push(format!("model-finding-{code}"));
        }
        for v in crate::domain::vram::Verdict::ALL {
            keys.push(format!("vram-verdict-{}", v.id()));
        }
        for p in crate::domain::vram_picture::Part::ALL {
            keys.push(format!("vram-part-{}", p.id()));
        }
        for range in crate::domain::series::Range::ALL {
            keys.push(format!("range-{}", range.id()));
        }
        for col in crate::pages::fleet::SortKey::ALL {
            keys.push(format!("col-{}", col.id()));
        }
        for r in crate::domain::auth::Role::ALL {
            keys.push(format!("role-{}", r.as_str()));
        }
        use crate::domain::review;
        for s in review::ChangeState::ALL {
            keys.push(format!("change-state-{}", s.as_str()));
        }
        for e in review::EVENT_KINDS {
            keys.push(format!("change-event-{e}"));
        }
        for s in review::GATE_STEPS {
            keys.push(format!("change-gate-step-{s}"));
        }
        for k in [
            "unit-ms",
            "unit-tok-s",
            "value-ms",
            "value-s",
            "value-gib",
            "value-gib-of",
            "value-w",
            "value-w-of",
            "value-mhz",
            "value-c",
            "time-utc-title",
            "advice-MODEL",
            "advice-SERVED_MODEL_NAME",
            "advice-TENSOR_PARALLEL",
            "advice-CONTEXT_LENGTH",
            "advice-MEM_FRACTION",
            "advice-TOOL_CALL_PARSER",
            "advice-REASONING_PARSER",
            "advice-QUANTIZATION",
            "advice-KV_CACHE_DTYPE",
            "advice-MAX_RUNNING_REQUESTS",
            "advice-MAX_BATCHED_TOKENS",
            "advice-SPECULATIVE_CONFIG",
            "change-check-client-ok",
            "change-check-client-overloaded",
            "change-check-client-limit",
            "vram-check-source-nvml",
            "vram-check-source-simulator",
        ] {
            keys.push(k.to_string());
        }
        for o in review::GATE_OUTCOMES {
            keys.push(format!("change-gate-{o}"));
        }
        for c in review::GATE_CHECKS {
            keys.push(format!("change-check-{c}"));
        }
        let v = || "x".to_string();
        for kind in [
            IssueKind::Syntax { detail: v() },
            IssueKind::UnknownKey { suggestion: None },
            IssueKind::Required,
            IssueKind::NotPositiveInteger { value: v() },
            IssueKind::FractionRange { value: v() },
            IssueKind::FractionAboveAdvised { value: v() },
            IssueKind::FractionOomRisk { value: v() },
            IssueKind::PortRange { value: v() },
            IssueKind::BadName { value: v() },
            IssueKind::BadHost { value: v() },
            IssueKind::BadWord { value: v() },
            IssueKind::NotJsonObject { detail: v() },
            IssueKind::ReservedEnv { value: v() },
            IssueKind::BadEnvName { value: v() },
            IssueKind::RelativeModelPath { value: v() },
            IssueKind::UnknownEngine { value: v() },
        ] {
            keys.push(format!("profile-issue-{}", kind.code()));
        }
        let missing: Vec<_> = keys
            .iter()
            .flat_map(|k| {
                Lang::ALL
                    .into_iter()
                    .filter(move |l| !has(*l, k))
                    .map(move |l| format!("{}:{k}", l.code()))
            })
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
    }

    #[test]
    fn russian_plural_forms() {
        let got: Vec<String> = [1u64, 2, 5, 11, 21, 22, 25]
            .iter()
            .map(|n| tr_args(Lang::Ru, "fleet-engine-count", &[("count", (*n).into())]))
            .collect();
        assert_eq!(
            got,
            [
                "1 движок",
                "2 движка",
                "5 движков",
                "11 движков",
                "21 движок",
                "22 движка",
                "25 движков"
            ]
        );
        assert_eq!(
            tr_args(Lang::En, "fleet-engine-count", &[("count", 1u64.into())]),
            "1 engine"
        );
        assert_eq!(
            tr_args(Lang::En, "fleet-engine-count", &[("count", 3u64.into())]),
            "3 engines"
        );
    }

    #[test]
    fn negotiation_prefers_cookie_then_header() {
        assert_eq!(Lang::negotiate(Some("a=b; lang=ru"), Some("en-US")), Lang::Ru);
        assert_eq!(Lang::negotiate(Some("lang=xx"), Some("de, ru-RU;q=0.8")), Lang::Ru);
        assert_eq!(Lang::negotiate(None, None), Lang::En);
        assert_eq!(
            Lang::from_env_vars(|k| (k == "LANG").then(|| "ru_RU.UTF-8".to_string())),
            Lang::Ru
        );
    }

    #[test]
    fn missing_key_is_visible() {
        assert_eq!(tr(Lang::En, "no-such-key"), "no-such-key");
    }
}
