//! The engine page, in sections that each fit a screen (`sections`): the overview (state,
//! serve / stop / restart with confirmation, startup progress, the failure diagnosis from the
//! runbook's table), live charts with the state timeline, the live log tail, runs
//! (smoke-toolcall, bench, past startups), the GPUs with the KV check, and the profile's
//! command line. The current incident, if any, is linked above them all. Its panels live
//! beside it: `charts`, `runs`, `startups`, `timeline`.

mod charts;
mod runs;
mod sections;
mod startups;
mod timeline;

use crate::api::{get_engine, EngineAction, EngineDetail, EngineEvent, RunEngineAction};
use crate::components::{
    use_event_stream, use_i18n, ConfirmDialog, DemoTrafficBadge, PhaseSteps, SimulatedBadge, StateBadge,
};
use crate::domain::engine::{EngineState, EngineStatus};
use crate::domain::flagmap::display_argv;
use crate::domain::gpu::GpuState;
use crate::domain::series::{Point, Range};
use crate::i18n::duration;
use crate::pages::gpu::GpuPanel;
use crate::pages::incidents::OpenIncidentButton;
use crate::pages::on_demand::LoadedView;
use crate::pages::ErrorNote;
pub use charts::{charts_section, ChartsArgs};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
pub use runs::{runs_section, RunsArgs};
use sections::{LazySectionPanel, Section, SectionNav, SectionPanel};
use startups::StallWarning;

/// Lines of log the page keeps; older ones scroll away (the full log is on disk).
const LOG_LINES_KEPT: usize = 500;

#[component]
pub fn EnginePage() -> impl IntoView {
    let params = use_params_map();
    let profile = move || params.read().get("profile").unwrap_or_default();
    let detail = crate::api::wire::data(profile, get_engine);
    crate::pages::loaded(detail, |d| view! { <EngineView detail=d/> }.into_any())
}

