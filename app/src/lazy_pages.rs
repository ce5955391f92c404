//! Every page in a lazily loaded part of the browser bundle of its own, and the engine page's
//! heavier sections too: a page loads the main part (the shell, the router, the framework and
//! what most pages share), its own part, and the chunk of code its group's pages share; the
//! part is fetched when the page is first opened (or hydrated), a section's when it is first
//! shown. `scripts/build-site.sh` splits the wasm at these points (`wasm-split-cli`, what
//! cargo-leptos runs, from `third_party/wasm-split`).
//!
//! A split point is `wasm_split` (what leptos' `#[lazy]` expands to), named `group__page`: the
//! splitter puts code two pages of a group share in that group's chunk, and code three groups
//! or more share in the main part (`--by-group --main-if-shared-by 3`). Upstream's one chunk
//! per combination of pages made 120 chunks for the engine page alone, 104 under 1 KiB, each a
//! request; one part per group (the way before) made every page load all of its group's
//! pages. The groups: `fleet`, `engine` (the page an incident is worked from, and its
//! sections), `operations` (incidents, benches, the journal, the hosts and their jobs),
//! `profiles` (profiles, the editor, changes and their review) and `setup` (VRAM, models,
//! accounts, sign-in and the first administrator). Its expansion
//! declares the loader's wasm import and its `static` with `unsafe`: the one place the crate
//! allows unsafe code, and none of it is written here.
#![allow(
    unsafe_code,
    non_snake_case,
    reason = "what wasm_split expands to in the hydrate build: unsafe statics and exports named after the function"
)]

use crate::domain::upgrade::UpgradeCheck;
use crate::pages::engine::{charts_section, gpu_section, runs_section, ChartsArgs, GpuArgs, RunsArgs, SectionLoaders};
use crate::pages::on_demand::{OnDemandViews, PredictionArgs};
use crate::pages::{
    accounts::{AccountPage, AccountsPage, LoginPage, SetupPage},
    bench::{BenchComparePage, BenchListPage},
    changes::{ChangeListPage, ChangePage},
    engine::EnginePage,
    fleet::FleetPage,
    hosts::HostsPage,
    incidents::{IncidentListPage, IncidentPage},
    journal::JournalPage,
    models::ModelsPage,
    profile_edit::ProfileEditPage,
    profiles::{ProfileListPage, ProfilePage},
    vram::VramPage,
};
use leptos::prelude::*;
use leptos_router::LazyRoute;
use std::future::Future;

/// One lazily loaded route per page: no data half (each page loads its own), the view half in
/// its group's part. `$m` names the module holding the split function and its preload, and the
/// function itself (`wasm_split` names its export after the function: one name per route).
macro_rules! lazy_pages {
    ($($split:ident / $m:ident: $route:ident => $page:ident),* $(,)?) => {
        $(
            #[doc = concat!("The route of [`", stringify!($page), "`], loaded with the `", stringify!($split), "` part.")]
            pub struct $route;

            mod $m {
                use super::*;

                #[cfg_attr(
                    feature = "hydrate",
                    ::leptos::wasm_split::wasm_split($split, wasm_split_path = ::leptos::wasm_split, preload(preload))
                )]
                pub(super) fn $m(_this: $route) -> AnyView {
                    view! { <$page/> }.into_any()
                }
            }

            impl LazyRoute for $route {
                fn data() -> Self {
                    Self
                }

                async fn view(this: Self) -> AnyView {
                    #[cfg(feature = "hydrate")]
                    {
                        $m::$m(this).await
                    }
                    #[cfg(not(feature = "hydrate"))]
                    {
                        $m::$m(this)
                    }
                }

                async fn preload() {
                    #[cfg(feature = "hydrate")]
                    $m::preload().await;
                }
            }
        )*
    };
}

