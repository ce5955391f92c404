//! The language switch: persists the choice in a cookie the server also reads, so the next
//! server render uses the same language as the browser.

use super::i18n_ctx::use_i18n;
use crate::i18n::Lang;
use leptos::prelude::*;

/// Remembers the choice in the cookie the server reads and on `<html lang>`.
#[cfg(feature = "hydrate")]
fn persist(lang: Lang) {
    use wasm_bindgen::JsCast;
    if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
        if let Ok(html_doc) = doc.clone().dyn_into::<web_sys::HtmlDocument>() {
            let cookie = format!(
                "{}={}; path=/; max-age=31536000; samesite=lax",
                crate::i18n::LANG_COOKIE,
                lang.code()
            );
            let _ = html_doc.set_cookie(&cookie);
        }
        if let Some(root) = doc.document_element() {
            let _ = root.set_attribute("lang", lang.code());
        }
    }
}

/// Switches the live page to `lang`: its messages first (fetched once), then every text.
fn switch(i18n: crate::components::I18n, lang: Lang) {
    #[cfg(feature = "hydrate")]
    leptos::task::spawn_local(async move {
        match crate::components::locales::load(lang).await {
            Ok(()) => {
                persist(lang);
                i18n.lang.set(lang);
            }
            Err(e) => leptos::logging::error!("cannot switch to {}: {e}", lang.code()),
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = (i18n, lang);
}

/// Buttons for each language; the current one is marked. A form that posts to `/lang`, so it
/// also works on pages served without the wasm bundle (the sign-in page); where the page is
/// live the click switches in place instead.
#[component]
pub fn LangSwitch() -> impl IntoView {
    let i18n = use_i18n();
    let location = leptos_router::hooks::use_location();
    let back = move || {
        let (path, search) = (location.pathname.get(), location.search.get());
        match search.trim_start_matches('?') {
            "" => path,
            q => format!("{path}?{q}"),
        }
    };
    view! {
        <form method="post" action="/lang" class="lang-switch" role="group" aria-label=move || i18n.t("lang-switch-label")>
            <input type="hidden" name="back" value=back/>
            {Lang::ALL
                .into_iter()
                .map(|lang| {
                    view! {
                        <button
                            type="submit"
                            name="lang"
                            value=lang.code()
                            data-testid=format!("lang-{}", lang.code())
                            lang=lang.code()
                            aria-pressed=move || (i18n.lang.get() == lang).to_string()
                            class:active=move || i18n.lang.get() == lang
                            on:click=move |ev| {
                                ev.prevent_default();
                                switch(i18n, lang);
                            }
                        >
                            {lang.native_name()}
                        </button>
                    }
                })
                .collect_view()}
        </form>
    }
}