#[component]
fn EngineView(detail: EngineDetail) -> impl IntoView {
    let i18n = use_i18n();
    let profile = detail.status.profile.clone();
    let status = RwSignal::new(detail.status.clone());
    let log = RwSignal::new(detail.log_tail.clone());
    let run = RwSignal::new(detail.run.clone());
    let gpu = RwSignal::new(detail.gpu.clone());
    let points: RwSignal<Vec<Point>> = RwSignal::new(Vec::new());
    let incident: RwSignal<Option<i64>> = RwSignal::new(None);
    let range = RwSignal::new(Range::Last15m);
    let stream_url = crate::api::engine_stream(&profile);
    use_event_stream(
        move || stream_url.clone(),
        move |ev: EngineEvent| {
            status.set(ev.status);
            run.set(ev.run);
            if incident.get_untracked() != ev.incident {
                incident.set(ev.incident);
            }
            if let Some(g) = ev.gpu {
                gpu.set(g);
            }
            if !ev.points.is_empty() {
                let secs = range.get_untracked().secs();
                points.update(|p| crate::charts::merge(p, ev.points, secs));
            }
            log.update(|lines| {
                if ev.reset {
                    lines.clear();
                }
                lines.extend(ev.lines);
                let excess = lines.len().saturating_sub(LOG_LINES_KEPT);
                lines.drain(..excess);
            });
        },
    );

    let action = ServerAction::<RunEngineAction>::new();
    let pending_confirm: RwSignal<Option<EngineAction>> = RwSignal::new(None);
    let state = Signal::derive(move || status.read().state);
    let profile_for_msg = profile.clone();
    let confirm_message = Signal::derive(move || {
        pending_confirm
            .get()
            .map(|a| {
                i18n.ta(
                    &format!("confirm-{}", a.as_str()),
                    &[("profile", profile_for_msg.clone().into())],
                )
            })
            .unwrap_or_default()
    });
    let profile_for_action = profile.clone();
    let on_confirm = Callback::new(move |_| {
        if let Some(a) = pending_confirm.get_untracked() {
            action.dispatch(RunEngineAction {
                profile: profile_for_action.clone(),
                action: a,
            });
        }
        pending_confirm.set(None);
    });
    let on_cancel = Callback::new(move |_| pending_confirm.set(None));
    let operator = crate::components::can(crate::domain::auth::Role::Operator);
    let button = move |a: EngineAction, enabled: fn(&EngineStatus) -> bool| {
        view! {
            <button
                type="button"
                data-testid=format!("action-{}", a.as_str())
                title=move || (!operator).then(|| i18n.t("needs-operator"))
                disabled=move || !operator || !status.with(enabled) || action.pending().get()
                on:click=move |_| pending_confirm.set(Some(a))
            >
                {move || i18n.t(&format!("action-{}", a.as_str()))}
            </button>
        }
    };
    let argv_text = display_argv(&detail.argv);
    let log_path = detail.log_path.clone();
    let query = leptos_router::hooks::use_query_map();
    let section = Signal::derive(move || query.with(|q| Section::from_query(q.get_str("section"))));
    let healthy = Signal::derive(move || status.read().state == EngineState::Healthy);
    let for_incident = profile.clone();
    let loaders = expect_context::<SectionLoaders>();
    let charts = ChartsArgs {
        profile: profile.clone(),
        status,
        points,
        range,
        gpu,
        long_history: detail.long_history,
        state,
    };
    let runs = RunsArgs {
        profile: profile.clone(),
        run,
        healthy,
    };
    let gpus = GpuArgs {
        profile: profile.clone(),
        gpu,
        healthy,
    };
    let profile_href = format!("/profiles/{profile}");

    view! {
        <section class="engine">
            <div class="page-head">
                <h1>{profile.clone()}</h1>
                <StateBadge state/>
                {detail.status.simulated.then(|| view! { <SimulatedBadge/> })}
                {detail.status.demo_traffic.then(|| view! { <DemoTrafficBadge/> })}
            </div>
            {move || incident.get().map(|id| view! {
                <p class="incident-banner" role="status" data-testid="current-incident">
                    <a href=format!("/incidents/{id}")>{move || i18n.ta("engine-current-incident", &[("id", id.into())])}</a>
                </p>
            })}
            <SectionNav profile=profile.clone() current=section/>
            <SectionPanel section=Section::Overview current=section>
                <StatusFacts status/>
                <div class="actions" role="toolbar" aria-label=move || i18n.t("actions-label")>
                    // A dead engine whose processes survive is stopped, not served beside.
                    {button(EngineAction::Serve, |s| !s.state.is_running() && !s.has_survivors())}
                    {button(EngineAction::Stop, |s| s.state.is_running() || s.has_survivors())}
                    {button(EngineAction::Restart, |s| s.state.is_running() || s.has_survivors())}
                    <Show when=move || action.pending().get()>
                        <span class="muted" data-testid="action-pending">{move || i18n.t("action-pending")}</span>
                    </Show>
                </div>
                <ConfirmDialog
                    open=Signal::derive(move || pending_confirm.get().is_some())
                    message=confirm_message
                    on_confirm
                    on_cancel
                />
                {move || match action.value().get() {
                    Some(Err(e)) => Some(view! { <ErrorNote error=e/> }),
                    _ => None,
                }}
                <Show when=move || state.get() == EngineState::Starting>
                    <h2>{move || i18n.t("startup-progress")}</h2>
                    <PhaseSteps phase=Signal::derive(move || status.read().phase)/>
                    <StallWarning stall=Signal::derive(move || status.read().stall)/>
                </Show>
                <FailurePanel status/>
                <OpenIncidentButton profile=for_incident/>
            </SectionPanel>
            <LazySectionPanel section=Section::Charts current=section load=move || (loaders.charts)(charts.clone())/>
            <SectionPanel section=Section::Log current=section>
                <h2>{move || i18n.t("engine-log")}</h2>
                <p class="muted mono">{log_path}</p>
                <pre class="log" data-testid="log" tabindex="0" aria-live="polite">
                    {move || log.get().join("\n")}
                </pre>
            </SectionPanel>
            <LazySectionPanel section=Section::Runs current=section load=move || (loaders.runs)(runs.clone())/>
            <LazySectionPanel section=Section::Gpu current=section load=move || (loaders.gpu)(gpus.clone())/>
            <SectionPanel section=Section::Profile current=section>
                <h2>{move || i18n.t("engine-command")}</h2>
                <pre class="argv" data-testid="argv">{argv_text}</pre>
                <p>
                    <a href=profile_href data-testid="engine-profile-link">{move || i18n.t("engine-open-profile")}</a>
                </p>
            </SectionPanel>
        </section>
    }
}

/// How the sections drawn when first shown get their views: provided by the shell, each
/// fetched from a part of the bundle of its own (`crate::lazy_pages`). The page does not know
/// how the bundle is split, and must not call the sections' code itself: whatever it calls is
/// loaded with it.
#[derive(Clone, Copy)]
pub struct SectionLoaders {
    pub charts: fn(ChartsArgs) -> LoadedView,
    pub runs: fn(RunsArgs) -> LoadedView,
    pub gpu: fn(GpuArgs) -> LoadedView,
}

