//! The engine's state across the chosen range, under the charts: one bar of spans coloured by
//! state (healthy, starting, unhealthy, hung, dead, stopped), each with its state and length on
//! hover, and how many starts and hangs or deaths the range held — a hang that flapped back to
//! healthy stays visible after it is over.

use crate::api::get_state_timeline;
use crate::components::use_i18n;
use crate::domain::engine::EngineState;
use crate::domain::series::Range;
use crate::domain::timeline::StateTimeline;
use crate::i18n::duration;
use leptos::prelude::*;

/// Width of the drawing in SVG units (it is stretched to the page's width).
const WIDTH: f64 = 1000.0;

/// Where each span sits in the bar: `(state, x, width)` in [`WIDTH`] units, at least one unit
/// wide so a short hang is still seen.
pub fn layout(t: &StateTimeline) -> Vec<(EngineState, f64, f64, i64)> {
    let total = (t.to_ms - t.from_ms).max(1) as f64;
    t.spans
        .iter()
        .map(|s| {
            let x = (s.from_ms - t.from_ms) as f64 / total * WIDTH;
            let w = ((s.to_ms - s.from_ms) as f64 / total * WIDTH).max(1.0);
            (s.state, x, w, s.to_ms - s.from_ms)
        })
        .collect()
}

#[component]
pub fn StateTimelineBar(
    profile: String,
    range: RwSignal<Range>,
    #[prop(into)] state: Signal<EngineState>,
) -> impl IntoView {
    let i18n = use_i18n();
    // Read again when the range or the engine's state changes.
    let timeline = crate::api::wire::data(
        move || (profile.clone(), range.get(), state.get()),
        |(p, r, _)| get_state_timeline(p, r),
    );
    view! {
        <figure class="state-timeline" data-testid="state-timeline">
            <figcaption>{move || i18n.t("timeline-title")}</figcaption>
            <Transition fallback=|| ()>
                {move || timeline.get().map(|r| match r {
                    Ok(t) if !t.spans.is_empty() => {
                        let summary = i18n.ta("timeline-summary", &[("starts", t.starts.into()), ("incidents", t.incidents.into())]);
                        let states: Vec<&str> = t.spans.iter().map(|s| s.state.as_str()).collect();
                        let bars = layout(&t).into_iter().map(|(st, x, w, ms)| {
                            let title = format!("{} · {}", i18n.t(&format!("state-{}", st.as_str())), duration(i18n.lang.get_untracked(), (ms / 1000).max(0) as u64));
                            view! {
                                <rect class=format!("tl-{}", st.as_str()) x=format!("{x:.1}") y="0" width=format!("{w:.1}") height="16">
                                    <title>{title}</title>
                                </rect>
                            }
                        }).collect_view();
                        view! {
                            <svg class="timeline-bar" viewBox=format!("0 0 {WIDTH} 16") preserveAspectRatio="none" role="img"
                                aria-label=summary.clone() data-states=states.join(",")>
                                {bars}
                            </svg>
                            <p class="muted" data-testid="timeline-summary">{summary}</p>
                        }.into_any()
                    }
                    Ok(_) => view! { <p class="muted" data-testid="timeline-empty">{move || i18n.t("timeline-empty")}</p> }.into_any(),
                    Err(e) => view! { <crate::pages::ErrorNote error=e/> }.into_any(),
                })}
            </Transition>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::timeline::StateSpan;

    #[test]
    fn spans_fill_the_bar_in_proportion_and_a_short_one_stays_visible() {
        let t = StateTimeline {
            from_ms: 0,
            to_ms: 100_000,
            spans: vec![
                StateSpan {
                    state: EngineState::Healthy,
                    from_ms: 0,
                    to_ms: 50_000,
                },
                StateSpan {
                    state: EngineState::Hung,
                    from_ms: 50_000,
                    to_ms: 50_010,
                },
                StateSpan {
                    state: EngineState::Healthy,
                    from_ms: 50_010,
                    to_ms: 100_000,
                },
            ],
            starts: 0,
            incidents: 1,
        };
        let l = layout(&t);
        assert_eq!((l[0].0, l[0].1, l[0].2), (EngineState::Healthy, 0.0, 500.0));
        assert_eq!((l[1].0, l[1].1, l[1].2), (EngineState::Hung, 500.0, 1.0));
        assert!((l[2].1 + l[2].2 - WIDTH).abs() < 1e-9);
    }
}
