//! Incidents: the list, and the triage wizard of one incident. The wizard shows what each
//! triage step found, the diagnosis with its evidence and the runbook's action, offers the
//! actions one at a time (each confirmed with a reason), then the timeline and the postmortem.

use crate::api::{
    get_incident, list_incidents, IncidentAction, IncidentNote, OpenIncident, ResolveIncident, SavePostmortem,
};
use crate::charts::{chart, ChartKind};
use crate::components::{use_i18n, Chart, I18n};
use crate::components::{Grid, Head};
use crate::domain::incident::{
    action_text, entry_text, offered_actions, reading_text, window_summary, Entry, Incident, Postmortem,
};
use crate::domain::series::Point;
use crate::domain::triage::{Action, Diagnosis, Finding};
use crate::pages::ErrorNote;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_params_map};

/// The engine page's "open incident" control: captures evidence and goes to the wizard.
#[component]
pub fn OpenIncidentButton(profile: String) -> impl IntoView {
    let i18n = use_i18n();
    let open = ServerAction::<OpenIncident>::new();
    let clients = RwSignal::new(false);
    let operator = crate::components::can(crate::domain::auth::Role::Operator);
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(id)) = open.value().get() {
            navigate(&format!("/incidents/{id}"), Default::default());
        }
    });
    view! {
        <div class="open-incident">
            <button
                type="button"
                data-testid="open-incident"
                disabled=move || !operator || open.pending().get()
                title=move || if operator { i18n.t("incident-open-hint") } else { i18n.t("needs-operator") }
                on:click=move |_| {
                    open.dispatch(OpenIncident { profile: profile.clone(), clients_see_errors: clients.get_untracked() });
                }
            >
                {move || i18n.t("incident-open")}
            </button>
            <label class="muted">
                <input type="checkbox" data-testid="clients-see-errors" prop:checked=move || clients.get() on:change=move |ev| clients.set(event_target_checked(&ev))/>
                " "
                {move || i18n.t("incident-clients-errors")}
            </label>
            <Show when=move || open.pending().get()>
                <span class="muted">{move || i18n.t("action-pending")}</span>
            </Show>
            {move || match open.value().get() {
                Some(Err(e)) => Some(view! { <ErrorNote error=e/> }),
                _ => None,
            }}
        </div>
    }
}