/// What the GPU section takes from the engine page.
#[derive(Clone)]
pub struct GpuArgs {
    pub profile: String,
    pub gpu: RwSignal<GpuState>,
    pub healthy: Signal<bool>,
}

/// The GPU section: the engine's GPUs and the KV-cache check against its startup log. Loaded
/// in its own part of the bundle when first shown (`crate::lazy_pages`).
pub fn gpu_section(a: GpuArgs) -> AnyView {
    view! {
        <GpuPanel gpu=a.gpu/>
        <crate::pages::vram::EngineKvCheck profile=a.profile healthy=a.healthy/>
    }
    .into_any()
}

#[component]
fn StatusFacts(status: RwSignal<EngineStatus>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <dl class="facts">
            <dt>{move || i18n.t("col-engine")}</dt>
            <dd>{move || { let s = status.read(); format!("{} ({})", s.engine, s.kind.as_str()) }}</dd>
            <dt>{move || i18n.t("col-address")}</dt>
            <dd class="mono">{move || { let s = status.read(); format!("{}:{}", s.host, s.port) }}</dd>
            <dt>{move || i18n.t("col-pid")}</dt>
            <dd class="mono" data-testid="pid">{move || status.read().pid.map(|p| p.to_string()).unwrap_or_else(|| "—".into())}</dd>
            <dt>{move || i18n.t("col-running")}</dt>
            <dd data-testid="live-running">{move || live_text(&status.read(), |l| l.running.map(|v| format!("{v:.0}")))}</dd>
            <dt>{move || i18n.t("col-waiting")}</dt>
            <dd data-testid="live-waiting">{move || live_text(&status.read(), |l| l.waiting.map(|v| format!("{v:.0}")))}</dd>
            <dt>{move || i18n.t("col-kv")}</dt>
            <dd data-testid="live-kv">{move || live_text(&status.read(), |l| l.kv_usage.map(|v| format!("{:.0}%", v * 100.0)))}</dd>
            <dt>{move || i18n.t("col-ttft-p95")}</dt>
            <dd>{move || live_text(&status.read(), |l| l.ttft_p95_ms.map(|v| i18n.ms(v)))}</dd>
            <dt>{move || i18n.t("col-itl-p95")}</dt>
            <dd>{move || live_text(&status.read(), |l| l.itl_p95_ms.map(|v| i18n.ms(v)))}</dd>
            <dt>{move || i18n.t("col-probe")}</dt>
            <dd data-testid="probe">{move || status.read().probe_ms.map(|v| i18n.ms(v)).unwrap_or_else(|| "—".into())}</dd>
            <dt>{move || i18n.t("col-uptime")}</dt>
            <dd>{move || status.read().uptime_s.map(|s| duration(i18n.lang.get(), s)).unwrap_or_else(|| "—".into())}</dd>
        </dl>
        {move || status.read().note_text(i18n.lang.get()).map(|n| view! { <p class="note" data-testid="note">{n}</p> })}
        {move || status.read().metrics_note.clone().map(|n| view! { <p class="note" data-testid="metrics-note">{n}</p> })}
    }
}

/// The last start's failure, explained by the runbook's startup-failure table.
#[component]
fn FailurePanel(status: RwSignal<EngineStatus>) -> impl IntoView {
    let i18n = use_i18n();
    move || {
        status.read().failure.clone().map(|f| {
            let id = f.row.id();
            view! {
                <div class="failure" role="alert" data-testid="failure" data-row=id>
                    <h2>{move || i18n.t("failure-title")}</h2>
                    <dl>
                        <dt>{move || i18n.t("failure-symptom")}</dt>
                        <dd>{move || i18n.t(&format!("startup-failure-{id}-symptom"))}</dd>
                        <dt>{move || i18n.t("failure-cause")}</dt>
                        <dd>{move || i18n.t(&format!("startup-failure-{id}-cause"))}</dd>
                        <dt>{move || i18n.t("failure-action")}</dt>
                        <dd>{move || i18n.t(&format!("startup-failure-{id}-action"))}</dd>
                    </dl>
                    <pre class="log">{f.line.clone()}</pre>
                </div>
            }
        })
    }
}

/// A live value, or "—" (with the collector's reason in the note below the facts).
fn live_text(status: &EngineStatus, pick: impl Fn(&crate::domain::signals::Live) -> Option<String>) -> String {
    status.live.as_ref().and_then(pick).unwrap_or_else(|| "—".into())
}
