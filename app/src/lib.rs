//! Roofline Console's shared crate: the pure domain logic (`domain`), translations (`i18n`),
//! the API both sides speak (`api`), and the leptos UI (`shell`, `pages`, `components`).
//!
//! Built twice: with `ssr` into the `roofline` server, with `hydrate` into the browser's wasm.
// The engine page and the incident wizard are deeply nested view types; the default limit
// is reached in some builds (non-incremental, wasm32).
#![recursion_limit = "256"]

pub mod api;
pub mod charts;
pub mod components;
pub mod decode;
pub mod domain;
pub mod i18n;
mod lazy_pages;
pub mod pages;
mod shell;

pub use shell::{shell, App, AssetUrls, STATIC_PAGES};

/// The browser entry point: attaches the reactive UI to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Asynchronous hydration (what `leptos::mount::hydrate_lazy` does): a lazily loaded page's
    // part is fetched before the page hydrates. Only then is the page live, so only then does
    // `<body>` get the mark that tests and scripts wait for.
    _ = any_spawner::Executor::init_wasm_bindgen();
    leptos::task::spawn_local(async {
        let Some(body) = leptos::prelude::document().body() else {
            return;
        };
        // The page's language's messages before any text is drawn (`components::locales`).
        let lang = leptos::prelude::document()
            .document_element()
            .and_then(|e| e.get_attribute("lang"))
            .and_then(|code| i18n::Lang::from_code(&code))
            .unwrap_or_default();
        if let Err(e) = components::locales::load(lang).await {
            leptos::logging::error!("messages not loaded: {e}");
            let _ = body.set_attribute("data-i18n-error", &e);
        }
        leptos::mount::hydrate_from_async(body.clone(), App).await.forget();
        let _ = body.set_attribute("data-hydrated", "true");
    });
}
