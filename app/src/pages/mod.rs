//! One module per page, named after what the operator opens.

pub mod accounts;
pub mod bench;
pub mod changes;
pub mod engine;
pub mod fleet;
pub mod gpu;
pub mod hosts;
pub mod incidents;
pub mod journal;
pub mod models;
pub mod not_found;
pub mod on_demand;
pub mod profile_edit;
pub mod profiles;
pub mod upgrade_view;
pub mod vram;

use crate::api::ApiError;
use crate::components::use_i18n;
use leptos::prelude::*;

/// Renders an API error in the operator's language.
#[component]
pub fn ErrorNote(error: ApiError) -> impl IntoView {
    let i18n = use_i18n();
    let signed_out = matches!(error, ApiError::Unauthorized(_));
    let text = move || match &error {
        ApiError::NoSuchProfile(name) => i18n.ta("error-no-such-profile", &[("name", name.clone().into())]),
        ApiError::NoSuchEngine { profile, engine } => i18n.ta(
            "error-no-such-engine",
            &[("profile", profile.clone().into()), ("engine", engine.clone().into())],
        ),
        ApiError::PortBusy { port, owner } => i18n.ta(
            "error-port-busy",
            &[("port", port.to_string().into()), ("owner", owner.clone().into())],
        ),
        ApiError::Invalid(detail) | ApiError::Internal(detail) | ApiError::Transport(detail) => {
            i18n.ta("error-generic", &[("detail", detail.clone().into())])
        }
        ApiError::Unauthorized(detail) => i18n.ta("error-unauthorized", &[("detail", detail.clone().into())]),
        ApiError::Forbidden(detail) => i18n.ta("error-forbidden", &[("detail", detail.clone().into())]),
        ApiError::TooMany(detail) => i18n.ta("error-too-many", &[("detail", detail.clone().into())]),
    };
    view! {
        <p class="error" role="alert" data-testid="error">{text}
            {signed_out.then(|| view! { " " <a href="/login">{move || i18n.t("nav-sign-in")}</a> })}
        </p>
    }
}

/// A page's server data in its three states: loading, failed (the error explained), loaded.
/// Every page that waits on one resource renders through this, so they all say "loading" and
/// explain errors the same way. `show` returns an erased view: the page's own view types stay
/// out of this function's instances (they are large enough to overflow debug info).
pub fn loaded<T>(
    res: crate::api::wire::Data<Result<T, ApiError>>,
    show: impl Fn(T) -> AnyView + Send + Sync + 'static,
) -> AnyView
where
    T: Clone + Send + Sync + serde::Serialize + crate::decode::FromWire + 'static,
{
    let i18n = use_i18n();
    let show: std::sync::Arc<dyn Fn(T) -> AnyView + Send + Sync> = std::sync::Arc::new(show);
    view! {
        <Transition fallback=move || view! { <p class="muted">{move || i18n.t("loading")}</p> }>
            {
                let show = show.clone();
                move || res.get().map(|r| match r {
                    Ok(v) => show(v),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                })
            }
        </Transition>
    }
    .into_any()
}

/// [`loaded`] for a list, with the `empty` message when there are no rows.
pub fn loaded_rows<T>(
    res: crate::api::wire::Data<Result<Vec<T>, ApiError>>,
    empty: &'static str,
    show: impl Fn(Vec<T>) -> AnyView + Send + Sync + 'static,
) -> AnyView
where
    T: Clone + Send + Sync + serde::Serialize + crate::decode::FromWire + 'static,
{
    let i18n = use_i18n();
    loaded(res, move |rows: Vec<T>| {
        if rows.is_empty() {
            view! { <p class="muted">{move || i18n.t(empty)}</p> }.into_any()
        } else {
            show(rows)
        }
    })
}
