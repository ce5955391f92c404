//! The runs on an engine page: run smoke-toolcall or a bench against the engine, watch
//! progress, and read the last smoke result case by case.

use crate::api::{get_last_smoke, BenchRequest, RunKind, RunStatus, SmokeRun, StartBench, StartSmoke};
use crate::components::use_i18n;
use crate::components::{Grid, Head};
use crate::pages::ErrorNote;
use leptos::prelude::*;

/// What the runs section takes from the engine page (the run's progress comes with its
/// event stream).
#[derive(Clone)]
pub struct RunsArgs {
    pub profile: String,
    pub run: RwSignal<Option<RunStatus>>,
    pub healthy: Signal<bool>,
}

/// The runs section: the run buttons and progress, the last smoke result (fetched again
/// whenever a run started here finishes) and the past startups. Loaded in its own part of the
/// bundle when first shown (`crate::lazy_pages`).
pub fn runs_section(a: RunsArgs) -> AnyView {
    let run = a.run;
    let smoke_profile = a.profile.clone();
    let smoke = crate::api::wire::data(
        move || run.get().and_then(|g| g.result_id),
        move |_| get_last_smoke(smoke_profile.clone()),
    );
    view! {
        <RunPanel profile=a.profile.clone() run=a.run running=a.healthy/>
        <Transition fallback=|| ()>
            {move || smoke.get().and_then(|r| r.ok()).flatten().map(|run| view! { <SmokeResult run/> })}
        </Transition>
        <super::startups::StartupTimeline profile=a.profile healthy=a.healthy/>
    }
    .into_any()
}

/// Buttons, a small bench form, live progress and the outcome of the last step.
#[component]
pub fn RunPanel(
    profile: String,
    #[prop(into)] run: Signal<Option<RunStatus>>,
    #[prop(into)] running: Signal<bool>,
) -> impl IntoView {
    let i18n = use_i18n();
    let smoke = ServerAction::<StartSmoke>::new();
    let bench = ServerAction::<StartBench>::new();
    let requests = RwSignal::new(100usize);
    let concurrency = RwSignal::new(8usize);
    let input_len = RwSignal::new(512usize);
    let output_len = RwSignal::new(128u32);
    let operator = crate::components::can(crate::domain::auth::Role::Operator);
    let busy =
        move || !operator || run.get().is_some_and(|g| g.running) || smoke.pending().get() || bench.pending().get();
    let p_smoke = profile.clone();
    let p_bench = profile.clone();
    let num = |sig: RwSignal<usize>| {
        move |ev: leptos::ev::Event| {
            if let Ok(v) = event_target_value(&ev).parse::<usize>() {
                sig.set(v);
            }
        }
    };
    view! {
        <section class="runs" data-testid="runs">
            <h2>{move || i18n.t("run-title")}</h2>
            <p class="muted">{move || i18n.t("run-hint")}</p>
            <div class="actions">
                <button type="button" data-testid="run-smoke" disabled=move || busy() || !running.get()
                    on:click=move |_| { smoke.dispatch(StartSmoke { profile: p_smoke.clone() }); }>
                    {move || i18n.t("run-start-smoke")}
                </button>
            </div>
            <form class="bench-form" on:submit=move |ev| {
                ev.prevent_default();
                bench.dispatch(StartBench { profile: p_bench.clone(), request: BenchRequest {
                    requests: requests.get_untracked(), concurrency: concurrency.get_untracked(),
                    input_len: input_len.get_untracked(), output_len: output_len.get_untracked() } });
            }>
                <label>{move || i18n.t("bench-requests")}
                    <input type="number" min="1" max="100000" data-testid="bench-requests" prop:value=move || requests.get().to_string() on:change=num(requests)/></label>
                <label>{move || i18n.t("bench-concurrency")}
                    <input type="number" min="1" max="4096" prop:value=move || concurrency.get().to_string() on:change=num(concurrency)/></label>
                <label>{move || i18n.t("bench-input-len")}
                    <input type="number" min="1" prop:value=move || input_len.get().to_string() on:change=num(input_len)/></label>
                <label>{move || i18n.t("bench-output-len")}
                    <input type="number" min="1" prop:value=move || output_len.get().to_string()
                        on:change=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<u32>() { output_len.set(v) } }/></label>
                <button type="submit" data-testid="run-bench" disabled=move || busy() || !running.get()>{move || i18n.t("run-start-bench")}</button>
            </form>
            {move || match (smoke.value().get(), bench.value().get()) {
                (Some(Err(e)), _) | (_, Some(Err(e))) => Some(view! { <ErrorNote error=e/> }),
                _ => None,
            }}
            {move || run.get().map(|g| view! { <RunProgress g/> })}
        </section>
    }
}

