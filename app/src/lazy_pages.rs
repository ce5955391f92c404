//! Every page but the fleet, in four lazily loaded parts of the browser bundle: the fleet page
//! (the one an operator opens first, often over a VPN) loads only the fleet's code, and a
//! part is fetched when one of its pages is first opened (or hydrated). `scripts/build-site.sh`
//! splits the wasm at these points (`wasm-split-cli`, what cargo-leptos runs).
//!
//! Pages are grouped, not split one by one: with a part per page, the code pages share fell
//! into one chunk per combination of pages using it (120 files, 104 of them under 1 KiB, for
//! the engine page alone), each a request. A handful of parts leaves few shared chunks:
//! `engine` (the page an incident is worked from), `operations` (incidents, benches, the
//! journal, the fleet's hosts and their jobs), `profiles` (profiles, the editor, changes and
//! their review) and `setup` (VRAM, models, accounts). The hosts page in a part of its own
//! made more shared chunks (every page then loaded 24 to 26 files instead of 16 to 18); in
//! `setup` it moved about 50 KiB of shared code into that part; in `operations` it adds
//! about 4 KiB to those pages.
//!
//! A split point is `wasm_split` (what leptos' `#[lazy]` expands to), named by its group
//! rather than by the call site: every function of a group lands in one part. Its expansion
//! declares the loader's wasm import and its `static` with `unsafe`: the one place the crate
//! allows unsafe code, and none of it is written here.
#![allow(
    unsafe_code,
    non_snake_case,
    reason = "what wasm_split expands to in the hydrate build: unsafe statics and exports named after the function"
)]

use crate::pages::{
    accounts::{AccountPage, AccountsPage},
    bench::{BenchComparePage, BenchListPage},
    changes::{ChangeListPage, ChangePage},
    engine::EnginePage,
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

/// One lazily loaded route per page: no data half (each page loads its own), the view half in
/// its group's part. `$m` names the module holding the split function and its preload, and the
/// function itself (`wasm_split` names its export after the function: one name per route).
macro_rules! lazy_pages {
    ($($group:ident { $($m:ident: $route:ident => $page:ident),* $(,)? })*) => {
        $($(
            #[doc = concat!("The route of [`", stringify!($page), "`], loaded with the `", stringify!($group), "` part.")]
            pub struct $route;

            mod $m {
                use super::*;

                #[cfg_attr(
                    feature = "hydrate",
                    ::leptos::wasm_split::wasm_split($group, wasm_split_path = ::leptos::wasm_split, preload(preload))
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
        )*)*
    };
}

lazy_pages! {
    engine {
        engine_route: EngineRoute => EnginePage,
    }
    operations {
        incident_list_route: IncidentListRoute => IncidentListPage,
        incident_route: IncidentRoute => IncidentPage,
        bench_list_route: BenchListRoute => BenchListPage,
        bench_compare_route: BenchCompareRoute => BenchComparePage,
        journal_route: JournalRoute => JournalPage,
        hosts_route: HostsRoute => HostsPage,
    }
    profiles {
        profile_list_route: ProfileListRoute => ProfileListPage,
        profile_route: ProfileRoute => ProfilePage,
        profile_edit_route: ProfileEditRoute => ProfileEditPage,
        change_list_route: ChangeListRoute => ChangeListPage,
        change_route: ChangeRoute => ChangePage,
    }
    setup {
        vram_route: VramRoute => VramPage,
        models_route: ModelsRoute => ModelsPage,
        account_route: AccountRoute => AccountPage,
        accounts_route: AccountsRoute => AccountsPage,
    }
}
