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
pub mod domain;
pub mod i18n;
pub mod pages;
mod shell;

pub use shell::{shell, App, AssetUrls, STATIC_PAGES};

/// The browser entry point: attaches the reactive UI to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