#[component]
fn RunProgress(g: RunStatus) -> impl IntoView {
    let i18n = use_i18n();
    let what = match g.kind {
        RunKind::Smoke => "run-smoke",
        RunKind::Bench => "run-bench",
    };
    let total = g.progress.total.max(1);
    let pct = (g.progress.done * 100 / total).min(100);
    let verdict = match (g.running, g.passed, &g.error) {
        (true, _, _) => "run-running",
        (false, _, Some(_)) => "run-error",
        (false, Some(true), _) => "run-passed",
        _ => "run-failed",
    };
    let link = match (g.kind, g.result_id) {
        (RunKind::Bench, Some(id)) => Some(format!("/bench/compare?ids={id}")),
        _ => None,
    };
    view! {
        <div class="run-progress" data-testid="run-progress" data-state=verdict>
            <strong>{move || i18n.t(what)}</strong> " · " <span>{move || i18n.t(verdict)}</span>
            <progress max="100" value=pct.to_string()></progress>
            <span class="muted">{move || i18n.ta("run-done-of", &[("done", g.progress.done.into()), ("total", g.progress.total.into()), ("failed", g.progress.failed.into())])}</span>
            {g.error.clone().map(|e| view! { <p class="error">{e}</p> })}
            {link.map(|href| view! { <a href=href data-testid="bench-result-link">{move || i18n.t("run-open-result")}</a> })}
        </div>
    }
}

/// The last smoke-toolcall run: each case PASS / FAIL with the failed checks, raw answers
/// behind a disclosure.
#[component]
fn SmokeResult(run: SmokeRun) -> impl IntoView {
    let i18n = use_i18n();
    let passed = run.passed;
    view! {
        <section class="smoke" data-testid="smoke-result" data-passed=passed.to_string()>
            <h2>{move || i18n.t("smoke-title")} " "
                <span class=if passed { "badge state-healthy" } else { "badge state-dead" }>
                    {move || i18n.t(if passed { "run-passed" } else { "run-failed" })}
                </span>
            </h2>
            <p class="muted">{format!("#{} · ", run.id)}<crate::components::Time at=run.created_at.clone()/>{format!(" · {}", run.report.model)}</p>
            <Grid heads=vec![Head::t("smoke-case"), Head::t("smoke-verdict"), Head::t("smoke-checks")]>
                    {run.report.cases.into_iter().map(|c| {
                        let verdict = if c.skipped { "skip" } else if c.pass { "pass" } else { "fail" };
                        let case_key = format!("smoke-case-{}", c.case);
                        view! {
                            <tr data-testid="smoke-case" data-case=c.case.clone() data-verdict=verdict>
                                <td>{move || i18n.t(&case_key)}</td>
                                <td><span class=format!("verdict {verdict}")>{move || i18n.t(&format!("smoke-{verdict}"))}</span></td>
                                <td>
                                    <ul class="checks">
                                        {c.failures.into_iter().map(|f| {
                                            let key = format!("smoke-check-{}", f.check);
                                            let known = i18n.has(&key);
                                            view! { <li><code>{f.check.clone()}</code> " " {move || if known { i18n.t(&key) } else { String::new() }} ": " {f.detail}</li> }
                                        }).collect_view()}
                                    </ul>
                                    {(!c.raw.is_empty()).then(|| view! {
                                        <details><summary>{move || i18n.t("smoke-raw")}</summary>
                                            <pre class="log">{c.raw.join("\n\n")}</pre></details>
                                    })}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </Grid>
        </section>
    }
}
