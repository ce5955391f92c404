//! A confirmation step for actions that change a running engine.

use super::i18n_ctx::use_i18n;
use leptos::prelude::*;

/// An inline, keyboard-reachable confirmation: the question, a confirm and a cancel button.
/// Focus moves to "cancel" when it opens, so Enter never confirms by accident.
#[component]
pub fn ConfirmDialog(
    #[prop(into)] open: Signal<bool>,
    #[prop(into)] message: Signal<String>,
    on_confirm: Callback<()>,
    on_cancel: Callback<()>,
) -> impl IntoView {
    let i18n = use_i18n();
    let cancel_ref = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if open.get() {
            if let Some(btn) = cancel_ref.get() {
                let _ = btn.focus();
            }
        }
    });
    view! {
        <Show when=move || open.get()>
            <div class="confirm" role="alertdialog" aria-modal="false" data-testid="confirm"
                on:keydown=move |ev| { if ev.key() == "Escape" { on_cancel.run(()) } }>
                <p>{move || message.get()}</p>
                <div class="buttons">
                    <button type="button" class="danger" data-testid="confirm-yes" on:click=move |_| on_confirm.run(())>
                        {move || i18n.t("confirm-yes")}
                    </button>
                    <button type="button" node_ref=cancel_ref data-testid="confirm-no" on:click=move |_| on_cancel.run(())>
                        {move || i18n.t("confirm-no")}
                    </button>
                </div>
            </div>
        </Show>
    }
}
