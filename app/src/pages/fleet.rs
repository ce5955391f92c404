//! The fleet page: every engine on every host, its state and load, sortable by any figure.

use crate::api::list_engines;
use crate::components::{use_event_stream, use_i18n, DemoTrafficBadge, SimulatedBadge, StateBadge};
use crate::domain::engine::{EngineState, EngineStatus};
use crate::i18n::duration;
use crate::pages::ErrorNote;
use leptos::prelude::*;

/// The fleet table, rendered on the server and kept live by the console's event stream.
#[component]
pub fn FleetPage() -> impl IntoView {
    let i18n = use_i18n();
    let initial = crate::api::wire::data(|| (), |_| list_engines());
    let live: RwSignal<Option<Vec<EngineStatus>>> = RwSignal::new(None);
    // The chosen sort, filter and grouping outlive each update of the rows.
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
                // Inside the transition: the first rows are a resource, read where it may wait.
                {move || {
                    let demo = live.with(|l| l.as_deref().map(demo_only))
                        .or_else(|| initial.get().and_then(|r| r.ok()).map(|rows| demo_only(&rows)))
                        .unwrap_or(false);
                    demo.then(|| view! {
                        <p class="callout" role="note" data-testid="demo-note">
                            {move || i18n.t("fleet-demo-note")}" "
                            <a href="/help/INSTALL.md" rel="external" data-testid="demo-install">{move || i18n.t("fleet-demo-install")}</a>
                            " · "
                            <a href="/help/roofline.toml.example" rel="external">{move || i18n.t("fleet-demo-config")}</a>
                        </p>
                    })
                }}
                {move || initial.get().map(|first| match first {
                    Err(e) if live.with_untracked(Option::is_none) => view! { <ErrorNote error=e/> }.into_any(),
                    first => {
                        let rows = live.get_untracked().or_else(|| first.ok()).unwrap_or_default();
                        view! { <FleetBody rows live/> }.into_any()
                    }
                })}
            </Transition>
        </section>
    }
}

