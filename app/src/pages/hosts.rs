//! Hosts: the consoles sharing this console's database (a fleet on PostgreSQL), each with
//! whether it is heard from, and the jobs one host asks of another: serve, stop or restart an
//! engine there, read its log, run a smoke test, a bench or a change's gate there, or open an
//! incident with the evidence read there. A job is queued here and performed by that host's console;
//! the list follows it live (the record stream's `jobs` version), on every host.

use crate::api::{
    list_hosts, list_jobs, list_profiles, BenchRequest, HostRow, JobAction, JobArgs, JobRow, JobState,
    RequestHostAction,
};
use crate::components::{use_i18n, Grid, Head, I18n};
use crate::pages::ErrorNote;
use leptos::prelude::*;

#[component]
pub fn HostsPage() -> impl IntoView {
    let i18n = use_i18n();
    let hosts = crate::api::wire::data(|| (), |_| list_hosts());
    let jobs = crate::api::wire::data(|| (), |_| list_jobs());
    crate::components::use_record_changes(
        |v| v.jobs,
        move || {
            jobs.refetch();
            hosts.refetch();
        },
    );
    view! {
        <section class="hosts">
            <div class="page-head"><h1>{move || i18n.t("hosts-title")}</h1></div>
            <p class="muted">{move || i18n.t("hosts-intro")}</p>
            {crate::pages::loaded_rows(hosts, "hosts-empty", move |rows| view! { <HostTable rows/> }.into_any())}
            <RequestForm hosts/>
            <h2>{move || i18n.t("jobs-title")}</h2>
            {crate::pages::loaded_rows(jobs, "jobs-empty", move |rows| {
                let unreachable: Vec<String> = hosts
                    .get_untracked()
                    .and_then(Result::ok)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|h| !h.reachable)
                    .map(|h| h.name)
                    .collect();
                view! { <JobTable rows unreachable/> }.into_any()
            })}
        </section>
    }
}

#[component]
fn HostTable(rows: Vec<HostRow>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <Grid heads=vec![Head::t("host-col-name"), Head::t("host-col-state"), Head::t("host-col-console"), Head::t("host-col-gpus"), Head::t("host-col-installations"), Head::t("host-col-version")] testid="host-table">
            {rows.into_iter().map(|h| {
                let seconds = h.heartbeat_age_s;
                let reachable = h.reachable;
                view! {
                    <tr data-testid="host-row" data-host=h.name.clone() data-reachable=reachable.to_string()>
                        <td>
                            {h.name.clone()}
                            {h.this.then(|| view! { " " <span class="muted">{move || i18n.t("host-this")}</span> })}
                        </td>
                        <td class=if reachable { "ok" } else { "error" }>
                            {move || i18n.ta(if reachable { "host-reachable" } else { "host-unreachable" }, &[("seconds", seconds.into())])}
                        </td>
                        <td>{(!h.url.is_empty()).then(|| view! { <a href=h.url.clone()>{h.url.clone()}</a> })}</td>
                        <td>{
                            // In a closure: "no GPUs" follows the page's language.
                            let gpus = (!h.gpus.is_empty()).then(|| h.gpus.join(", "));
                            move || gpus.clone().unwrap_or_else(|| i18n.t("host-no-gpus"))
                        }</td>
                        <td>{h.installations.join(", ")}</td>
                        <td class="mono">{h.version.clone()}</td>
                    </tr>
                }
            }).collect_view()}
        </Grid>
    }
}

