//! One module per page, named after what the operator opens.

pub mod accounts;
pub mod bench;
pub mod changes;
pub mod engine;
pub mod engine_charts;
pub mod fleet;
pub mod gate;
pub mod gpu;
pub mod incidents;
pub mod journal;
pub mod not_found;
pub mod profile_edit;
pub mod profiles;
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
    };
    view! {
        <p class="error" role="alert" data-testid="error">{text}
            {signed_out.then(|| view! { " " <a href="/login">{move || i18n.t("nav-sign-in")}</a> })}
        </p>
    }
}