lazy_pages! {
    fleet / fleet_route: FleetRoute => FleetPage,
    engine / engine_route: EngineRoute => EnginePage,
    operations__incidents / incident_list_route: IncidentListRoute => IncidentListPage,
    operations__incident / incident_route: IncidentRoute => IncidentPage,
    operations__benches / bench_list_route: BenchListRoute => BenchListPage,
    operations__compare / bench_compare_route: BenchCompareRoute => BenchComparePage,
    operations__journal / journal_route: JournalRoute => JournalPage,
    operations__hosts / hosts_route: HostsRoute => HostsPage,
    profiles__list / profile_list_route: ProfileListRoute => ProfileListPage,
    profiles__profile / profile_route: ProfileRoute => ProfilePage,
    profiles__edit / profile_edit_route: ProfileEditRoute => ProfileEditPage,
    profiles__changes / change_list_route: ChangeListRoute => ChangeListPage,
    profiles__change / change_route: ChangeRoute => ChangePage,
    setup__vram / vram_route: VramRoute => VramPage,
    setup__models / models_route: ModelsRoute => ModelsPage,
    setup__account / account_route: AccountRoute => AccountPage,
    setup__accounts / accounts_route: AccountsRoute => AccountsPage,
    setup__login / login_route: LoginRoute => LoginPage,
    setup__first_admin / setup_route: SetupRoute => SetupPage,
}

/// A part of a page loaded when first shown: `$m(args)` is the future of its view, `Send` as
/// leptos' `Suspend` wants (in the browser the loader's future is not, and the browser has one
/// thread: `SendWrapper` says so); on the server the view at once.
macro_rules! lazy_sections {
    ($($split:ident / $m:ident: $args:ty => $view:ident),* $(,)?) => {
        $(
            mod $m {
                use super::*;

                #[cfg_attr(
                    feature = "hydrate",
                    ::leptos::wasm_split::wasm_split($split, wasm_split_path = ::leptos::wasm_split)
                )]
                pub(super) fn $m(args: $args) -> AnyView {
                    $view(args)
                }
            }

            #[doc = concat!("[`", stringify!($view), "`], loaded with the `", stringify!($split), "` part.")]
            pub fn $m(args: $args) -> impl Future<Output = AnyView> + Send + 'static {
                #[cfg(feature = "hydrate")]
                {
                    send_wrapper::SendWrapper::new(async move { $m::$m(args).await })
                }
                #[cfg(not(feature = "hydrate"))]
                {
                    async move { $m::$m(args) }
                }
            }
        )*
    };
}

lazy_sections! {
    engine__charts / engine_charts: ChartsArgs => charts_section,
    engine__runs / engine_runs: RunsArgs => runs_section,
    engine__gpu / engine_gpu: GpuArgs => gpu_section,
    views__prediction / prediction_view: PredictionArgs => prediction_section,
    views__upgrade / upgrade_view: UpgradeCheck => upgrade_section,
}

/// The VRAM prediction's view, for the `views__prediction` part. The views drawn on demand
/// are a group of their own (`views`): the editor, a change and the calculator all show them,
/// and code only they use then stays out of the profiles' and the setup pages' chunks.
fn prediction_section(args: PredictionArgs) -> AnyView {
    view! { <crate::pages::vram::PredictionView prediction=args.prediction testid=args.testid/> }.into_any()
}

/// The upgrade preflight's view, for the `views__upgrade` part.
fn upgrade_section(check: UpgradeCheck) -> AnyView {
    view! { <crate::pages::upgrade_view::UpgradeView check=check/> }.into_any()
}

/// The engine page's sections, each loaded with its part (the shell provides these to the page).
pub fn section_loaders() -> SectionLoaders {
    SectionLoaders {
        charts: |a| Box::pin(engine_charts(a)),
        runs: |a| Box::pin(engine_runs(a)),
        gpu: |a| Box::pin(engine_gpu(a)),
    }
}

/// The views drawn when an operator asks for them, each loaded with its part (the shell
/// provides these to the pages).
pub fn on_demand_views() -> OnDemandViews {
    OnDemandViews {
        prediction: |a| Box::pin(prediction_view(a)),
        upgrade: |c| Box::pin(upgrade_view(c)),
    }
}
