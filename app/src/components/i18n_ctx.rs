//! The reactive side of translation: the current language as a signal in context.

use crate::i18n::{tr_args, Arg, Lang};
use leptos::prelude::*;

/// The language signal every page reads its texts through.
#[derive(Clone, Copy)]
pub struct I18n {
    pub lang: RwSignal<Lang>,
}

impl I18n {
    /// Whether a message exists. Every key exists in both languages (the locale test), so this
    /// asks the page's language: the one the browser has loaded (`components::locales`), and
    /// the one the server rendered with, so hydration sees what the server saw.
    pub fn has(&self, key: &str) -> bool {
        crate::i18n::has(self.lang.get_untracked(), key)
    }

    /// A message in the current language; reactive when called inside a view closure.
    pub fn t(&self, key: &str) -> String {
        tr_args(self.lang.get(), key, &[])
    }

    /// A message with arguments in the current language.
    pub fn ta(&self, key: &str, args: &[(&str, Arg)]) -> String {
        tr_args(self.lang.get(), key, args)
    }

    /// A number with the language's decimal separator.
    pub fn num(&self, v: f64, decimals: usize) -> String {
        crate::i18n::number(self.lang.get(), v, decimals)
    }

    /// A value with its unit (`unit-ms`, `unit-gib`, …) in the current language.
    pub fn unit(&self, unit: &str, v: f64, decimals: usize) -> String {
        crate::i18n::with_unit(self.lang.get(), unit, v, decimals)
    }

    /// Milliseconds, whole: "212 ms", "212 мс".
    pub fn ms(&self, v: f64) -> String {
        self.unit("value-ms", v, 0)
    }

    /// GiB with `decimals` digits: "55.61 GiB", "55,61 ГиБ".
    pub fn gib(&self, v: f64, decimals: usize) -> String {
        self.unit("value-gib", v, decimals)
    }

    /// Used of total GiB: "21.0 / 140 GiB".
    pub fn gib_of(&self, used: f64, total: f64, used_decimals: usize, total_decimals: usize) -> String {
        self.ta(
            "value-gib-of",
            &[
                ("used", self.num(used, used_decimals).into()),
                ("total", self.num(total, total_decimals).into()),
            ],
        )
    }
}

/// The language the page was rendered in. The server negotiates it from the request (cookie,
/// then `Accept-Language`); the browser reads what the server wrote into `<html lang>`.
pub fn initial_lang() -> Lang {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .map(|parts| {
                let header = |name: http::header::HeaderName| {
                    parts
                        .headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string)
                };
                Lang::negotiate(
                    header(http::header::COOKIE).as_deref(),
                    header(http::header::ACCEPT_LANGUAGE).as_deref(),
                )
            })
            .unwrap_or_default()
    }
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
            .and_then(|e| e.get_attribute("lang"))
            .and_then(|code| Lang::from_code(&code))
            .unwrap_or_default()
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        Lang::default()
    }
}

/// Puts the language signal into context; called once by the root component.
pub fn provide_i18n() -> I18n {
    let i18n = I18n {
        lang: RwSignal::new(initial_lang()),
    };
    provide_context(i18n);
    i18n
}

/// The language signal from context.
pub fn use_i18n() -> I18n {
    expect_context::<I18n>()
}
