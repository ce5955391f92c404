//! Engine state badges and the startup phase stepper.

use super::i18n_ctx::use_i18n;
use crate::domain::{engine::EngineState, phases::StartupPhase};
use leptos::prelude::*;

/// A coloured badge for an engine state, with text (colour is never the only signal).
#[component]
pub fn StateBadge(#[prop(into)] state: Signal<EngineState>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <span
            class=move || format!("badge state-{}", state.get().as_str())
            data-testid="state"
            data-state=move || state.get().as_str()
        >
            {move || i18n.t(&format!("state-{}", state.get().as_str()))}
        </span>
    }
}

/// A badge whose words are `badge-{name}` (and `badge-{name}-title` on hover) and whose test id
/// is `name`: what marks an engine as not what it may look like.
fn marker(name: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <span class="badge simulated" data-testid=name title=move || i18n.t(&format!("badge-{name}-title"))>
            {move || i18n.t(&format!("badge-{name}"))}
        </span>
    }
}

/// Marks an engine that is the simulator, never a real GPU engine.
#[component]
pub fn SimulatedBadge() -> impl IntoView {
    marker("simulated")
}

/// Marks an engine whose load is the console's own demo traffic (`console --demo`), so no one
/// reads its queue and latency as clients'.
#[component]
pub fn DemoTrafficBadge() -> impl IntoView {
    marker("demo-traffic")
}

/// The startup milestones, the reached ones marked done.
#[component]
pub fn PhaseSteps(#[prop(into)] phase: Signal<Option<StartupPhase>>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <ol class="phases" data-testid="startup-progress">
            {StartupPhase::ALL
                .into_iter()
                .map(|p| {
                    let state = move || match phase.get() {
                        Some(cur) if p < cur => "done",
                        Some(cur) if p == cur => "current",
                        _ => "todo",
                    };
                    view! {
                        <li class=state data-phase=p.as_str()>
                            {move || i18n.t(&format!("phase-{}", p.as_str()))}
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}