#[component]
pub fn IncidentListPage() -> impl IntoView {
    let i18n = use_i18n();
    let list = crate::api::wire::data(|| (), |_| list_incidents());
    crate::components::use_record_changes(|v| v.incidents, move || list.refetch());
    view! {
        <section class="incidents">
            <div class="page-head"><h1>{move || i18n.t("incidents-title")}</h1></div>
            {crate::pages::loaded_rows(list, "incidents-empty", move |rows| view! {
                        <Grid heads=vec![Head::text("#"), Head::t("col-profile"), Head::t("incident-diagnosis"), Head::t("incident-opened"), Head::t("incident-opened-by"), Head::t("col-state")] testid="incident-table">
                                {rows.into_iter().map(|r| {
                                    let rule = r.rule;
                                    view! {
                                        <tr data-testid="incident-row">
                                            <td><a href=format!("/incidents/{}", r.id)>{r.id}</a></td>
                                            <td>{r.profile.clone()}</td>
                                            <td>{move || match rule {
                                                Some(rule) => i18n.t(&format!("rule-{}-diagnosis", rule.id())),
                                                None => i18n.t("incident-no-finding"),
                                            }}</td>
                                            <td><crate::components::Time at=r.opened_at.clone()/></td>
                                            <td>{r.opened_by.clone()}</td>
                                            <td>{move || i18n.t(if r.resolved { "incident-status-resolved" } else { "incident-status-open" })}</td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </Grid>
                    }.into_any())}
        </section>
    }
}

#[component]
pub fn IncidentPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
    let first = crate::api::wire::data(id, get_incident);
    view! {
        {crate::pages::loaded(first, move |inc| view! { <LiveIncident inc/> }.into_any())}
    }
}

/// Keeps the incident current over the record stream (actions run in the background; their
/// outcome and re-check land on the timeline, another operator adds a note) without
/// re-creating the postmortem form the operator is typing into.
#[component]
fn LiveIncident(inc: Incident) -> impl IntoView {
    let state = RwSignal::new(inc.clone());
    let refresh = move || {
        #[cfg(feature = "hydrate")]
        let id = state.with_untracked(|i| i.id);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            if let Ok(next) = get_incident(id).await {
                if state.with_untracked(|cur| *cur != next) {
                    state.set(next);
                }
            }
        });
    };
    crate::components::use_record_changes(|v| v.incidents, refresh);
    let refetch = Callback::new(move |_| refresh());
    view! {
        {move || view! { <Wizard inc=state.get() refetch/> }}
        <PostmortemForm inc state refetch/>
    }
}

#[component]
fn Wizard(inc: Incident, refetch: Callback<()>) -> impl IntoView {
    let i18n = use_i18n();
    let id = inc.id;
    let title = {
        let profile = inc.profile.clone();
        move || {
            i18n.ta(
                "incident-title",
                &[("id", id.into()), ("profile", profile.clone().into())],
            )
        }
    };
    let lang = i18n.lang;
    view! {
        <section class="incident" data-testid="incident" data-id=id>
            <div class="page-head">
                <h1>{title}</h1>
                <span class="badge" data-testid="incident-status">
                    {move || i18n.t(if inc.resolved { "incident-status-resolved" } else { "incident-status-open" })}
                </span>
                <a href=format!("/engines/{}", inc.profile)>{inc.profile.clone()}</a>
            </div>
            <p class="muted">{move || i18n.t("incident-opened")} ": " <crate::components::Time at=inc.opened_at.clone()/> " · " {inc.opened_by.clone()}</p>
            <h2>{move || i18n.t("incident-steps")}</h2>
            <ol class="steps-found" data-testid="incident-steps">
                {inc.diagnosis.steps.iter().map(|s| {
                    let step = s.step;
                    let readings = s.readings.clone();
                    view! {
                        <li data-step=step.id()>
                            <strong>{move || i18n.t(&format!("step-{}", step.id()))}</strong>
                            <ul>
                                {if readings.is_empty() {
                                    view! { <li class="muted">{move || i18n.t("step-nothing")}</li> }.into_any()
                                } else {
                                    readings.into_iter().map(|r| view! { <li>{move || reading_text(lang.get(), &r)}</li> }).collect_view().into_any()
                                }}
                            </ul>
                        </li>
                    }
                }).collect_view()}
            </ol>
            <DiagnosisCard d=inc.diagnosis.clone() testid="incident-diagnosis"/>
            {inc.latest.as_ref().map(|(_, d)| view! {
                <h2>{move || i18n.t("incident-latest")}</h2>
                <DiagnosisCard d=d.clone() testid="incident-latest"/>
            })}
            <Investigator d=inc.diagnosis.clone()/>
            {inc.evidence.capture.clone().map(|capture| view! { <Captured capture/> })}
            {(!inc.resolved).then(|| view! { <Actions id actions=offered_actions(&inc) refetch/> })}
            <Timeline inc=inc.clone() refetch/>
        </section>
    }
}

#[component]
fn DiagnosisCard(d: Diagnosis, testid: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    let primary = d.primary().cloned();
    let rule_id = primary.as_ref().map(|f| f.rule.id()).unwrap_or("none");
    view! {
        <div class="diagnosis" data-testid=testid data-rule=rule_id role="status">
            <h2>{move || i18n.t("incident-diagnosis")}</h2>
            {match primary {
                None => view! { <p>{move || i18n.t("incident-no-finding")}</p> }.into_any(),
                Some(f) => finding_view(f, i18n).into_any(),
            }}
            {d.findings.iter().skip(1).map(|f| {
                let id = f.rule.id();
                view! { <p class="muted">{move || i18n.t("incident-also")} ": " {move || i18n.t(&format!("rule-{id}-diagnosis"))}</p> }
            }).collect_view()}
            {d.after_upgrade.then(|| view! { <p class="note" data-testid="after-upgrade">{move || i18n.t("incident-after-upgrade-note")}</p> })}
        </div>
    }
}

fn finding_view(f: Finding, i18n: I18n) -> impl IntoView {
    let id = f.rule.id();
    let evidence = f.evidence.clone();
    view! {
        <p class="diagnosis-text"><strong>{move || i18n.t(&format!("rule-{id}-diagnosis"))}</strong></p>
        <ul class="evidence">
            {evidence.into_iter().map(|r| view! { <li>{move || reading_text(i18n.lang.get(), &r)}</li> }).collect_view()}
        </ul>
        <p><em>{move || i18n.t("incident-action-col")}</em> ": " {move || i18n.t(&format!("rule-{id}-action"))}</p>
    }
}

/// What the console kept the moment it called the engine hung or dead: the processes of its
/// tree with their Python stacks, the log tail and the GPUs, before anyone restarted it.
#[component]
fn Captured(capture: crate::domain::capture::Capture) -> impl IntoView {
    let i18n = use_i18n();
    let state = capture.state.map(|s| s.as_str()).unwrap_or("dead");
    let note = capture.note.clone();
    let stacks_note = capture.stacks_note.clone();
    let log = capture.log_tail.join("\n");
    let count = capture.processes.len();
    view! {
        <section class="capture" data-testid="incident-capture" data-processes=count>
            <h2>{move || i18n.ta("incident-capture", &[("state", i18n.t(&format!("state-{state}")).into())])}</h2>
            <p class="muted"><crate::components::TimeMs ms=capture.at_ms/> " · " {note}</p>
            {stacks_note.map(|n| view! { <p class="note" data-testid="incident-capture-no-stacks">{move || i18n.t("incident-capture-no-stacks")} " (" {n.clone()} ")"</p> })}
            <table class="grid">
                <thead><tr>
                    <th>{move || i18n.t("incident-capture-pid")}</th>
                    <th>{move || i18n.t("incident-capture-name")}</th>
                    <th>{move || i18n.t("incident-capture-state")}</th>
                    <th>{move || i18n.t("incident-capture-rss")}</th>
                    <th>{move || i18n.t("incident-capture-stack")}</th>
                </tr></thead>
                <tbody>
                    {capture.processes.into_iter().map(|p| view! {
                        <tr data-testid="incident-capture-process">
                            <td class="mono">{p.pid}</td>
                            <td class="mono">{p.name.clone()}</td>
                            <td class="mono">{p.state.clone()}</td>
                            <td class="mono">{move || p.rss_kib.map(|k| i18n.gib(k as f64 / 1_048_576.0, 2)).unwrap_or_default()}</td>
                            <td>{p.stack.map(|st| view! {
                                <details><summary>{move || i18n.t("incident-capture-stack-show")}</summary><pre class="log">{st}</pre></details>
                            })}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <details><summary>{move || i18n.t("incident-capture-log")}</summary><pre class="log">{log}</pre></details>
        </section>
    }
}

#[component]
fn Investigator(d: Diagnosis) -> impl IntoView {
    let i18n = use_i18n();
    let inv = d.investigation;
    inv.row.map(|row| {
        let id = row.id();
        let lines = inv.evidence.clone();
        view! {
            <div class="investigator" data-testid="investigator" data-verdict=id>
                <h2>{move || i18n.t("incident-investigator")}</h2>
                <p>{move || i18n.ta("incident-verdict", &[("verdict", i18n.t(&format!("rule-{id}-diagnosis")).into())])}</p>
                <pre class="log">{lines.iter().map(|h| format!("{}: {}", h.line, h.text)).collect::<Vec<_>>().join("\n")}</pre>
                <p>{move || i18n.ta("investigator-action", &[("action", i18n.t(&format!("rule-{id}-action")).into())])}</p>
            </div>
        }
    })
}

#[component]
fn Actions(id: i64, actions: Vec<Action>, refetch: Callback<()>) -> impl IntoView {
    let i18n = use_i18n();
    let restart_offered = actions.contains(&Action::Restart);
    let act = ServerAction::<IncidentAction>::new();
    let pending: RwSignal<Option<Action>> = RwSignal::new(None);
    let reason = RwSignal::new(String::new());
    let missing_reason = RwSignal::new(false);
    Effect::new(move |_| {
        if let Some(Ok(())) = act.value().get() {
            refetch.run(());
        }
    });
    let confirm = move |_| {
        let Some(a) = pending.get_untracked() else { return };
        if reason.get_untracked().trim().is_empty() {
            missing_reason.set(true);
            return;
        }
        act.dispatch(IncidentAction {
            id,
            action: a,
            reason: reason.get_untracked(),
        });
        pending.set(None);
        reason.set(String::new());
        missing_reason.set(false);
    };
    view! {
        <h2>{move || i18n.t("incident-actions")}</h2>
        <div class="actions" role="toolbar" aria-label=move || i18n.t("incident-actions")>
            {actions.into_iter().map(|a| {
                let label_action = a.clone();
                let click_action = a.clone();
                view! {
                    <button
                        type="button"
                        data-testid=format!("incident-action-{}", a.id())
                        disabled=move || act.pending().get()
                        on:click=move |_| pending.set(Some(click_action.clone()))
                    >
                        {move || action_text(i18n.lang.get(), &label_action)}
                    </button>
                }
            }).collect_view()}
        </div>
        {(!restart_offered).then(|| view! { <p class="muted" data-testid="restart-not-offered">{move || i18n.t("incident-restart-not-offered")}</p> })}
        <Show when=move || pending.get().is_some()>
            <div class="confirm-box" role="dialog" aria-modal="false" data-testid="action-confirm-box">
                <p>{move || pending.get().map(|a| i18n.ta("incident-action-confirm", &[("action", action_text(i18n.lang.get(), &a).into())])).unwrap_or_default()}</p>
                <label>
                    {move || i18n.t("incident-action-reason")}
                    <textarea data-testid="action-reason" prop:value=move || reason.get() on:input=move |ev| reason.set(event_target_value(&ev))></textarea>
                </label>
                <Show when=move || missing_reason.get()>
                    <p class="error" role="alert">{move || i18n.t("incident-action-reason-required")}</p>
                </Show>
                <button type="button" data-testid="action-confirm" on:click=confirm>{move || i18n.t("confirm-yes")}</button>
                " "
                <button type="button" data-testid="action-cancel" on:click=move |_| pending.set(None)>{move || i18n.t("confirm-no")}</button>
            </div>
        </Show>
        {move || match act.value().get() {
            Some(Err(e)) => Some(view! { <ErrorNote error=e/> }),
            _ => None,
        }}
    }
}

#[component]
fn Timeline(inc: Incident, refetch: Callback<()>) -> impl IntoView {
    let i18n = use_i18n();
    let id = inc.id;
    let note = ServerAction::<IncidentNote>::new();
    let resolve = ServerAction::<ResolveIncident>::new();
    let text = RwSignal::new(String::new());
    Effect::new(move |_| {
        if note.value().get().is_some() || resolve.value().get().is_some() {
            refetch.run(());
        }
    });
    let entries = inc.timeline.clone();
    view! {
        <h2>{move || i18n.t("incident-timeline")}</h2>
        <ol class="timeline" data-testid="timeline">
            {entries.into_iter().map(|e| {
                let kind = entry_kind(&e.entry);
                let entry = e.entry.clone();
                view! {
                    <li data-testid="timeline-entry" data-kind=kind>
                        <crate::components::Time at=e.at.clone()/> " · " <span>{e.who.clone()}</span> " · "
                        {move || entry_text(i18n.lang.get(), &entry)}
                    </li>
                }
            }).collect_view()}
        </ol>
        {(!inc.resolved).then(|| view! {
            <div class="note-form">
                <label>
                    {move || i18n.t("incident-note")}
                    <input type="text" data-testid="note-text" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))/>
                </label>
                <button type="button" data-testid="note-add" on:click=move |_| {
                    note.dispatch(IncidentNote { id, text: text.get_untracked() });
                    text.set(String::new());
                }>{move || i18n.t("incident-note-add")}</button>
                " "
                <button type="button" data-testid="incident-resolve" on:click=move |_| { resolve.dispatch(ResolveIncident { id }); }>
                    {move || i18n.t("incident-resolve")}
                </button>
            </div>
        })}
    }
}

fn entry_kind(e: &Entry) -> &'static str {
    match e {
        Entry::Opened { .. } => "opened",
        Entry::Step { .. } => "step",
        Entry::Diagnosis { .. } => "diagnosis",
        Entry::Action { .. } => "action",
        Entry::Outcome { ok: true, .. } => "outcome-ok",
        Entry::Outcome { ok: false, .. } => "outcome-failed",
        Entry::Recheck { .. } => "recheck",
        Entry::Alert { .. } => "alert",
        Entry::Note { .. } => "note",
        Entry::Resolved => "resolved",
    }
}

#[component]
fn PostmortemForm(inc: Incident, state: RwSignal<Incident>, refetch: Callback<()>) -> impl IntoView {
    let i18n = use_i18n();
    let id = inc.id;
    let pm = inc.postmortem.clone();
    // "What changed" starts from the changes the triage found before the incident.
    let changed_default = if pm.what_changed.is_empty() {
        inc.evidence
            .recent_changes
            .iter()
            .map(|c| c.what.clone())
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        pm.what_changed.clone()
    };
    let symptom = RwSignal::new(pm.symptom.clone());
    let root_cause = RwSignal::new(pm.root_cause.clone());
    let what_changed = RwSignal::new(changed_default);
    let catch_earlier = RwSignal::new(pm.catch_earlier.clone());
    let save = ServerAction::<SavePostmortem>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = save.value().get() {
            refetch.run(());
        }
    });
    let submit = move |fin: bool| {
        save.dispatch(SavePostmortem {
            id,
            postmortem: Postmortem {
                symptom: symptom.get_untracked(),
                root_cause: root_cause.get_untracked(),
                what_changed: what_changed.get_untracked(),
                catch_earlier: catch_earlier.get_untracked(),
                fin,
            },
        });
    };
    let before = inc.evidence.points.clone();
    let after =
        Memo::new(move |_| state.with(|i| i.latest.as_ref().map(|(e, _)| e.points.clone()).unwrap_or_default()));
    let fin = Memo::new(move |_| state.with(|i| i.postmortem.fin));
    let field = move |key: &'static str, value: RwSignal<String>| {
        view! {
            <label class="pm-field">
                <span>{move || i18n.t(key)}</span>
                <textarea data-testid=key rows="3" prop:value=move || value.get() on:input=move |ev| value.set(event_target_value(&ev))></textarea>
            </label>
        }
    };
    let before_text = before.clone();
    view! {
        <div class="postmortem" data-testid="postmortem" data-final=move || fin.get().to_string()>
            <h2>{move || i18n.t("postmortem-title")} " · " {move || i18n.t(if fin.get() { "postmortem-final" } else { "postmortem-draft" })}</h2>
            {field("postmortem-symptom", symptom)}
            <h3>{move || i18n.t("postmortem-metrics")}</h3>
            <p>{move || i18n.t("postmortem-before")} ": " {move || window_summary(i18n.lang.get(), &before_text)}</p>
            <p>{move || i18n.t("postmortem-after")} ": " {move || after.with(|a| if a.is_empty() { "—".to_string() } else { window_summary(i18n.lang.get(), a) })}</p>
            <div class="charts">
                <SnapshotChart points=before kind=ChartKind::Queue testid="pm-before-queue"/>
                {move || view! { <SnapshotChart points=after.get() kind=ChartKind::Queue testid="pm-after-queue"/> }}
            </div>
            {field("postmortem-root-cause", root_cause)}
            {field("postmortem-what-changed", what_changed)}
            {field("postmortem-catch-earlier", catch_earlier)}
            <div class="actions">
                <button type="button" data-testid="postmortem-save-draft" on:click=move |_| submit(false)>{move || i18n.t("postmortem-save-draft")}</button>
                <button type="button" data-testid="postmortem-save-final" on:click=move |_| submit(true)>{move || i18n.t("postmortem-save-final")}</button>
                <a
                    data-testid="postmortem-export"
                    href=move || format!("/api/incidents/{id}/postmortem.md?lang={}", i18n.lang.get().code())
                    download=format!("postmortem-{id}.md")
                >
                    {move || i18n.t("postmortem-export")}
                </a>
                {move || save.value().get().map(|r| match r {
                    Ok(()) => view! { <span class="muted" data-testid="postmortem-saved">{move || i18n.t("postmortem-saved")}</span> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                })}
            </div>
        </div>
    }
}

/// A chart of an evidence snapshot (metrics before or after), drawn once.
#[component]
fn SnapshotChart(points: Vec<Point>, kind: ChartKind, testid: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    let n = points.len();
    let points = StoredValue::new(points);
    let spec = Signal::derive(move || {
        let lang = i18n.lang.get();
        points.with_value(|p| chart(kind, p, |k| crate::i18n::tr(lang, &format!("series-{k}"))).to_string())
    });
    let label = Signal::derive(move || i18n.t(&format!("chart-{}", kind.id())));
    (n > 0).then(|| {
        view! {
            <figure class="chart-card">
                <figcaption>{label}</figcaption>
                <Chart spec points=Signal::derive(move || n) testid=testid label/>
            </figure>
        }
    })
}