/// The job request: host and profile preselected from the address (`?host=&profile=`, the
/// fleet's link on another host's engine), the action, a reason for the journal.
#[component]
fn RequestForm(hosts: crate::api::wire::Data<Result<Vec<HostRow>, crate::api::ApiError>>) -> impl IntoView {
    let i18n = use_i18n();
    let query = leptos_router::hooks::use_query_map();
    let host = RwSignal::new(query.with_untracked(|q| q.get("host")).unwrap_or_default());
    let profile = RwSignal::new(query.with_untracked(|q| q.get("profile")).unwrap_or_default());
    let action = RwSignal::new(JobAction::Restart);
    let reason = RwSignal::new(String::new());
    // The engine page's bench defaults; the change a gate job runs; the evidence's reading.
    let bench = RwSignal::new(BenchRequest {
        requests: 100,
        concurrency: 8,
        input_len: 512,
        output_len: 128,
    });
    let change = RwSignal::new(
        query
            .with_untracked(|q| q.get("change"))
            .and_then(|c| c.parse::<i64>().ok()),
    );
    let clients_see_errors = RwSignal::new(false);
    let profiles = crate::api::wire::data(|| (), |_| list_profiles());
    let request = ServerAction::<RequestHostAction>::new();
    let operator = crate::components::can(crate::domain::auth::Role::Operator);
    let host_names = move || {
        hosts
            .get()
            .and_then(Result::ok)
            .unwrap_or_default()
            .into_iter()
            .map(|h| h.name)
            .collect::<Vec<_>>()
    };
    let profile_names = move || {
        profiles
            .get()
            .and_then(Result::ok)
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
    };
    // The first host and profile once they are known, unless the address chose.
    Effect::new(move |_| {
        if host.with_untracked(String::is_empty) {
            if let Some(first) = host_names().into_iter().next() {
                host.set(first);
            }
        }
        if profile.with_untracked(String::is_empty) {
            if let Some(first) = profile_names().into_iter().next() {
                profile.set(first);
            }
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let action = action.get_untracked();
        let args = JobArgs {
            bench: (action == JobAction::Bench).then(|| bench.get_untracked()),
            change: if action == JobAction::Gate {
                change.get_untracked()
            } else {
                None
            },
            clients_see_errors: action == JobAction::Evidence && clients_see_errors.get_untracked(),
            ..JobArgs::default()
        };
        request.dispatch(RequestHostAction {
            host: host.get_untracked(),
            profile: profile.get_untracked(),
            action,
            args,
            reason: reason.get_untracked(),
        });
    };
    // Read inside the transition: the lists arrive with the page (server render and
    // hydration agree), and a refetch redraws the form from the same signals.
    view! {
        <Transition fallback=|| ()>
            {move || {
                let (hosts, profiles) = (host_names(), profile_names());
                view! {
                    <form class="job-request" data-testid="job-request" on:submit=submit>
                        <h2>{move || i18n.t("job-request-title")}</h2>
                        <label>{move || i18n.t("job-field-host")}
                            <select data-testid="job-host" on:change=move |ev| host.set(event_target_value(&ev))>
                                {hosts.into_iter().map(|n| view! { <option value=n.clone() selected=move || host.get() == n>{n.clone()}</option> }).collect_view()}
                            </select>
                        </label>
                        <label>{move || i18n.t("job-field-profile")}
                            <select data-testid="job-profile" on:change=move |ev| profile.set(event_target_value(&ev))>
                                {profiles.into_iter().map(|n| view! { <option value=n.clone() selected=move || profile.get() == n>{n.clone()}</option> }).collect_view()}
                            </select>
                        </label>
                        <label>{move || i18n.t("job-field-action")}
                            <select data-testid="job-action" on:change=move |ev| {
                                if let Some(a) = JobAction::parse(&event_target_value(&ev)) { action.set(a) }
                            }>
                                {JobAction::asked().map(|a| view! {
                                    <option value=a.as_str() selected=move || action.get() == a>{move || action_text(i18n, a)}</option>
                                }).collect_view()}
                            </select>
                        </label>
                        <JobArgsFields action bench change clients_see_errors/>
                        <label>{move || i18n.t("job-field-reason")}
                            <input type="text" data-testid="job-reason" maxlength="2000" prop:value=move || reason.get() on:input=move |ev| reason.set(event_target_value(&ev))/>
                        </label>
                        <button type="submit" data-testid="job-submit" disabled=move || !operator || request.pending().get()
                            title=move || if operator { String::new() } else { i18n.t("needs-operator") }>
                            {move || i18n.t("job-request")}
                        </button>
                    </form>
                }
            }}
        </Transition>
        {move || match request.value().get() {
            Some(Ok(id)) => Some(view! {
                <p class="ok" role="status" data-testid="job-queued" data-job=id>
                    {move || i18n.ta("job-queued", &[("id", id.into()), ("host", host.get_untracked().into())])}
                </p>
            }.into_any()),
            Some(Err(e)) => Some(view! { <ErrorNote error=e/> }.into_any()),
            None => None,
        }}
    }
}

/// The fields the chosen action reads: a bench's parameters, a gate's change, whether clients
/// see errors for an incident.
#[component]
fn JobArgsFields(
    action: RwSignal<JobAction>,
    bench: RwSignal<BenchRequest>,
    change: RwSignal<Option<i64>>,
    clients_see_errors: RwSignal<bool>,
) -> impl IntoView {
    let i18n = use_i18n();
    let number = move |key: &'static str,
                       testid: &'static str,
                       get: fn(&BenchRequest) -> usize,
                       set: fn(&mut BenchRequest, usize)| {
        view! {
            <label>{move || i18n.t(key)}
                <input type="number" min="1" data-testid=testid prop:value=move || bench.with(get).to_string()
                    on:change=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<usize>() { bench.update(|b| set(b, v)) } }/>
            </label>
        }
    };
    move || {
        match action.get() {
        JobAction::Bench => view! {
            {number("bench-requests", "job-bench-requests", |b| b.requests, |b, v| b.requests = v)}
            {number("bench-concurrency", "job-bench-concurrency", |b| b.concurrency, |b, v| b.concurrency = v)}
            {number("bench-input-len", "job-bench-input-len", |b| b.input_len, |b, v| b.input_len = v)}
            {number("bench-output-len", "job-bench-output-len", |b| b.output_len as usize, |b, v| b.output_len = u32::try_from(v).unwrap_or(u32::MAX))}
        }
        .into_any(),
        JobAction::Gate => view! {
            <label>{move || i18n.t("job-field-change")}
                <input type="number" min="1" required data-testid="job-change"
                    prop:value=move || change.get().map(|c| c.to_string()).unwrap_or_default()
                    on:change=move |ev| change.set(event_target_value(&ev).parse::<i64>().ok())/>
            </label>
        }
        .into_any(),
        JobAction::Evidence => view! {
            <label class="check">
                <input type="checkbox" data-testid="job-clients-errors" prop:checked=move || clients_see_errors.get()
                    on:change=move |ev| clients_see_errors.set(event_target_checked(&ev))/>
                {move || i18n.t("job-field-clients-errors")}
            </label>
        }
        .into_any(),
        _ => ().into_any(),
    }
    }
}

fn action_text(i18n: I18n, a: JobAction) -> String {
    i18n.t(&format!("job-action-{}", a.as_str()))
}

#[component]
fn JobTable(rows: Vec<JobRow>, unreachable: Vec<String>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <Grid heads=vec![Head::text("#"), Head::t("host-col-name"), Head::t("col-profile"), Head::t("job-field-action"), Head::t("job-col-who"), Head::t("col-state"), Head::t("job-col-queued"), Head::t("job-col-outcome")] testid="job-table">
            {rows.into_iter().map(|j| {
                let waits = j.state == JobState::Queued && unreachable.contains(&j.host);
                let state = j.state;
                let host = j.host.clone();
                let who = (j.requested_by.clone(), j.requested_on.clone());
                let outcome = j.outcome.clone().unwrap_or_default();
                let long = j.action.long_outcome() || outcome.lines().count() > 3;
                // What the job made, linked: the incident an evidence job opened, the change a
                // gate ran for.
                let made = match (j.action, j.result_id) {
                    (JobAction::Evidence, Some(id)) => Some((format!("/incidents/{id}"), "job-open-incident", id)),
                    (JobAction::Gate, Some(id)) => Some((format!("/changes/{id}"), "job-open-change", id)),
                    (JobAction::IncidentAction, Some(id)) => Some((format!("/incidents/{id}"), "job-open-incident", id)),
                    _ => None,
                };
                view! {
                    <tr data-testid="job-row" data-job=j.id data-state=state.as_str() data-host=j.host.clone()>
                        <td class="num">{j.id}</td>
                        <td>{j.host.clone()}</td>
                        <td>{j.profile.clone()}</td>
                        <td>{move || action_text(i18n, j.action)}</td>
                        <td>{move || i18n.ta("job-requested", &[("who", who.0.clone().into()), ("host", who.1.clone().into())])}
                            {(!j.reason.is_empty()).then(|| view! { <br/><span class="muted">{j.reason.clone()}</span> })}
                        </td>
                        <td class=match state { JobState::Failed => "error", JobState::Done => "ok", _ => "" }>
                            {move || if waits {
                                i18n.ta("job-waits-unreachable", &[("host", host.clone().into())])
                            } else {
                                i18n.t(&format!("job-state-{}", state.as_str()))
                            }}
                        </td>
                        <td><crate::components::TimeMs ms=j.created_ms/></td>
                        <td data-testid="job-outcome">
                            {made.map(|(href, key, id)| view! {
                                <a href=href data-testid="job-made">{move || i18n.ta(key, &[("id", id.into())])}</a>" "
                            })}
                            {if long {
                                view! { <details><summary>{move || i18n.t("job-outcome-show")}</summary><pre class="log">{outcome.clone()}</pre></details> }.into_any()
                            } else {
                                view! { <span class="mono small">{outcome.clone()}</span> }.into_any()
                            }}
                        </td>
                    </tr>
                }
            }).collect_view()}
        </Grid>
    }
}
