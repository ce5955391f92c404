//! The fleet page: every engine on every host, its state and load, sortable by any figure.

use crate::api::list_engines;
use crate::components::{use_event_stream, use_i18n, SimulatedBadge, StateBadge};
use crate::domain::engine::{EngineState, EngineStatus};
use crate::i18n::duration;
use crate::pages::ErrorNote;
use leptos::prelude::*;

/// The fleet table, rendered on the server and kept live by the console's event stream.
#[component]
pub fn FleetPage() -> impl IntoView {
    let i18n = use_i18n();
    let initial = Resource::new(|| (), |_| list_engines());
    let live: RwSignal<Option<Vec<EngineStatus>>> = RwSignal::new(None);
    // The chosen sort outlives each update of the rows.
    provide_context(RwSignal::new((SortKey::State, false)));
    use_event_stream(
        || crate::api::FLEET_STREAM.to_string(),
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

/// A sortable column of the fleet table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    State,
    Host,
    Profile,
    Waiting,
    Kv,
    TtftP95,
    TpotP95,
    GpuMem,
    GpuTemp,
}

impl SortKey {
    pub const ALL: [SortKey; 9] = [
        SortKey::State,
        SortKey::Host,
        SortKey::Profile,
        SortKey::Waiting,
        SortKey::Kv,
        SortKey::TtftP95,
        SortKey::TpotP95,
        SortKey::GpuMem,
        SortKey::GpuTemp,
    ];

    /// Column id: `col-…` locale keys and `data-sort` in tests.
    pub fn id(self) -> &'static str {
        match self {
            SortKey::State => "state",
            SortKey::Host => "host",
            SortKey::Profile => "profile",
            SortKey::Waiting => "waiting",
            SortKey::Kv => "kv",
            SortKey::TtftP95 => "ttft-p95",
            SortKey::TpotP95 => "tpot-p95",
            SortKey::GpuMem => "gpu-mem",
            SortKey::GpuTemp => "gpu-temp",
        }
    }

    fn value(self, r: &EngineStatus) -> Option<f64> {
        let live = r.live.as_ref();
        match self {
            SortKey::Waiting => live.and_then(|l| l.waiting),
            SortKey::Kv => live.and_then(|l| l.kv_usage),
            SortKey::TtftP95 => live.and_then(|l| l.ttft_p95_ms),
            SortKey::TpotP95 => live.and_then(|l| l.itl_p95_ms),
            SortKey::GpuMem => r.gpu.as_ref().map(|g| g.memory_used_gib),
            SortKey::GpuTemp => r.gpu.as_ref().and_then(|g| g.temperature_c),
            SortKey::State | SortKey::Host | SortKey::Profile => None,
        }
    }
}

/// Trouble first: what needs an operator sorts above what is fine or stopped on purpose.
fn severity(s: EngineState) -> u8 {
    match s {
        EngineState::Dead => 0,
        EngineState::Hung => 1,
        EngineState::Unreachable => 2,
        EngineState::Unhealthy => 3,
        EngineState::Starting => 4,
        EngineState::Healthy => 5,
        EngineState::Stopped => 6,
    }
}

