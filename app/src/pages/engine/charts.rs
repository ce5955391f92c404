//! The engine page's live charts: a range picker (15 min, 1 h, 24 h, and 7 and 30 days when
//! the console reads Prometheus), the history for that range fetched once, then new points
//! from the page's one event stream. A chart whose
//! signals have no source says why instead of drawing empty axes.

use crate::charts::{chart, has_source, ChartKind};
use crate::components::{use_i18n, Chart};
use crate::domain::engine::{EngineState, EngineStatus};
use crate::domain::gpu::GpuState;
use crate::domain::series::{Point, Range};
use leptos::prelude::*;

/// What the charts section takes from the engine page, which keeps the points, the status and
/// the GPUs current from its event stream while the section is not shown.
#[derive(Clone)]
pub struct ChartsArgs {
    pub profile: String,
    pub status: RwSignal<EngineStatus>,
    pub points: RwSignal<Vec<Point>>,
    pub range: RwSignal<Range>,
    pub gpu: RwSignal<GpuState>,
    pub long_history: bool,
    pub state: Signal<EngineState>,
}

/// The charts section: the charts and the state timeline. Loaded in its own part of the
/// bundle when first shown (`crate::lazy_pages`).
pub fn charts_section(a: ChartsArgs) -> AnyView {
    view! {
        <ChartsPanel profile=a.profile.clone() status=a.status points=a.points range=a.range gpu=a.gpu long_history=a.long_history/>
        <super::timeline::StateTimelineBar profile=a.profile range=a.range state=a.state/>
    }
    .into_any()
}

/// The charts of one engine. `points` is filled here for the chosen range and extended by the
/// engine page's event stream.
#[component]
pub fn ChartsPanel(
    profile: String,
    status: RwSignal<EngineStatus>,
    points: RwSignal<Vec<Point>>,
    range: RwSignal<Range>,
    gpu: RwSignal<GpuState>,
    /// Prometheus keeps the history: ranges beyond the console's own day are offered.
    long_history: bool,
) -> impl IntoView {
    let i18n = use_i18n();
    let loading = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let r = range.get();
        let profile = profile.clone();
        loading.set(true);
        leptos::task::spawn_local(async move {
            if let Ok(p) = crate::api::get_series(profile, r).await {
                points.set(p);
            }
            loading.set(false);
        });
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = profile;
    let range_button = move |r: Range| {
        view! {
            <button
                type="button"
                class="range"
                data-testid=format!("range-{}", r.id())
                aria-pressed=move || (range.get() == r).to_string()
                on:click=move |_| range.set(r)
            >
                {move || i18n.t(&format!("range-{}", r.id()))}
            </button>
        }
    };
    view! {
        <div class="charts-head">
            <h2>{move || i18n.t("charts-title")}</h2>
            <div class="ranges" role="group" aria-label=move || i18n.t("range-label")>
                {Range::ALL
                    .into_iter()
                    .filter(|r| long_history || !r.needs_prometheus())
                    .map(range_button)
                    .collect_view()}
            </div>
            <Show when=move || loading.get()>
                <span class="muted">{move || i18n.t("loading")}</span>
            </Show>
        </div>
        <div class="charts" data-testid="charts">
            {ChartKind::ALL
                .into_iter()
                .map(|kind| view! { <ChartCard kind points status gpu/> })
                .collect_view()}
        </div>
    }
}

#[component]
fn ChartCard(
    kind: ChartKind,
    points: RwSignal<Vec<Point>>,
    status: RwSignal<EngineStatus>,
    gpu: RwSignal<GpuState>,
) -> impl IntoView {
    let i18n = use_i18n();
    let id = kind.id();
    let title = Signal::derive(move || i18n.t(&format!("chart-{id}")));
    let sourced = Memo::new(move |_| points.with(|p| has_source(kind, p)));
    let spec = Signal::derive(move || {
        let lang = i18n.lang.get();
        points.with(|p| chart(kind, p, |k| crate::i18n::tr(lang, &format!("series-{k}"))).to_string())
    });
    let count = Signal::derive(move || points.with(Vec::len));
    let why = move || no_source_reason(kind, &points.read(), &status.read(), &gpu.read(), i18n);
    view! {
        <figure class="chart-card" data-testid=format!("chart-{id}") data-sourced=move || sourced.get().to_string()>
            <figcaption>{title}</figcaption>
            <Show
                when=move || sourced.get()
                fallback=move || view! { <p class="muted nosource" data-testid="nosource">{why}</p> }
            >
                <Chart spec points=count testid=format!("plot-{id}") label=title/>
            </Show>
        </figure>
    }
}

/// Why a chart has nothing to draw, in the operator's words.
fn no_source_reason(
    kind: ChartKind,
    points: &[Point],
    status: &EngineStatus,
    gpu: &GpuState,
    i18n: crate::components::I18n,
) -> String {
    if kind.is_gpu() {
        return match gpu {
            GpuState::NoDriver { reason } => i18n.ta("gpu-no-driver", &[("reason", reason.clone().into())]),
            GpuState::Available { .. } if status.simulated => i18n.t("chart-nosource-gpu-simulated"),
            GpuState::Available { .. } => i18n.t("chart-nosource-gpu"),
        };
    }
    if !status.state.is_running() {
        return i18n.t("chart-engine-not-running");
    }
    if let Some(note) = &status.metrics_note {
        return i18n.ta("chart-no-metrics", &[("reason", note.clone().into())]);
    }
    if points.is_empty() {
        return i18n.t("chart-waiting");
    }
    i18n.ta(
        &format!("chart-nosource-{}", kind.id()),
        &[("engine", status.kind.as_str().into())],
    )
}