/// Whether this console runs only the demo: engines of its own, every one of them simulated.
/// The fleet page then says what the demo is and how to add a real engine, until there is one.
pub fn demo_only(rows: &[EngineStatus]) -> bool {
    let mut local = rows.iter().filter(|r| r.node.is_empty()).peekable();
    local.peek().is_some() && local.all(|r| r.simulated)
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
pub fn sort_rows<R: std::borrow::Borrow<EngineStatus>>(rows: &mut [R], key: SortKey, descending: bool) {
    use std::cmp::Ordering;
    rows.sort_by(|a, b| {
        let (a, b) = (a.borrow(), b.borrow());
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

/// Points of a row's sparklines: one per fleet update (a second), so the last minute.
pub const TREND_POINTS: usize = 60;

/// One row's live parts: its status, set only when it changed, and its recent waiting and KV
/// figures. Each row's cells read these, so an update touches only the cells that changed
/// instead of rebuilding a thousand rows.
#[derive(Clone, Copy)]
struct RowSignals {
    status: RwSignal<EngineStatus>,
    trend: RwSignal<std::collections::VecDeque<(Option<f64>, Option<f64>)>>,
}

/// A row's identity across updates: its host and profile (a host that did not answer has one
/// row with no profile).
pub fn row_key(r: &EngineStatus) -> String {
    format!("{}\u{1f}{}", r.node, r.profile)
}

/// Whether a row matches what was typed in the search box: every word (case-insensitive) in
/// its profile, host, model, engine, kind, address or state.
pub fn matches(r: &EngineStatus, query: &str) -> bool {
    let hay = format!(
        "{} {} {} {} {} {}:{} {}",
        r.profile,
        if r.node.is_empty() { "local" } else { &r.node },
        r.model_name,
        r.engine,
        r.kind.as_str(),
        r.host,
        r.port,
        r.state.as_str()
    )
    .to_lowercase();
    query.split_whitespace().all(|w| hay.contains(&w.to_lowercase()))
}

/// What the table shows, in order: host headings when grouped, then rows.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Host {
        node: String,
        shown: usize,
        healthy: usize,
        trouble: usize,
        collapsed: bool,
    },
    Row(String),
}

impl Item {
    fn key(&self) -> String {
        match self {
            // A heading's figures are part of its key: a changed count draws a new heading.
            Item::Host {
                node,
                shown,
                healthy,
                trouble,
                collapsed,
            } => format!("host\u{1f}{node}\u{1f}{shown}\u{1f}{healthy}\u{1f}{trouble}\u{1f}{collapsed}"),
            Item::Row(k) => k.clone(),
        }
    }
}

/// Needs an operator: dead, hung, unreachable, unhealthy.
fn trouble(s: EngineState) -> bool {
    severity(s) <= 3
}

/// The rows to show: filtered by search and state, sorted, and grouped by host (hosts in name
/// order, this host first; a collapsed host keeps its heading and hides its rows).
pub fn arrange(
    rows: &[EngineStatus],
    query: &str,
    state: Option<EngineState>,
    sort: (SortKey, bool),
    group: bool,
    collapsed: &std::collections::HashSet<String>,
) -> Vec<Item> {
    // References, not copies: this runs on every update of a thousand rows.
    let mut shown: Vec<&EngineStatus> = rows
        .iter()
        .filter(|r| state.is_none_or(|s| r.state == s) && matches(r, query))
        .collect();
    sort_rows(&mut shown, sort.0, sort.1);
    if !group {
        return shown.iter().map(|r| Item::Row(row_key(r))).collect();
    }
    // A stable sort by host keeps the chosen order inside each host.
    shown.sort_by(|a, b| a.node.cmp(&b.node));
    let mut out = Vec::new();
    for chunk in shown.chunk_by(|a, b| a.node == b.node) {
        let node = chunk[0].node.clone();
        let folded = collapsed.contains(&node);
        out.push(Item::Host {
            shown: chunk.iter().filter(|r| !r.profile.is_empty()).count(),
            healthy: chunk.iter().filter(|r| r.state == EngineState::Healthy).count(),
            trouble: chunk.iter().filter(|r| trouble(r.state)).count(),
            collapsed: folded,
            node,
        });
        if !folded {
            out.extend(chunk.iter().map(|r| Item::Row(row_key(r))));
        }
    }
    out
}

/// Rows drawn above and below the screen, so a scroll or a Tab press finds its row drawn.
pub const OVERSCAN: usize = 10;
/// A row's height before the page has measured one (CSS: `table.fleet-table tbody tr`).
pub const ROW_PX: f64 = 38.0;
/// The screen the server assumes when it renders the table (it knows no viewport): the first
/// rows, the same ones hydration draws, until the browser measures the real screen.
pub const FIRST_SCREEN_PX: f64 = 60.0 * ROW_PX;

/// Which of `total` rows to draw: those on screen plus [`OVERSCAN`] either side. `above_px` is
/// how far the table's first row lies above the top of the screen (negative while the table
/// starts lower down), `screen_px` the screen's height, `row_px` a row's measured height.
/// With a thousand engines only a screenful of rows exists in the page, so an update each second
/// touches tens of rows, not a thousand. Measurements from the browser are not trusted blindly:
/// a zero, negative or non-finite figure falls back to the defaults.
pub fn window(total: usize, above_px: f64, screen_px: f64, row_px: f64) -> (usize, usize) {
    let row = if row_px.is_finite() && row_px >= 1.0 {
        row_px
    } else {
        ROW_PX
    };
    let screen = if screen_px.is_finite() && screen_px > 0.0 {
        screen_px
    } else {
        FIRST_SCREEN_PX
    };
    let above = if above_px.is_finite() { above_px.max(0.0) } else { 0.0 };
    // f64 → usize saturates; far past the end lands on the last screenful.
    let first = (above / row).floor() as usize;
    let on_screen = (screen / row).ceil() as usize + 1;
    let first = first.min(total.saturating_sub(on_screen));
    let start = first.saturating_sub(OVERSCAN);
    let end = first.saturating_add(on_screen).saturating_add(OVERSCAN).min(total);
    (start, end)
}

/// Rows by state, for the header's buttons.
pub fn state_counts(rows: &[EngineStatus]) -> Vec<(EngineState, usize)> {
    let mut counts: Vec<(EngineState, usize)> = EngineState::ALL
        .iter()
        .map(|&s| (s, rows.iter().filter(|r| r.state == s).count()))
        .filter(|(s, n)| *n > 0 || *s == EngineState::Healthy)
        .collect();
    counts.sort_by_key(|(s, _)| severity(*s));
    counts
}

#[component]
fn FleetBody(rows: Vec<EngineStatus>, live: RwSignal<Option<Vec<EngineStatus>>>) -> impl IntoView {
    let i18n = use_i18n();
    let sort = use_context::<RwSignal<(SortKey, bool)>>().unwrap_or_else(|| RwSignal::new((SortKey::State, false)));
    let query = RwSignal::new(String::new());
    let state_filter: RwSignal<Option<EngineState>> = RwSignal::new(None);
    let group = RwSignal::new(false);
    let collapsed: RwSignal<std::collections::HashSet<String>> = RwSignal::new(Default::default());
    let store: StoredValue<std::collections::HashMap<String, RowSignals>> = StoredValue::new(Default::default());
    let snapshot = RwSignal::new(Vec::<EngineStatus>::new());
    let apply = move |rows: Vec<EngineStatus>| {
        store.update_value(|m| {
            let mut seen = std::collections::HashSet::with_capacity(rows.len());
            for r in &rows {
                let key = row_key(r);
                let point = (
                    r.live.as_ref().and_then(|l| l.waiting),
                    r.live.as_ref().and_then(|l| l.kv_usage),
                );
                match m.get(&key) {
                    Some(s) => {
                        if s.status.with_untracked(|old| old != r) {
                            s.status.set(r.clone());
                        }
                        s.trend.update(|t| {
                            if t.len() == TREND_POINTS {
                                t.pop_front();
                            }
                            t.push_back(point);
                        });
                    }
                    None => {
                        m.insert(
                            key.clone(),
                            RowSignals {
                                status: RwSignal::new(r.clone()),
                                trend: RwSignal::new(std::iter::once(point).collect()),
                            },
                        );
                    }
                }
                seen.insert(key);
            }
            m.retain(|k, _| seen.contains(k));
        });
        snapshot.set(rows);
    };
    apply(rows);
    Effect::new(move |_| {
        if let Some(rows) = live.get() {
            apply(rows);
        }
    });
    let items = Memo::new(move |_| {
        snapshot.with(|rows| {
            query.with(|q| collapsed.with(|c| arrange(rows, q, state_filter.get(), sort.get(), group.get(), c)))
        })
    });
    let counts = Memo::new(move |_| snapshot.with(|rows| state_counts(rows)));
    let empty = Memo::new(move |_| snapshot.with(Vec::is_empty));
    let total = Memo::new(move |_| snapshot.with(|rows| rows.iter().filter(|r| !r.profile.is_empty()).count()));
    let healthy =
        Memo::new(move |_| snapshot.with(|rows| rows.iter().filter(|r| r.state == EngineState::Healthy).count()));
    let shown = Memo::new(move |_| items.with(|i| i.iter().filter(|i| matches!(i, Item::Row(_))).count()));
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
    // The rows on screen (see [`window`]): the browser reports where the table is on every
    // scroll and resize, and a row's height; the server and hydration draw the first screenful.
    let tbody = NodeRef::<leptos::html::Tbody>::new();
    let screen = RwSignal::new((0.0, FIRST_SCREEN_PX, ROW_PX));
    let range = Memo::new(move |_| {
        let (above, height, row) = screen.get();
        window(items.with(Vec::len), above, height, row)
    });
    let visible = Memo::new(move |_| {
        let (start, end) = range.get();
        items.with(|i| i.get(start..end).map(<[Item]>::to_vec).unwrap_or_default())
    });
    #[cfg(feature = "hydrate")]
    {
        let measure = move || {
            if let Some((above, height, row)) = tbody.get_untracked().and_then(|el| on_screen(&el)) {
                // Only a changed figure wakes the window (scroll events come every frame); a row
                // height within half a pixel is the same (headings and rows differ a little, and
                // a window that moved by it would measure again and move back).
                let (_, _, was) = screen.get_untracked();
                let row = if (row - was).abs() < 0.5 { was } else { row };
                if screen.with_untracked(|s| *s != (above, height, row)) {
                    screen.set((above, height, row));
                }
            }
        };
        let scroll = window_event_listener(leptos::ev::scroll, move |_| measure());
        let resize = window_event_listener(leptos::ev::resize, move |_| measure());
        on_cleanup(move || {
            scroll.remove();
            resize.remove();
        });
        // Once drawn, and whenever what is drawn changes (a search, a fold, a new sort), the
        // rows' heights are measured again.
        Effect::new(move |_| {
            visible.track();
            measure();
        });
    }
    let pad = move |rows: usize| format!("height: {:.0}px", rows as f64 * screen.with(|s| s.2));
    let row_view = move |index: ReadSignal<usize>, item: Item| {
        // 1-based among all rows, the heading row first (`aria-rowcount` is on the table).
        let rowindex = move || (range.get().0 + index.get() + 2).to_string();
        match item {
            Item::Host {
                node,
                shown,
                healthy,
                trouble,
                collapsed: folded,
            } => {
                let name = node.clone();
                let toggle = move |_| {
                    let name = name.clone();
                    collapsed.update(|c| {
                        if !c.remove(&name) {
                            c.insert(name);
                        }
                    })
                };
                let label = node.clone();
                view! {
                <tr class="host-group" data-testid="host-group" data-host=node.clone() aria-rowindex=rowindex>
                    <th scope="rowgroup" colspan="12">
                        <button type="button" class="linklike" aria-expanded=(!folded).to_string() on:click=toggle>
                            {if folded { "▸ " } else { "▾ " }}
                            {move || if label.is_empty() { i18n.t("host-local") } else { label.clone() }}
                        </button>
                        " "
                        <span class="muted" data-testid="host-group-counts">
                            {move || i18n.ta("fleet-host-counts", &[("count", shown.into()), ("healthy", healthy.into()), ("trouble", trouble.into())])}
                        </span>
                    </th>
                </tr>
            }
            .into_any()
            }
            Item::Row(key) => match store.with_value(|m| m.get(&key).copied()) {
                Some(s) => view! { <FleetRow signals=s rowindex=Signal::derive(rowindex)/> }.into_any(),
                None => ().into_any(),
            },
        }
    };
    view! {
        <p class="summary" data-testid="fleet-summary">
            {move || i18n.ta("fleet-engine-count", &[("count", total.get().into())])}
            " · "
            {move || i18n.ta("fleet-healthy-count", &[("count", healthy.get().into())])}
        </p>
        <div class="fleet-tools">
            <div class="state-filter" role="group" aria-label=move || i18n.t("fleet-filter-state")>
                <button type="button" class="chip" data-testid="state-filter" data-state="all"
                    aria-pressed=move || state_filter.get().is_none().to_string()
                    on:click=move |_| state_filter.set(None)>
                    {move || i18n.ta("fleet-filter-all", &[("count", total.get().into())])}
                </button>
                <For each=move || counts.get() key=|c| *c let:c>
                    {
                        let (st, n) = c;
                        view! {
                            <button type="button" class=format!("chip state-{}", st.as_str()) data-testid="state-filter" data-state=st.as_str()
                                aria-pressed=move || (state_filter.get() == Some(st)).to_string()
                                on:click=move |_| state_filter.update(|f| *f = if *f == Some(st) { None } else { Some(st) })>
                                {move || i18n.t(&format!("state-{}", st.as_str()))}" "<strong>{n}</strong>
                            </button>
                        }
                    }
                </For>
            </div>
            <label class="fleet-search">
                <span class="sr-only">{move || i18n.t("fleet-search")}</span>
                <input type="search" data-testid="fleet-search" placeholder=move || i18n.t("fleet-search")
                    prop:value=move || query.get() on:input=move |ev| query.set(event_target_value(&ev))/>
            </label>
            <label class="fleet-group">
                <input type="checkbox" data-testid="fleet-group" prop:checked=move || group.get()
                    on:change=move |ev| group.set(event_target_checked(&ev))/>
                " "{move || i18n.t("fleet-group-by-host")}
            </label>
            <span class="muted" data-testid="fleet-shown" aria-live="polite">
                {move || (shown.get() != total.get()).then(|| i18n.ta("fleet-shown", &[("shown", shown.get().into()), ("count", total.get().into())]))}
            </span>
        </div>
        // Through a memo: read from `snapshot` itself, this closure would run on every update
        // and build the whole table again (a thousand rows, every second, never finishing).
        {move || if empty.get() {
            view! { <p class="muted">{move || i18n.t("fleet-empty")}</p> }.into_any()
        } else {
            view! {
                <table class="grid fleet-table" data-testid="fleet-table"
                    aria-rowcount=move || (items.with(Vec::len) + 1).to_string()
                    data-shown=move || items.with(Vec::len).to_string()>
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
                    <tbody node_ref=tbody>
                        <tr class="spacer" aria-hidden="true" style=move || pad(range.get().0)><td colspan="12"></td></tr>
                        <ForEnumerate each=move || visible.get() key=Item::key children=row_view/>
                        <tr class="spacer" aria-hidden="true"
                            style=move || pad(items.with(Vec::len).saturating_sub(range.get().1))><td colspan="12"></td></tr>
                    </tbody>
                </table>
            }
            .into_any()
        }}
    }
}

/// Where the table's rows are on screen: how far its first row lies above the top of the
/// screen, the screen's height and the drawn rows' mean height (spacers left out).
#[cfg(feature = "hydrate")]
fn on_screen(tbody: &web_sys::HtmlTableSectionElement) -> Option<(f64, f64, f64)> {
    use wasm_bindgen::JsCast;
    let window = web_sys::window()?;
    let screen = window.inner_height().ok()?.as_f64()?;
    let rows = tbody.rows();
    let (mut top, mut drawn, mut height) = (None, 0u32, 0.0);
    for i in 0..rows.length() {
        let Some(row) = rows.item(i).and_then(|r| r.dyn_into::<web_sys::HtmlElement>().ok()) else {
            continue;
        };
        if row.class_name() == "spacer" {
            if i == 0 {
                top = Some(row.get_bounding_client_rect().top());
            }
            continue;
        }
        drawn += 1;
        height += row.get_bounding_client_rect().height();
    }
    let row = if drawn == 0 { ROW_PX } else { height / f64::from(drawn) };
    Some((-top?, screen, (row * 10.0).round() / 10.0))
}

/// A tiny line of the last minute's values, scaled to `max` (or to the largest value).
#[component]
fn Spark(#[prop(into)] values: Signal<Vec<Option<f64>>>, max: Option<f64>) -> impl IntoView {
    let points = move || {
        values.with(|v| {
            let top = max
                .unwrap_or_else(|| v.iter().flatten().copied().fold(1.0, f64::max))
                .max(f64::MIN_POSITIVE);
            let step = 60.0 / (TREND_POINTS - 1) as f64;
            let offset = TREND_POINTS.saturating_sub(v.len()) as f64 * step;
            v.iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    p.map(|p| {
                        format!(
                            "{:.1},{:.1}",
                            offset + i as f64 * step,
                            15.0 - (p / top).clamp(0.0, 1.0) * 14.0
                        )
                    })
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    view! {
        <svg class="spark" viewBox="0 0 60 16" aria-hidden="true" data-testid="spark"><polyline points=points></polyline></svg>
    }
}

#[component]
fn FleetRow(signals: RowSignals, rowindex: Signal<String>) -> impl IntoView {
    let i18n = use_i18n();
    let RowSignals { status, trend } = signals;
    let row = status.get_untracked();
    let state = Memo::new(move |_| status.with(|r| r.state));
    let node = row.node.clone();
    let host_cell = if node.is_empty() {
        view! { <td class="muted">{move || i18n.t("host-local")}</td> }.into_any()
    } else if row.shared_host && !row.profile.is_empty() {
        // Another host of the shared database: its actions are jobs, asked on the Hosts page.
        let href = format!("/hosts?host={}&profile={}", node, row.profile);
        view! { <td><a href=href data-testid="host-act" title=move || i18n.t("host-act")>{node.clone()}</a></td> }
            .into_any()
    } else {
        view! { <td>{node.clone()}</td> }.into_any()
    };
    // An unreachable host has no engines to list: one row says so, with the reason.
    if row.profile.is_empty() {
        let host = node.clone();
        let reason = Memo::new(move |_| status.with(|r| r.note.clone().unwrap_or_default()));
        return view! {
            <tr data-testid="engine-row" data-host=node.clone() data-state=move || state.get().as_str() aria-rowindex=rowindex>
                <td><StateBadge state=state/></td>
                {host_cell}
                <td colspan="10" class="note">
                    {move || i18n.ta("fleet-unreachable-host", &[("host", host.clone().into()), ("reason", reason.get().into())])}
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
    let why = Memo::new(move |_| {
        let lang = i18n.lang.get();
        status.with(|r| r.metrics_note.clone().or_else(|| r.note_text(lang)).unwrap_or_default())
    });
    // One memo per cell: a cell's text is set only when its own figure moved.
    let cell = move |text: Memo<Option<String>>, testid: &'static str, spark: Option<AnyView>| {
        view! {
            <td class=move || if text.with(Option::is_some) { "num" } else { "num muted" } data-testid=testid
                title=move || if text.with(Option::is_some) { String::new() } else { why.get() }>
                {move || text.get().unwrap_or_else(|| "—".into())}
                {spark}
            </td>
        }
    };
    let live =
        move |f: fn(&crate::domain::signals::Live) -> Option<f64>| move || status.with(|r| r.live.as_ref().and_then(f));
    let waiting = Memo::new({
        let v = live(|l| l.waiting);
        move |_| v().map(|v| format!("{v:.0}"))
    });
    let kv = Memo::new({
        let v = live(|l| l.kv_usage);
        move |_| v().map(|v| format!("{:.0}%", v * 100.0))
    });
    let ttft = Memo::new({
        let v = live(|l| l.ttft_p95_ms);
        move |_| v().map(|v| i18n.ms(v))
    });
    let tpot = Memo::new({
        let v = live(|l| l.itl_p95_ms);
        move |_| v().map(|v| i18n.ms(v))
    });
    let gpu_mem = Memo::new(move |_| {
        status.with(|r| {
            r.gpu
                .as_ref()
                .map(|g| i18n.gib_of(g.memory_used_gib, g.memory_total_gib, 1, 0))
        })
    });
    let gpu_temp = Memo::new(move |_| {
        status.with(|r| {
            r.gpu
                .as_ref()
                .and_then(|g| g.temperature_c)
                .map(|t| i18n.unit("value-c", t, 0))
        })
    });
    let uptime = Memo::new(move |_| status.with(|r| r.uptime_s));
    let waiting_trend = Signal::derive(move || trend.with(|t| t.iter().map(|p| p.0).collect::<Vec<_>>()));
    let kv_trend = Signal::derive(move || trend.with(|t| t.iter().map(|p| p.1).collect::<Vec<_>>()));
    view! {
        <tr data-testid="engine-row" data-profile=row.profile.clone() data-host=node.clone() data-state=move || state.get().as_str() aria-rowindex=rowindex>
            <td><StateBadge state=state/></td>
            {host_cell}
            {name}
            <td>
                {format!("{} ({})", row.engine, row.kind.as_str())}
                " "
                {row.simulated.then(|| view! { <SimulatedBadge/> })}
                {row.demo_traffic.then(|| view! { " " <DemoTrafficBadge/> })}
            </td>
            <td class="mono">{address}</td>
            {cell(waiting, "waiting", Some(view! { " " <Spark values=waiting_trend max=None/> }.into_any()))}
            {cell(kv, "kv", Some(view! { " " <Spark values=kv_trend max=Some(1.0)/> }.into_any()))}
            {cell(ttft, "ttft-p95", None)}
            {cell(tpot, "tpot-p95", None)}
            {cell(gpu_mem, "gpu-mem", None)}
            {cell(gpu_temp, "gpu-temp", None)}
            <td>{move || uptime.get().map(|s| duration(i18n.lang.get(), s)).unwrap_or_else(|| "—".into())}</td>
        </tr>
    }
    .into_any()
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
    fn the_demo_note_stays_until_a_real_engine_of_this_console_exists() {
        let sim = |p: &str, node: &str| {
            let mut r = row(p, node, EngineState::Healthy, None);
            r.simulated = true;
            r
        };
        assert!(!demo_only(&[]));
        assert!(demo_only(&[sim("demo-vllm", ""), sim("demo-sglang", "")]));
        // A remote console's real engines do not end this console's demo.
        assert!(demo_only(&[
            sim("demo-vllm", ""),
            row("prod", "gpu-b", EngineState::Healthy, None)
        ]));
        assert!(!demo_only(&[
            sim("demo-vllm", ""),
            row("prod", "", EngineState::Stopped, None)
        ]));
        assert!(!demo_only(&[row("prod", "gpu-b", EngineState::Healthy, None)]));
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

    #[test]
    fn search_matches_every_word_and_grouping_keeps_the_sort_inside_each_host() {
        let mut rows = vec![
            row("llama-a", "gpu-b", EngineState::Healthy, Some(5.0)),
            row("qwen-b", "gpu-b", EngineState::Dead, None),
            row("llama-c", "", EngineState::Healthy, Some(9.0)),
            row("llama-d", "gpu-a", EngineState::Hung, Some(1.0)),
        ];
        rows[0].model_name = "meta-llama/Llama-3.1-8B".into();
        assert!(matches(&rows[0], "LLAMA gpu-b"));
        assert!(!matches(&rows[0], "llama gpu-a"));
        assert!(matches(&rows[2], "local"), "this host is found as local");
        assert!(matches(&rows[1], "dead"));
        let none = std::collections::HashSet::new();
        let keys = |items: &[Item]| {
            items
                .iter()
                .map(|i| match i {
                    Item::Host { node, .. } => format!("[{node}]"),
                    Item::Row(k) => k.split('\u{1f}').nth(1).unwrap().to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let flat = arrange(&rows, "llama", None, (SortKey::Waiting, true), false, &none);
        assert_eq!(keys(&flat), "llama-c llama-a llama-d");
        let grouped = arrange(&rows, "", None, (SortKey::Waiting, true), true, &none);
        assert_eq!(keys(&grouped), "[] llama-c [gpu-a] llama-d [gpu-b] llama-a qwen-b");
        let Item::Host {
            shown,
            healthy,
            trouble,
            ..
        } = &grouped[4]
        else {
            panic!()
        };
        assert_eq!((*shown, *healthy, *trouble), (2, 1, 1));
        let folded: std::collections::HashSet<String> = ["gpu-b".to_string()].into();
        assert_eq!(
            keys(&arrange(&rows, "", None, (SortKey::Waiting, true), true, &folded)),
            "[] llama-c [gpu-a] llama-d [gpu-b]"
        );
        let dead = arrange(
            &rows,
            "",
            Some(EngineState::Dead),
            (SortKey::State, false),
            false,
            &none,
        );
        assert_eq!(keys(&dead), "qwen-b");
    }

    #[test]
    fn the_window_draws_the_screen_and_a_margin_and_never_runs_past_the_rows() {
        // The server's first screen: 60 rows, plus a row cut by the bottom edge and the margin.
        assert_eq!(window(1000, 0.0, FIRST_SCREEN_PX, ROW_PX), (0, 71));
        // The table starts lower on the page: nothing above it is skipped.
        assert_eq!(window(1000, -300.0, 760.0, 38.0), (0, 31));
        // Scrolled 100 rows in: 10 above, the 21 on screen (20 and a cut one), 10 below.
        assert_eq!(window(1000, 3800.0, 760.0, 38.0), (90, 131));
        // Past the end (the rows shrank under a search): the last screenful, not nothing.
        assert_eq!(window(20, 3800.0, 760.0, 38.0), (0, 20));
        assert_eq!(window(1000, 1e12, 760.0, 38.0), (969, 1000));
        assert_eq!(window(0, 500.0, 760.0, 38.0), (0, 0));
        // Measurements the browser got wrong fall back to the defaults.
        for bad in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
            let (start, end) = window(1000, 0.0, 760.0, bad);
            assert_eq!(start, 0);
            assert!(end > 10 && end < 100, "row height {bad}: {end} rows");
            assert!(window(1000, bad, bad, 38.0).1 <= 1000);
        }
    }

    #[test]
    fn the_header_counts_states_trouble_first_and_always_says_healthy() {
        let rows = vec![
            row("a", "", EngineState::Stopped, None),
            row("b", "", EngineState::Dead, None),
            row("c", "", EngineState::Dead, None),
        ];
        assert_eq!(
            state_counts(&rows),
            vec![
                (EngineState::Dead, 2),
                (EngineState::Healthy, 0),
                (EngineState::Stopped, 1)
            ]
        );
    }
}
