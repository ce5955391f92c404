//! The HTML document and the router: the frame every page renders in.

use crate::components::{provide_i18n, LangSwitch};
use crate::pages::{
    accounts::{AccountPage, AccountsPage, LoginPage, SetupPage, UserMenu},
    bench::{BenchComparePage, BenchListPage},
    changes::{ChangeListPage, ChangePage},
    engine::EnginePage,
    fleet::FleetPage,
    incidents::{IncidentListPage, IncidentPage},
    journal::JournalPage,
    models::ModelsPage,
    not_found::NotFound,
    profile_edit::ProfileEditPage,
    profiles::{ProfileListPage, ProfilePage},
    vram::VramPage,
};
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, Title};
use leptos_router::{
    components::{Route, Router, Routes, A},
    path,
};

/// Where the browser finds the bundle. A release embeds it under content-hashed names (cached
/// for good, a new release is a new name); a development build serves `target/site/pkg` as is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssetUrls {
    /// The wasm-bindgen bundle's directory, without the leading slash (`pkg/3f9c…`): leptos
    /// loads `/{pkg_dir}/console.js` and the wasm next to it.
    pub pkg_dir: String,
    pub css: String,
    /// ECharts and its Russian locale: loaded only when a page draws a chart.
    pub echarts: String,
    pub echarts_ru: String,
}

impl AssetUrls {
    /// The names `scripts/build-site.sh` writes (a development build).
    pub fn unhashed() -> Self {
        Self {
            pkg_dir: "pkg".into(),
            css: "/pkg/console.css".into(),
            echarts: "/pkg/echarts.min.js".into(),
            echarts_ru: "/pkg/echarts-lang-ru.js".into(),
        }
    }
}

/// Pages served as plain HTML, without the wasm bundle: the sign-in page is a form that posts,
/// so it loads in a few kilobytes over a slow VPN (the bundle comes after, on the page signed
/// into).
pub const STATIC_PAGES: &[&str] = &["/login"];

/// The full document, rendered on the server. `<html lang>` carries the negotiated language
/// to the browser so hydration starts in the same language.
pub fn shell(options: LeptosOptions, assets: AssetUrls) -> impl IntoView {
    let lang = crate::components::i18n_ctx_initial();
    let role = crate::components::initial_role().map(|r| r.as_str());
    #[cfg(feature = "ssr")]
    let hydrate = !crate::api::service::request_path().is_some_and(|p| STATIC_PAGES.contains(&p.as_str()));
    #[cfg(not(feature = "ssr"))]
    let hydrate = true;
    view! {
        <!DOCTYPE html>
        <html lang=lang.code() data-role=role data-echarts=assets.echarts data-echarts-ru=assets.echarts_ru>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <link rel="stylesheet" href=assets.css/>
                // ECharts (served by the console: no CDN, consoles run air-gapped) is loaded
                // by the first chart drawn, from the address in `data-echarts`.
                {hydrate.then(|| view! { <HydrationScripts options/> })}
                <leptos_meta::MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The application: header with navigation and language switch, then the routed page.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let i18n = provide_i18n();
    crate::components::provide_role();
    // Effects run only in the browser, after hydration: tests and scripts wait for this mark.
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(body) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.body()) {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
    view! {
        <Title text=move || i18n.t("app-title")/>
        <Router>
            <header class="top">
                <a class="brand" href="/">"Roofline"</a>
                <nav aria-label=move || i18n.t("nav-label")>
                    <A href="/">{move || i18n.t("nav-fleet")}</A>
                    <A href="/profiles">{move || i18n.t("nav-profiles")}</A>
                    <A href="/bench">{move || i18n.t("nav-bench")}</A>
                    <A href="/incidents">{move || i18n.t("nav-incidents")}</A>
                    <A href="/vram">{move || i18n.t("nav-vram")}</A>
                    <A href="/models">{move || i18n.t("nav-models")}</A>
                    <A href="/changes">{move || i18n.t("nav-changes")}</A>
                    <A href="/journal">{move || i18n.t("nav-journal")}</A>
                </nav>
                <LangSwitch/>
                <UserMenu/>
            </header>
            <main>
                <Routes fallback=|| view! { <NotFound/> }>
                    <Route path=path!("/") view=FleetPage/>
                    <Route path=path!("/engines/:profile") view=EnginePage/>
                    <Route path=path!("/profiles") view=ProfileListPage/>
                    <Route path=path!("/profiles/:name") view=ProfilePage/>
                    <Route path=path!("/profiles/:name/edit") view=ProfileEditPage/>
                    <Route path=path!("/bench") view=BenchListPage/>
                    <Route path=path!("/bench/compare") view=BenchComparePage/>
                    <Route path=path!("/incidents") view=IncidentListPage/>
                    <Route path=path!("/vram") view=VramPage/>
                    <Route path=path!("/models") view=ModelsPage/>
                    <Route path=path!("/journal") view=JournalPage/>
                    <Route path=path!("/incidents/:id") view=IncidentPage/>
                    <Route path=path!("/changes") view=ChangeListPage/>
                    <Route path=path!("/changes/:id") view=ChangePage/>
                    <Route path=path!("/login") view=LoginPage/>
                    <Route path=path!("/setup") view=SetupPage/>
                    <Route path=path!("/account") view=AccountPage/>
                    <Route path=path!("/admin/accounts") view=AccountsPage/>
                </Routes>
            </main>
        </Router>
    }
}
