//! The fleet page: every engine, its state, and where it listens.

use crate::api::list_engines;
use crate::components::{use_event_stream, use_i18n, SimulatedBadge, StateBadge};
use crate::domain::engine::EngineStatus;
use crate::i18n::duration;
use crate::pages::ErrorNote;
use leptos::prelude::*;

/// The fleet table, rendered on the server and kept live by the console's event stream.
#[component]
pub fn FleetPage() -> impl IntoView {
    let i18n = use_i18n();
    let initial = Resource::new(|| (), |_| list_engines());
    let live: RwSignal<Option<Vec<EngineStatus>>> = RwSignal::new(None);
    use_event_stream(
        || "/api/events/fleet".to_string(),
        move |rows: Vec<EngineStatus>| live.set(Some(rows)),
    );

    view! {
        <section class="fleet">
            <div class="page-head">
                <h1>{move || i18n.t("fleet-title")}</h1>
            </div>
            <Transition fallback=move || view! { <p class="muted">{move || i18n.t("loading")}</p> }>
                {move || {
                    let rows = match live.get() {
                        Some(rows) => Ok(rows),
                        None => initial.get().unwrap_or_else(|| Ok(Vec::new())),
                    };
                    match rows {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(rows) => view! { <FleetTable rows/> }.into_any(),
                    }
                }}
            </Transition>
        </section>
    }
}

#[component]
fn FleetTable(rows: Vec<EngineStatus>) -> impl IntoView {
    let i18n = use_i18n();
    let count = rows.len();
    let healthy = rows
        .iter()
        .filter(|r| r.state == crate::domain::engine::EngineState::Healthy)
        .count();
    view! {
        <p class="summary" data-testid="fleet-summary">
            {move || i18n.ta("fleet-engine-count", &[("count", count.into())])}
            " · "
            {move || i18n.ta("fleet-healthy-count", &[("count", healthy.into())])}
        </p>
        {if rows.is_empty() {
            view! { <p class="muted">{move || i18n.t("fleet-empty")}</p> }.into_any()
        } else {
            view! {
                <table class="grid" data-testid="fleet-table">
                    <thead>
                        <tr>
                            <th scope="col">{move || i18n.t("col-state")}</th>
                            <th scope="col">{move || i18n.t("col-profile")}</th>
                            <th scope="col">{move || i18n.t("col-engine")}</th>
                            <th scope="col">{move || i18n.t("col-address")}</th>
                            <th scope="col">{move || i18n.t("col-waiting")}</th>
                            <th scope="col">{move || i18n.t("col-kv")}</th>
                            <th scope="col">{move || i18n.t("col-ttft-p95")}</th>
                            <th scope="col">{move || i18n.t("col-itl-p95")}</th>
                            <th scope="col">{move || i18n.t("col-uptime")}</th>
                            <th scope="col">{move || i18n.t("col-pid")}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows.into_iter().map(|row| view! { <FleetRow row/> }).collect_view()}
                    </tbody>
                </table>
            }
            .into_any()
        }}
    }
}

#[component]
fn FleetRow(row: EngineStatus) -> impl IntoView {
    let i18n = use_i18n();
    let href = format!("/engines/{}", row.profile);
    let uptime = row.uptime_s;
    let state = row.state;
    view! {
        <tr data-testid="engine-row" data-profile=row.profile.clone()>
            <td><StateBadge state=Signal::derive(move || state)/></td>
            <td><a href=href>{row.profile.clone()}</a></td>
            <td>
                {format!("{} ({})", row.engine, row.kind.as_str())}
                " "
                {row.simulated.then(|| view! { <SimulatedBadge/> })}
            </td>
            <td class="mono">{format!("{}:{}", row.host, row.port)}</td>
            {live_cells(&row)}
            <td>{move || uptime.map(|s| duration(i18n.lang.get(), s)).unwrap_or_else(|| "—".into())}</td>
            <td class="mono">{row.pid.map(|p| p.to_string()).unwrap_or_else(|| "—".into())}</td>
        </tr>
    }
}

/// Waiting, KV %, TTFT p95 and ITL p95 from the live signals; "—" with the reason as a tooltip
/// when there are none.
fn live_cells(row: &EngineStatus) -> impl IntoView {
    let live = row.live.clone();
    let why = row.metrics_note.clone().unwrap_or_default();
    let cell = move |v: Option<String>, testid: &'static str| {
        let why = why.clone();
        match v {
            Some(text) => view! { <td class="num" data-testid=testid>{text}</td> }.into_any(),
            None => view! { <td class="num muted" data-testid=testid title=why>"—"</td> }.into_any(),
        }
    };
    let l = live.as_ref();
    view! {
        {cell(l.and_then(|l| l.waiting).map(|v| format!("{v:.0}")), "waiting")}
        {cell(l.and_then(|l| l.kv_usage).map(|v| format!("{:.0}%", v * 100.0)), "kv")}
        {cell(l.and_then(|l| l.ttft_p95_ms).map(|v| format!("{v:.0} ms")), "ttft-p95")}
        {cell(l.and_then(|l| l.itl_p95_ms).map(|v| format!("{v:.0} ms")), "itl-p95")}
    }
}
