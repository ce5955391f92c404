//! Views a page draws only once an operator asks for them (a VRAM prediction, an upgrade
//! preflight), each from a part of the bundle of its own: the editor, a change's review and
//! the calculator load without their code, and fetch it with the answer it draws. The shell
//! provides the loaders (`crate::lazy_pages`); a page must not draw these views itself, since
//! whatever a page calls is loaded with it.

use crate::api::VramPrediction;
use crate::components::use_i18n;
use crate::domain::upgrade::UpgradeCheck;
use leptos::prelude::*;
use std::future::Future;
use std::pin::Pin;

/// The future of a view drawn from a lazily loaded part.
pub type LoadedView = Pin<Box<dyn Future<Output = AnyView> + Send>>;

/// What the prediction view takes: the answer, and the test id of its block (the editor and
/// the calculator each show one).
#[derive(Clone)]
pub struct PredictionArgs {
    pub prediction: VramPrediction,
    pub testid: &'static str,
}

/// How the on-demand views get their code: provided by the shell.
#[derive(Clone, Copy)]
pub struct OnDemandViews {
    pub prediction: fn(PredictionArgs) -> LoadedView,
    pub upgrade: fn(UpgradeCheck) -> LoadedView,
}

/// A profile's VRAM prediction, drawn when its part has arrived.
pub fn prediction(args: PredictionArgs) -> AnyView {
    let load = expect_context::<OnDemandViews>().prediction;
    drawn(move || load(args.clone()), None)
}

/// An upgrade preflight's findings, drawn when its part has arrived.
pub fn upgrade(check: UpgradeCheck) -> AnyView {
    let load = expect_context::<OnDemandViews>().upgrade;
    drawn(move || load(check.clone()), None)
}

/// `load`'s view once its part has arrived, "loading" (`aria-busy`) until then; `ready` is set
/// then. Drawn only in the browser (an operator's request, a section first shown): the server
/// has nothing to draw here. The engine page's lazily drawn sections use it too.
pub fn drawn(load: impl Fn() -> LoadedView + Send + Sync + 'static, ready: Option<RwSignal<bool>>) -> AnyView {
    let i18n = use_i18n();
    view! {
        <Suspense fallback=move || view! { <p class="muted" aria-busy="true" data-testid="view-loading">{move || i18n.t("loading")}</p> }>
            {move || {
                let view = load();
                Suspend::new(async move {
                    let view = view.await;
                    if let Some(ready) = ready {
                        ready.set(true);
                    }
                    view
                })
            }}
        </Suspense>
    }
    .into_any()
}
