//! The page for an unknown address.

use crate::components::use_i18n;
use leptos::prelude::*;

#[component]
pub fn NotFound() -> impl IntoView {
    let i18n = use_i18n();
    #[cfg(feature = "ssr")]
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <section>
            <h1>{move || i18n.t("not-found-title")}</h1>
            <p><a href="/">{move || i18n.t("not-found-back")}</a></p>
        </section>
    }
}
