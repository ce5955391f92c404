//! Stored benchmark runs: the list, and two or more runs side by side.

use crate::api::{list_bench_runs, BenchRun};
use crate::components::use_i18n;
use crate::components::{Grid, Head};
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};

#[component]
pub fn BenchListPage() -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let profile = move || query.read().get("profile");
    let runs = crate::api::wire::data(profile, |p| list_bench_runs(p, Vec::new()));
    let picked: RwSignal<Vec<i64>> = RwSignal::new(Vec::new());
    let navigate = use_navigate();
    let compare = move |_| {
        let ids: Vec<String> = picked.get_untracked().iter().map(|i| i.to_string()).collect();
        navigate(&format!("/bench/compare?ids={}", ids.join(",")), Default::default());
    };
    view! {
        <section>
            <div class="page-head">
                <h1>{move || i18n.t("bench-title")}</h1>
                <button type="button" data-testid="compare" disabled=move || picked.get().len() < 2 on:click=compare>
                    {move || i18n.ta("bench-compare", &[("count", picked.get().len().into())])}
                </button>
            </div>
            <p class="muted">{move || i18n.t("bench-hint")}</p>
            {crate::pages::loaded_rows(runs, "bench-empty", move |rows| view! {
                        <Grid heads=vec![Head::text(""), Head::text("#"), Head::t("col-profile"), Head::t("bench-version"), Head::t("bench-load"), Head::t("bench-req-s"), Head::t("bench-tok-s"), Head::text("TTFT p95"), Head::text("TPOT p95"), Head::t("col-updated")] testid="bench-table">
                                {rows.into_iter().map(|r| {
                                    let id = r.id;
                                    view! {
                                        <tr data-testid="bench-row">
                                            <td><input type="checkbox" aria-label=format!("#{id}")
                                                on:change=move |ev| { let on = event_target_checked(&ev); picked.update(|p| { p.retain(|x| *x != id); if on { p.push(id) } }) }/></td>
                                            <td><a href=format!("/bench/compare?ids={id}")>{id}</a></td>
                                            <td>{r.profile.clone().unwrap_or_else(|| r.params.url.clone())}</td>
                                            <td>{r.engine_version.clone().unwrap_or_else(|| "?".into())}</td>
                                            <td class="mono">{load_label(&r)}</td>
                                            <td class="num">{format!("{:.2}", r.summary.request_throughput)}</td>
                                            <td class="num">{format!("{:.1}", r.summary.output_throughput)}</td>
                                            <td class="num">{format!("{:.1}", r.summary.ttft_ms.p95)}</td>
                                            <td class="num">{format!("{:.1}", r.summary.tpot_ms.p95)}</td>
                                            <td><crate::components::Time at=r.created_at.clone()/></td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </Grid>
                    }.into_any())}
        </section>
    }
}

fn load_label(r: &BenchRun) -> String {
    let c = r
        .params
        .concurrency
        .map(|c| format!("c={c}"))
        .unwrap_or_else(|| "c=∞".into());
    let rate = if r.params.rate.is_finite() {
        format!(" r={}", r.params.rate)
    } else {
        String::new()
    };
    format!(
        "{} × {}/{} {c}{rate}",
        r.params.requests, r.params.input_len, r.params.output_len
    )
}

#[component]
pub fn BenchComparePage() -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let ids = move || {
        query
            .read()
            .get("ids")
            .unwrap_or_default()
            .split(',')
            .filter_map(|x| x.trim().parse::<i64>().ok())
            .collect::<Vec<_>>()
    };
    let runs = crate::api::wire::data(ids, |ids| list_bench_runs(None, ids));
    view! {
        <section>
            <div class="page-head"><h1>{move || i18n.t("bench-compare-title")}</h1><a href="/bench">{move || i18n.t("bench-title")}</a></div>
            {crate::pages::loaded(runs, move |rows| view! { <CompareTable rows/> }.into_any())}
        </section>
    }
}

/// Rows of metrics, one column per run; later runs show their change against the first.
#[component]
fn CompareTable(rows: Vec<BenchRun>) -> impl IntoView {
    let i18n = use_i18n();
    type Getter = fn(&BenchRun) -> f64;
    let metrics: Vec<(&'static str, Getter, bool)> = vec![
        ("bench-req-s", |r| r.summary.request_throughput, true),
        ("bench-tok-s", |r| r.summary.output_throughput, true),
        ("bench-ttft-p50", |r| r.summary.ttft_ms.p50, false),
        ("bench-ttft-p95", |r| r.summary.ttft_ms.p95, false),
        ("bench-ttft-p99", |r| r.summary.ttft_ms.p99, false),
        ("bench-tpot-p50", |r| r.summary.tpot_ms.p50, false),
        ("bench-tpot-p95", |r| r.summary.tpot_ms.p95, false),
        ("bench-itl-p95", |r| r.summary.itl_ms.p95, false),
        ("bench-e2el-p95", |r| r.summary.e2el_ms.p95, false),
        ("bench-failed", |r| r.summary.failed as f64, false),
    ];
    let first = rows.first().cloned();
    view! {
        <table class="grid compare" data-testid="compare-table">
            <thead><tr>
                <th scope="col"></th>
                {rows.iter().map(|r| view! {
                    <th scope="col">{format!("#{} {}", r.id, r.profile.clone().unwrap_or_default())}<br/>
                        <span class="muted">{format!("{} · {}", r.engine_version.clone().unwrap_or_else(|| "?".into()), load_label(r))}</span></th>
                }).collect_view()}
            </tr></thead>
            <tbody>
                {metrics.into_iter().map(|(key, get, higher_better)| {
                    let base = first.as_ref().map(get);
                    view! {
                        <tr>
                            <th scope="row">{move || i18n.t(key)}</th>
                            {rows.iter().enumerate().map(|(i, r)| {
                                let v = get(r);
                                let delta = base.filter(|b| i > 0 && *b != 0.0).map(|b| (v - b) / b * 100.0);
                                let class = delta.map(|d| if (d > 0.0) == higher_better { "better" } else if d == 0.0 { "" } else { "worse" }).unwrap_or("");
                                view! { <td class="num">{format!("{v:.2}")} {delta.map(|d| view! { <span class=format!("delta {class}")>{format!(" ({d:+.1}%)")}</span> })}</td> }
                            }).collect_view()}
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
