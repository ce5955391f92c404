//! A moment on the page: `<time datetime>` in the browser's own time zone, with UTC on hover.
//!
//! The server renders UTC (it does not know the reader's zone); once hydrated, the browser
//! writes the same instant in its zone, the one the charts draw in, so a table row and a chart
//! point of the same moment read the same.

use crate::components::use_i18n;
use leptos::prelude::*;

/// A stored UTC time (`2026-12-04T18:28:16Z`) as a `<time>`; text that is not such a time is
/// shown as it is.
#[component]
pub fn Time(#[prop(into)] at: String) -> impl IntoView {
    match crate::i18n::parse_utc(&at) {
        Some(ms) => view! { <TimeMs ms/> }.into_any(),
        None => view! { <span class="mono">{at}</span> }.into_any(),
    }
}

/// A moment given as Unix ms.
#[component]
pub fn TimeMs(ms: i64) -> impl IntoView {
    let i18n = use_i18n();
    let utc = crate::i18n::time_utc_secs(ms);
    let shown = RwSignal::new(utc.clone());
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| shown.set(local(ms)));
    let title = move || i18n.ta("time-utc-title", &[("utc", utc.clone().into())]);
    view! {
        <time class="mono" datetime=crate::i18n::iso_utc(ms) title=title>{move || shown.get()}</time>
    }
}

/// `2026-12-05 04:28:16` in the browser's time zone.
#[cfg(feature = "hydrate")]
fn local(ms: i64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        d.get_full_year(),
        d.get_month() + 1,
        d.get_date(),
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}