/// Sorts fleet rows by a column; rows without a value go last either way, ties by host and
/// profile so the order is stable between updates.
pub fn sort_rows(rows: &mut [EngineStatus], key: SortKey, descending: bool) {
    use std::cmp::Ordering;
    rows.sort_by(|a, b| {
        let primary = match key {
            SortKey::State => severity(a.state).cmp(&severity(b.state)),
            SortKey::Host => a.node.cmp(&b.node),
            SortKey::Profile => a.profile.cmp(&b.profile),
            _ => match (key.value(a), key.value(b)) {
                (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
                (Some(_), None) => return Ordering::Less,
                (None, Some(_)) => return Ordering::Greater,
                (None, None) => Ordering::Equal,
            },
        };
        let primary = if descending { primary.reverse() } else { primary };
        primary
            .then_with(|| a.node.cmp(&b.node))
            .then_with(|| a.profile.cmp(&b.profile))
    });
}

#[component]
fn FleetTable(rows: Vec<EngineStatus>) -> impl IntoView {
    let i18n = use_i18n();
    let count = rows.iter().filter(|r| !r.profile.is_empty()).count();
    let healthy = rows.iter().filter(|r| r.state == EngineState::Healthy).count();
    let sort = use_context::<RwSignal<(SortKey, bool)>>().unwrap_or_else(|| RwSignal::new((SortKey::State, false)));
    let header = move |key: SortKey| {
        let label = move || i18n.t(&format!("col-{}", key.id()));
        view! {
            <th scope="col" aria-sort=move || match sort.get() {
                (k, false) if k == key => "ascending",
                (k, true) if k == key => "descending",
                _ => "none",
            }>
                <button
                    type="button"
                    class="sort"
                    data-sort=key.id()
                    title=move || i18n.ta("sort-by", &[("column", label().into())])
                    on:click=move |_| sort.update(|(k, desc)| {
                        if *k == key {
                            *desc = !*desc;
                        } else {
                            *k = key;
                            *desc = false;
                        }
                    })
                >
                    {label}
                </button>
            </th>
        }
    };
    let rows = StoredValue::new(rows);
    let sorted = move || {
        let (key, desc) = sort.get();
        let mut rows = rows.get_value();
        sort_rows(&mut rows, key, desc);
        rows
    };
    view! {
        <p class="summary" data-testid="fleet-summary">
            {move || i18n.ta("fleet-engine-count", &[("count", count.into())])}
            " · "
            {move || i18n.ta("fleet-healthy-count", &[("count", healthy.into())])}
        </p>
        {if rows.with_value(Vec::is_empty) {
            view! { <p class="muted">{move || i18n.t("fleet-empty")}</p> }.into_any()
        } else {
            view! {
                <table class="grid" data-testid="fleet-table">
                    <thead>
                        <tr>
                            {header(SortKey::State)}
                            {header(SortKey::Host)}
                            {header(SortKey::Profile)}
                            <th scope="col">{move || i18n.t("col-engine")}</th>
                            <th scope="col">{move || i18n.t("col-address")}</th>
                            {header(SortKey::Waiting)}
                            {header(SortKey::Kv)}
                            {header(SortKey::TtftP95)}
                            {header(SortKey::TpotP95)}
                            {header(SortKey::GpuMem)}
                            {header(SortKey::GpuTemp)}
                            <th scope="col">{move || i18n.t("col-uptime")}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || sorted().into_iter().map(|row| view! { <FleetRow row/> }).collect_view()}
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
    let uptime = row.uptime_s;
    let state = row.state;
    let node = row.node.clone();
    let host_cell = if node.is_empty() {
        view! { <td class="muted">{move || i18n.t("host-local")}</td> }.into_any()
    } else {
        view! { <td>{node.clone()}</td> }.into_any()
    };
    // An unreachable host has no engines to list: one row says so, with the reason.
    if state == EngineState::Unreachable && row.profile.is_empty() {
        let host = node.clone();
        let reason = row.note.clone().unwrap_or_default();
        return view! {
            <tr data-testid="engine-row" data-host=node.clone() data-state="unreachable">
                <td><StateBadge state=Signal::derive(move || state)/></td>
                {host_cell}
                <td colspan="10" class="note">
                    {move || i18n.ta("fleet-unreachable-host", &[("host", host.clone().into()), ("reason", reason.clone().into())])}
                </td>
            </tr>
        }
        .into_any();
    }
    let href = row.link.clone().unwrap_or_else(|| format!("/engines/{}", row.profile));
    let name = if row.engine == "bare" {
        view! { <td>{row.profile.clone()}</td> }.into_any()
    } else {
        view! { <td><a href=href>{row.profile.clone()}</a></td> }.into_any()
    };
    let address = if row.port == 0 {
        "—".to_string()
    } else {
        format!("{}:{}", row.host, row.port)
    };
    view! {
        <tr data-testid="engine-row" data-profile=row.profile.clone() data-host=node.clone() data-state=state.as_str()>
            <td><StateBadge state=Signal::derive(move || state)/></td>
            {host_cell}
            {name}
            <td>
                {format!("{} ({})", row.engine, row.kind.as_str())}
                " "
                {row.simulated.then(|| view! { <SimulatedBadge/> })}
            </td>
            <td class="mono">{address}</td>
            {live_cells(&row, i18n)}
            <td>{move || uptime.map(|s| duration(i18n.lang.get(), s)).unwrap_or_else(|| "—".into())}</td>
        </tr>
    }
    .into_any()
}

/// Waiting, KV %, TTFT p95, TPOT p95 and the engine's GPUs; "—" with the reason as a tooltip
/// when there are none.
fn live_cells(row: &EngineStatus, i18n: crate::components::I18n) -> impl IntoView {
    let live = row.live.clone();
    let why = row
        .metrics_note
        .clone()
        .or_else(|| row.note.clone())
        .unwrap_or_default();
    let cell = move |v: Option<String>, testid: &'static str| {
        let why = why.clone();
        match v {
            Some(text) => view! { <td class="num" data-testid=testid>{text}</td> }.into_any(),
            None => view! { <td class="num muted" data-testid=testid title=why>"—"</td> }.into_any(),
        }
    };
    let l = live.as_ref();
    let g = row.gpu.as_ref();
    view! {
        {cell(l.and_then(|l| l.waiting).map(|v| format!("{v:.0}")), "waiting")}
        {cell(l.and_then(|l| l.kv_usage).map(|v| format!("{:.0}%", v * 100.0)), "kv")}
        {cell(l.and_then(|l| l.ttft_p95_ms).map(|v| i18n.ms(v)), "ttft-p95")}
        {cell(l.and_then(|l| l.itl_p95_ms).map(|v| i18n.ms(v)), "tpot-p95")}
        {cell(g.map(|g| i18n.gib_of(g.memory_used_gib, g.memory_total_gib, 1, 0)), "gpu-mem")}
        {cell(g.and_then(|g| g.temperature_c).map(|t| i18n.unit("value-c", t, 0)), "gpu-temp")}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(profile: &str, node: &str, state: EngineState, waiting: Option<f64>) -> EngineStatus {
        let mut r: EngineStatus = serde_json::from_value(serde_json::json!({
            "profile": profile, "engine": "e", "kind": "vllm", "simulated": false, "host": "h", "port": 1,
            "state": state, "pid": null, "uptime_s": null, "phase": null, "failure": null, "note": null
        }))
        .unwrap();
        r.node = node.into();
        r.live = waiting.map(|w| crate::domain::signals::Live {
            waiting: Some(w),
            ..Default::default()
        });
        r
    }

    #[test]
    fn trouble_sorts_first_and_missing_values_last() {
        let mut rows = vec![
            row("a", "", EngineState::Healthy, Some(3.0)),
            row("b", "gpu-b", EngineState::Dead, None),
            row("c", "", EngineState::Hung, Some(40.0)),
            row("d", "", EngineState::Stopped, None),
        ];
        sort_rows(&mut rows, SortKey::State, false);
        let names = |rows: &[EngineStatus]| rows.iter().map(|r| r.profile.clone()).collect::<Vec<_>>().join("");
        assert_eq!(names(&rows), "bcad");
        sort_rows(&mut rows, SortKey::Waiting, true);
        assert_eq!(&names(&rows)[..2], "ca");
        sort_rows(&mut rows, SortKey::Waiting, false);
        assert_eq!(&names(&rows)[..2], "ac", "no value goes last in both directions");
        sort_rows(&mut rows, SortKey::Host, true);
        assert_eq!(rows[0].profile, "b");
    }
}
