//! The HTML document and the router: the frame every page renders in.

use crate::components::{provide_i18n, LangSwitch};
use crate::lazy_pages::*;
use crate::pages::{accounts::UserMenu, not_found::NotFound};
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, Title};
use leptos_router::{
    components::{Route, Router, Routes, A},
    path, Lazy,
};

/// Where the browser finds the bundle. A release embeds it under content-hashed names (cached
/// for good, a new release is a new name); a development build serves `target/site/pkg` as is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssetUrls {
    /// The wasm-bindgen bundle's directory, without the leading slash (`pkg/3f9c…`): leptos
    /// loads `/{pkg_dir}/console.js` and the wasm next to it.
    pub pkg_dir: String,
    pub css: String,
    /// The console's chart script (uPlot and its stylesheet, `app/assets/charts.js`): loaded
    /// only when a page draws a chart.
    pub charts: String,
}

impl AssetUrls {
    /// The names `scripts/build-site.sh` writes (a development build).
    pub fn unhashed() -> Self {
        Self {
            pkg_dir: "pkg".into(),
            css: "/pkg/console.css".into(),
            charts: "/pkg/charts.min.js".into(),
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
        <html lang=lang.code() data-role=role data-charts=assets.charts data-locales=format!("/{}", assets.pkg_dir)>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <link rel="stylesheet" href=assets.css/>
                // The chart script (served by the console: no CDN, consoles run air-gapped) is
                // loaded by the first chart drawn, from the address in `data-charts`.
                // The page's messages load beside the wasm, not after it (`components::locales`).
                {hydrate.then(|| view! {
                    <link rel="preload" r#as="fetch" crossorigin="anonymous"
                        href=crate::components::locales::url(&format!("/{}", assets.pkg_dir), lang)/>
                    <HydrationScripts options/>
                })}
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
    provide_context(section_loaders());
    provide_context(on_demand_views());
    // `<body data-hydrated>`, what tests and scripts wait for, is set by `crate::hydrate` once
    // the page (a lazily loaded one included) is live.
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
                    <A href="/hosts">{move || i18n.t("nav-hosts")}</A>
                </nav>
                <LangSwitch/>
                <UserMenu/>
            </header>
            <main>
                <Routes fallback=|| view! { <NotFound/> }>
                    <Route path=path!("/") view={Lazy::<FleetRoute>::new()}/>
                    <Route path=path!("/engines/:profile") view={Lazy::<EngineRoute>::new()}/>
                    <Route path=path!("/profiles") view={Lazy::<ProfileListRoute>::new()}/>
                    <Route path=path!("/profiles/:name") view={Lazy::<ProfileRoute>::new()}/>
                    <Route path=path!("/profiles/:name/edit") view={Lazy::<ProfileEditRoute>::new()}/>
                    <Route path=path!("/bench") view={Lazy::<BenchListRoute>::new()}/>
                    <Route path=path!("/bench/compare") view={Lazy::<BenchCompareRoute>::new()}/>
                    <Route path=path!("/incidents") view={Lazy::<IncidentListRoute>::new()}/>
                    <Route path=path!("/vram") view={Lazy::<VramRoute>::new()}/>
                    <Route path=path!("/models") view={Lazy::<ModelsRoute>::new()}/>
                    <Route path=path!("/journal") view={Lazy::<JournalRoute>::new()}/>
                    <Route path=path!("/hosts") view={Lazy::<HostsRoute>::new()}/>
                    <Route path=path!("/incidents/:id") view={Lazy::<IncidentRoute>::new()}/>
                    <Route path=path!("/changes") view={Lazy::<ChangeListRoute>::new()}/>
                    <Route path=path!("/changes/:id") view={Lazy::<ChangeRoute>::new()}/>
                    <Route path=path!("/login") view={Lazy::<LoginRoute>::new()}/>
                    <Route path=path!("/setup") view={Lazy::<SetupRoute>::new()}/>
                    <Route path=path!("/account") view={Lazy::<AccountRoute>::new()}/>
                    <Route path=path!("/admin/accounts") view={Lazy::<AccountsRoute>::new()}/>
                </Routes>
            </main>
        </Router>
    }
}
