//! The pages' data table: one header row of translated (or language-neutral) column heads over
//! the rows the page renders, styled and tested alike on every page.

use crate::components::use_i18n;
use leptos::prelude::*;

/// A column head: a locale key, or text that reads the same in every language (`#`, `TTFT p95`,
/// the empty head over a row's checkbox).
#[derive(Clone, Copy, Debug)]
pub struct Head {
    key: Option<&'static str>,
    text: &'static str,
}

impl Head {
    /// A head translated from `key` (the locale test finds keys written as `Head::t("…")`).
    pub const fn t(key: &'static str) -> Self {
        Self {
            key: Some(key),
            text: "",
        }
    }

    /// A head shown as written, in every language.
    pub const fn text(text: &'static str) -> Self {
        Self { key: None, text }
    }
}

/// A `table.grid` with its heads and `testid`; the children are its rows (`<tr>`s). `class`
/// adds to `grid` (`compare`, `key-changes`).
#[component]
pub fn Grid(
    heads: Vec<Head>,
    #[prop(optional, into)] testid: Option<&'static str>,
    #[prop(optional)] class: &'static str,
    children: Children,
) -> impl IntoView {
    let i18n = use_i18n();
    let class = if class.is_empty() {
        "grid".to_string()
    } else {
        format!("grid {class}")
    };
    view! {
        <table class=class data-testid=testid>
            <thead><tr>
                {heads
                    .into_iter()
                    .map(|h| {
                        view! {
                            <th scope="col">
                                {move || match h.key {
                                    Some(k) => i18n.t(k),
                                    None => h.text.to_string(),
                                }}
                            </th>
                        }
                    })
                    .collect_view()}
            </tr></thead>
            <tbody>{children()}</tbody>
        </table>
    }
}
