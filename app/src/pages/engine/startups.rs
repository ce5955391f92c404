//! The engine page's startup panels: the warning while a start is stalled in one phase, and
//! the last start's phase timeline against the one before (seconds per phase, with bars on
//! one scale), reloaded whenever the engine becomes healthy again.

use crate::api::get_startup_history;
use crate::components::use_i18n;
use crate::domain::phases::{compare, Stall};
use leptos::prelude::*;

/// "Stalled in <phase>" while a start runs far past the profile's earlier starts.
#[component]
pub fn StallWarning(#[prop(into)] stall: Signal<Option<Stall>>) -> impl IntoView {
    let i18n = use_i18n();
    move || {
        stall.get().map(|st| {
            view! {
                <p class="warning" role="alert" data-testid="stall">
                    {move || i18n.ta("ev-stalled-phase", &[
                        ("phase", st.phase.as_str().into()),
                        ("elapsed", format!("{:.0}", st.elapsed_s).into()),
                        ("median", format!("{:.1}", st.median_s).into()),
                        ("starts", (st.starts as u64).into()),
                    ])}
                </p>
            }
        })
    }
}

/// The last start's phases against the previous start's.
#[component]
pub fn StartupTimeline(profile: String, #[prop(into)] healthy: Signal<bool>) -> impl IntoView {
    let i18n = use_i18n();
    let runs = crate::api::wire::data(
        move || (profile.clone(), healthy.get()),
        |(p, _)| get_startup_history(p),
    );
    view! {
        <Transition fallback=|| ()>
            {move || runs.get().and_then(|r| r.ok()).and_then(|runs| {
                let ready: Vec<_> = runs.iter().filter(|r| r.outcome == "ready").cloned().collect();
                let this = ready.last()?.clone();
                let previous = ready.len().checked_sub(2).and_then(|i| ready.get(i)).cloned();
                let rows = compare(&this, previous.as_ref());
                let scale = rows
                    .iter()
                    .flat_map(|(_, a, b)| [a.unwrap_or(0.0), b.unwrap_or(0.0)])
                    .fold(0.0f64, f64::max)
                    .max(0.001);
                let has_previous = previous.is_some();
                Some(view! {
                    <section class="startup-timeline" data-testid="startup-timeline">
                        <h2>{move || i18n.t("startup-timeline-title")}</h2>
                        <table>
                            <thead><tr>
                                <th scope="col">{move || i18n.t("startup-timeline-phase")}</th>
                                <th scope="col">{move || i18n.t("startup-timeline-this")}</th>
                                <th scope="col">{move || i18n.t("startup-timeline-previous")}</th>
                            </tr></thead>
                            <tbody>
                                {rows.into_iter().map(|(phase, a, b)| {
                                    let cell = move |s: Option<f64>, class: &'static str| match s {
                                        Some(s) => view! {
                                            <td>
                                                <span class=format!("bar {class}") style=format!("width:{:.0}%", s / scale * 100.0)></span>
                                                {format!(" {}", i18n.unit("value-s", s, 1))}
                                            </td>
                                        }.into_any(),
                                        None => view! { <td>"—"</td> }.into_any(),
                                    };
                                    view! {
                                        <tr data-phase=phase.as_str()>
                                            <th scope="row">{move || i18n.t(&format!("phase-{}", phase.as_str()))}</th>
                                            {cell(a, "this")}
                                            {if has_previous { cell(b, "previous") } else { view! { <td>"—"</td> }.into_any() }}
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </section>
                })
            })}
        </Transition>
    }
}
