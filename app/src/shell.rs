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
use leptos_meta::{provide_meta_context, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes, A},
    path,
};

/// The full document, rendered on the server. `<html lang>` carries the negotiated language
/// to the browser so hydration starts in the same language.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let lang = crate::components::i18n_ctx_initial();
    let role = crate::components::initial_role().map(|r| r.as_str());
    view! {
        <!DOCTYPE html>
        <html lang=lang.code() data-role=role>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                // ECharts is served by the console (no CDN: consoles run air-gapped). Loaded
                // before hydration, so charts can be drawn as soon as the page is live.
                <script src="/pkg/echarts.min.js"></script>
                <script src="/pkg/echarts-lang-ru.js"></script>
                <HydrationScripts options/>
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
        <Stylesheet id="leptos" href="/pkg/console.css"/>
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
