//! Every page but the fleet, each in its own part of the browser bundle: the fleet page (the
//! one an operator opens first, often over a VPN) loads only the fleet's code, and a page's
//! part is fetched when the page is first opened (or hydrated). `scripts/build-site.sh` splits
//! the wasm at these points (`wasm-split-cli`, what cargo-leptos runs).
//!
//! The split points are leptos' `#[lazy_route]`, whose expansion declares the loader's wasm
//! import and its `static` with `unsafe`: the one place the crate allows unsafe code, and none
//! of it is written here.
#![allow(unsafe_code)]

use crate::pages::{
    accounts::{AccountPage, AccountsPage},
    bench::{BenchComparePage, BenchListPage},
    changes::{ChangeListPage, ChangePage},
    engine::EnginePage,
    incidents::{IncidentListPage, IncidentPage},
    journal::JournalPage,
    models::ModelsPage,
    profile_edit::ProfileEditPage,
    profiles::{ProfileListPage, ProfilePage},
    vram::VramPage,
};
use leptos::prelude::*;
use leptos_router::{lazy_route, LazyRoute};

/// One lazily loaded route per page: no data half (each page loads its own), the view half
/// in the split-off part.
macro_rules! lazy_pages {
    ($($route:ident => $page:ident),* $(,)?) => {
        $(
            #[doc = concat!("The route of [`", stringify!($page), "`], loaded on first use.")]
            pub struct $route;

            #[lazy_route]
            impl LazyRoute for $route {
                fn data() -> Self {
                    Self
                }

                fn view(_this: Self) -> AnyView {
                    view! { <$page/> }.into_any()
                }
            }
        )*
    };
}

lazy_pages! {
    EngineRoute => EnginePage,
    ProfileListRoute => ProfileListPage,
    ProfileRoute => ProfilePage,
    ProfileEditRoute => ProfileEditPage,
    BenchListRoute => BenchListPage,
    BenchCompareRoute => BenchComparePage,
    IncidentListRoute => IncidentListPage,
    IncidentRoute => IncidentPage,
    VramRoute => VramPage,
    ModelsRoute => ModelsPage,
    JournalRoute => JournalPage,
    ChangeListRoute => ChangeListPage,
    ChangeRoute => ChangePage,
    AccountRoute => AccountPage,
    AccountsRoute => AccountsPage,
}
