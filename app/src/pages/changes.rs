//! Profile changes: the list, and one change's page with its diff, the review (approve or
//! request changes, with comments), the upgrade preflight when the change moves the profile to
//! another installation, the gate's steps and checks as they run, and rollback.

use crate::api::{
    get_change, list_changes, predict_profile_vram, upgrade_check, ChangeView, CommentChange, ReviewChange,
    RollbackChange, StartChangeGate, WithdrawChange,
};
use crate::components::use_i18n;
use crate::components::{Grid, Head};
use crate::domain::review::{ChangeAction, ChangeState};
use crate::pages::ErrorNote;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

fn state_class(s: ChangeState) -> &'static str {
    match s {
        ChangeState::Active | ChangeState::Approved => "ok",
        ChangeState::GateFailed | ChangeState::ChangesRequested => "error",
        ChangeState::Gating | ChangeState::Submitted => "warning",
        _ => "muted",
    }
}

#[component]
fn StateTag(state: ChangeState) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <span class=format!("tag {}", state_class(state)) data-testid="change-state" data-state=state.as_str()>
            {move || i18n.t(&format!("change-state-{}", state.as_str()))}
        </span>
    }
}

#[component]
pub fn ChangeListPage() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <section class="changes">
            <div class="page-head"><h1>{move || i18n.t("changes-title")}</h1></div>
            <p class="muted">{move || i18n.t("changes-intro")}</p>
            <ChangeList profile=None/>
        </section>
    }
}

/// Changes, newest first: all of them, or one profile's (on the profile's page).
#[component]
pub fn ChangeList(profile: Option<String>) -> impl IntoView {
    let rows = crate::api::wire::data(move || profile.clone(), list_changes);
    crate::components::use_record_changes(|v| v.changes, move || rows.refetch());
    view! {
            {crate::pages::loaded_rows(rows, "changes-empty", move |list| view! {
                        <Grid heads=vec![Head::text("#"), Head::t("col-profile"), Head::t("change-author"), Head::t("change-state"), Head::t("journal-reason"), Head::t("change-updated")] testid="changes-table">
                                {list.into_iter().map(|c| view! {
                                    <tr data-testid="change-row">
                                        <td class="num"><a href=format!("/changes/{}", c.id)>{c.id}</a></td>
                                        <td><a href=format!("/profiles/{}", c.profile)>{c.profile.clone()}</a></td>
                                        <td>{c.author.clone()}</td>
                                        <td><StateTag state=c.state/></td>
                                        <td>{c.reason.clone()}</td>
                                        <td><crate::components::Time at=c.updated_at.clone()/></td>
                                    </tr>
                                }).collect_view()}
                            </Grid>
                    }.into_any())}
    }
}

#[component]
pub fn ChangePage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
    let data = crate::api::wire::data(id, get_change);
    view! {
        {crate::pages::loaded(data, move |c| view! { <LiveChange change=c/> }.into_any())}
    }
}

/// The keys the change touches: `KEY before → after`, an unset side said as such.
#[component]
fn KeyChanges(keys: Vec<crate::domain::envfile::KeyChange>) -> impl IntoView {
    let i18n = use_i18n();
    let unset = move || view! { <em class="muted">{move || i18n.t("change-key-unset")}</em> };
    view! {
        <table class="grid key-changes" data-testid="change-keys">
            <thead><tr>
                <th scope="col">{move || i18n.t("change-key")}</th>
                <th scope="col">{move || i18n.t("change-before")}</th>
                <th scope="col" aria-hidden="true"></th>
                <th scope="col">{move || i18n.t("change-after")}</th>
            </tr></thead>
            <tbody>
                {keys.into_iter().map(|k| view! {
                    <tr data-testid="change-key" data-key=k.key.clone()>
                        <th scope="row" class="mono">{k.key.clone()}</th>
                        <td class="mono" data-side="before">{match k.before { Some(v) => view! { <span>{v}</span> }.into_any(), None => unset().into_any() }}</td>
                        <td aria-hidden="true">"→"</td>
                        <td class="mono" data-side="after">{match k.after { Some(v) => view! { <span>{v}</span> }.into_any(), None => unset().into_any() }}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The command line before and after, cut at each flag: flags the candidate drops are struck
/// through in the first, flags it adds or changes marked in the second.
#[component]
fn ArgvChange(before: Vec<String>, after: Vec<String>) -> impl IntoView {
    let i18n = use_i18n();
    let (before, after) = (
        crate::domain::flagmap::argv_groups(&before),
        crate::domain::flagmap::argv_groups(&after),
    );
    if before.is_empty() && after.is_empty() {
        return None;
    }
    let same = before == after;
    // `removed`: the line before (groups the other lacks are struck), else the line after.
    let line = |groups: &[String], other: &[String], removed: bool| {
        groups
            .iter()
            .map(|g| {
                let text = format!("{g} ");
                if other.contains(g) {
                    view! { <span>{text}</span> }.into_any()
                } else if removed {
                    view! { <del data-testid="argv-removed">{text}</del> }.into_any()
                } else {
                    view! { <ins data-testid="argv-added">{text}</ins> }.into_any()
                }
            })
            .collect_view()
    };
    let (b, a) = (line(&before, &after, true), line(&after, &before, false));
    Some(view! {
        <section class="argv-change" data-testid="change-argv" data-same=same.to_string()>
            <h2>{move || i18n.t("change-argv")}</h2>
            {same.then(|| view! { <p class="muted">{move || i18n.t("change-argv-same")}</p> })}
            <p class="small muted">{move || i18n.t("change-before")}</p>
            <pre class="argv" data-testid="change-argv-before">{b}</pre>
            <p class="small muted">{move || i18n.t("change-after")}</p>
            <pre class="argv" data-testid="change-argv-after">{a}</pre>
        </section>
    })
}

/// What the launch policy read each extra flag of the candidate as: the reviewer sees which
/// values the console checked (a path inside the models root, a loopback address) and which
/// flag only host configuration let through.
#[component]
fn ExtraFlags(flags: Vec<crate::domain::launch::FlagClass>) -> impl IntoView {
    let i18n = use_i18n();
    if flags.is_empty() {
        return None;
    }
    Some(view! {
        <section class="extra-flags" data-testid="change-extra-flags">
            <h2>{move || i18n.t("change-extra-flags")}</h2>
            <table class="table">
                <tbody>
                    {flags.into_iter().map(|f| {
                        let class = f.class.clone();
                        let label = f.class.clone();
                        view! {
                            <tr data-testid="change-extra-flag" data-class=class>
                                <td><code>{f.shown}</code></td>
                                <td>{move || i18n.ta("flag-class", &[("class", label.clone().into())])}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    })
}

/// A prediction the browser asks for once hydrated (an action, not a resource: resources read
/// from several places deadlocked leptos' multi-threaded server render, see the editor).
type Prediction = Action<(String, String), Result<crate::api::VramPrediction, crate::api::ApiError>>;

/// The calculator's verdict for the active profile and for the candidate, side by side.
#[component]
fn VerdictChange(before: Prediction, after: Prediction) -> impl IntoView {
    let i18n = use_i18n();
    let cell = move |r: Option<Result<crate::api::VramPrediction, crate::api::ApiError>>, side: &'static str| match r {
        None => view! { <td>{move || i18n.t("loading")}</td> }.into_any(),
        Some(Err(e)) => view! { <td data-side=side><ErrorNote error=e/></td> }.into_any(),
        Some(Ok(p)) => {
            let r = p.report;
            let id = r.verdict.id();
            let ctx = p.ctx;
            view! {
                <td data-side=side data-verdict=id>
                    <strong class=if r.verdict.id() == "fits" { "ok" } else { "error" }>{move || i18n.t(&format!("vram-verdict-{id}"))}</strong>
                    <br/>
                    {move || i18n.ta("change-verdict-detail", &[
                        ("tokens", r.kv_tokens.into()),
                        ("concurrency", format!("{:.2}", r.max_concurrency).into()),
                        ("ctx", ctx.into()),
                        ("budget", format!("{:.2}", r.kv_budget_gib).into()),
                    ])}
                </td>
            }
            .into_any()
        }
    };
    view! {
        <section class="verdict-change">
            <h2>{move || i18n.t("change-verdicts")}</h2>
            <Grid heads=vec![Head::t("change-before"), Head::t("change-after")] testid="change-verdicts"><tr>
                    {move || cell(before.value().get(), "before")}
                    {move || cell(after.value().get(), "after")}
                </tr></Grid>
        </section>
    }
}

/// The change, kept current over the record stream: its gate's steps as they run, a review or a
/// comment by someone else, each step taken here.
#[component]
fn LiveChange(change: ChangeView) -> impl IntoView {
    let state = RwSignal::new(change);
    let refresh = move || {
        #[cfg(feature = "hydrate")]
        {
            let id = state.with_untracked(|c| c.summary.id);
            leptos::task::spawn_local(async move {
                if let Ok(next) = get_change(id).await {
                    if state.with_untracked(|cur| *cur != next) {
                        state.set(next);
                    }
                }
            });
        }
    };
    crate::components::use_record_changes(|v| v.changes, refresh);
    let refetch = Callback::new(move |_| refresh());
    // The calculator's verdicts follow the texts only: a review or a gate step does not ask
    // again.
    let before = Memo::new(move |_| state.with(|c| (c.summary.profile.clone(), c.base_env.clone())));
    let after = Memo::new(move |_| state.with(|c| (c.summary.profile.clone(), c.env.clone())));
    let predict = |(p, t): &(String, String)| predict_profile_vram(p.clone(), Some(t.clone()));
    let (before_texts, after_texts) = (before, after);
    let (before, after): (Prediction, Prediction) = (Action::new(predict), Action::new(predict));
    #[cfg(feature = "hydrate")]
    {
        Effect::new(move |_| {
            before.dispatch(before_texts.get());
        });
        Effect::new(move |_| {
            after.dispatch(after_texts.get());
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (before_texts, after_texts);
    view! { {move || view! { <ChangeBody c=state.get() refetch verdicts=(before, after)/> }} }
}

#[component]
fn ChangeBody(c: ChangeView, refetch: Callback<()>, verdicts: (Prediction, Prediction)) -> impl IntoView {
    let i18n = use_i18n();
    let id = c.summary.id;
    let profile = c.summary.profile.clone();
    let review = ServerAction::<ReviewChange>::new();
    let withdraw = ServerAction::<WithdrawChange>::new();
    let gate = ServerAction::<StartChangeGate>::new();
    let rollback = ServerAction::<RollbackChange>::new();
    let note = ServerAction::<CommentChange>::new();
    let note_text = RwSignal::new(String::new());
    Effect::new(move |_| {
        let done = [
            note.version().get(),
            review.version().get(),
            withdraw.version().get(),
            gate.version().get(),
            rollback.version().get(),
        ];
        if done.iter().any(|v| *v > 0) {
            refetch.run(());
        }
    });
    let comment = RwSignal::new(String::new());
    let rollback_reason = RwSignal::new(String::new());
    let allowed = c.allowed.clone();
    let can = move |a: ChangeAction| allowed.contains(&a);
    let error = move || {
        [
            review.value().get(),
            withdraw.value().get(),
            gate.value().get(),
            rollback.value().get(),
            note.value().get(),
        ]
        .into_iter()
        .flatten()
        .find_map(|r| r.err())
        .map(|e| view! { <ErrorNote error=e/> })
    };
    // A change that moves the profile to another installation shows the upgrade preflight
    // while it is still to be reviewed or gated (once active, the stored profile is the
    // candidate and there is nothing left to compare).
    let engine_of = |env: &str| {
        crate::domain::envfile::parse(env)
            .ok()
            .and_then(|a| a.into_iter().find(|x| x.key == "ENGINE").map(|x| x.value))
    };
    let pending = matches!(
        c.summary.state,
        ChangeState::Draft | ChangeState::Submitted | ChangeState::ChangesRequested | ChangeState::Approved
    );
    // It runs the installations' --help (cached per version): operators and up, as the flag check.
    let moves = pending
        && engine_of(&c.base_env) != engine_of(&c.env)
        && crate::components::can(crate::domain::auth::Role::Operator);
    let upgrade = Action::new(move |(n, t): &(String, String)| upgrade_check(n.clone(), t.clone()));
    if moves {
        let args = (c.summary.profile.clone(), c.env.clone());
        Effect::new(move |_| {
            upgrade.dispatch(args.clone());
        });
    }
    let upgrade_panel = moves.then(|| {
        view! {
            <section class="change-upgrade" data-testid="change-upgrade">
                <h2>{move || i18n.t("upgrade-title")}</h2>
                {move || upgrade.value().get().map(|r| match r {
                    Ok(check) => crate::pages::on_demand::upgrade(check),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                })}
            </section>
        }
    });
    let gate_report = c.gate.clone();
    let t = c.thresholds.clone();
    // What an approval approves: the page shows it, the review buttons send it back.
    let (hash_approve, hash_send_back) = (c.content_hash.clone(), c.content_hash.clone());
    let hash_short: String = c.content_hash.chars().take(12).collect();
    view! {
        <section class="change" data-testid="change" data-id=id>
            <div class="page-head">
                <h1>{move || i18n.ta("change-title", &[("id", id.into()), ("profile", profile.clone().into())])}</h1>
                <StateTag state=c.summary.state/>
            </div>
            <p>
                {move || i18n.t("change-author")} ": " <strong data-testid="change-author">{c.summary.author.clone()}</strong>
                " · " {move || i18n.t("journal-reason")} ": " <span data-testid="change-reason">{c.summary.reason.clone()}</span>
            </p>
            {c.stale.then(|| view! { <p class="warning" role="alert" data-testid="change-stale">{move || i18n.t("change-stale")}</p> })}
            <h2>{move || i18n.t("editor-diff")}</h2>
            {c.keys.clone().map(|keys| view! { <KeyChanges keys/> })}
            <details class="line-diff" open=c.keys.is_none()>
                <summary>{move || i18n.t("change-lines")}</summary>
                <pre class="envfile" data-testid="change-diff">{c.diff.join("\n")}</pre>
            </details>
            <ArgvChange before=c.argv_before.clone() after=c.argv_after.clone()/>
            {c.rendered_by.clone().map(|host| {
                let shown = host.clone();
                view! {
                    <p class="small muted" data-testid="change-rendered-by" data-host=host>
                        {move || i18n.ta("change-rendered-by", &[("host", shown.clone().into())])}
                    </p>
                }
            })}
            {c.render_note.clone().map(|why| view! {
                <p class="warning" role="status" data-testid="change-render-note">
                    {move || i18n.ta("change-render-note", &[("why", why.clone().into())])}
                </p>
            })}
            <ExtraFlags flags=c.extra_flags.clone()/>
            <VerdictChange before=verdicts.0 after=verdicts.1/>
            {upgrade_panel}
            <p class="small" data-testid="change-hash-line">
                {move || i18n.t("change-content-hash")} ": "
                <code class="hash" data-testid="change-hash" data-short=hash_short>{c.content_hash.clone()}</code>
            </p>

            <div class="actions" data-testid="change-actions">
                {can(ChangeAction::Edit).then(|| view! {
                    <a class="button" data-testid="change-edit" href=format!("/profiles/{}/edit?change={id}", c.summary.profile)>{move || i18n.t("change-edit")}</a>
                })}
                {can(ChangeAction::Withdraw).then(|| view! {
                    <button type="button" data-testid="change-withdraw" on:click=move |_| { withdraw.dispatch(WithdrawChange { id, comment: comment.get_untracked() }); }>{move || i18n.t("change-withdraw")}</button>
                })}
                {can(ChangeAction::StartGate).then(|| view! {
                    <button type="button" class="primary" data-testid="change-start-gate" disabled=move || gate.pending().get()
                        on:click=move |_| { gate.dispatch(StartChangeGate { id }); }>{move || i18n.t("change-start-gate")}</button>
                })}
            </div>
            {(can(ChangeAction::Approve) || can(ChangeAction::RequestChanges)).then(|| view! {
                <div class="review" data-testid="change-review">
                    <label class="editor-field">
                        <span>{move || i18n.t("change-comment")}</span>
                        <textarea data-testid="change-comment" prop:value=move || comment.get() on:input=move |ev| comment.set(event_target_value(&ev))></textarea>
                    </label>
                    <div class="actions">
                        <button type="button" class="primary" data-testid="change-approve" disabled=move || review.pending().get()
                            on:click=move |_| { review.dispatch(ReviewChange { id, approve: true, comment: comment.get_untracked(), content_hash: hash_approve.clone() }); }>{move || i18n.t("change-approve")}</button>
                        <button type="button" data-testid="change-request-changes" disabled=move || review.pending().get() || comment.with(|c| c.trim().is_empty())
                            on:click=move |_| { review.dispatch(ReviewChange { id, approve: false, comment: comment.get_untracked(), content_hash: hash_send_back.clone() }); }>{move || i18n.t("change-request-changes")}</button>
                    </div>
                </div>
            })}
            {can(ChangeAction::Rollback).then(|| view! {
                <div class="review" data-testid="change-rollback-form">
                    <label class="editor-field">
                        <span>{move || i18n.t("change-rollback-reason")}</span>
                        <input type="text" data-testid="change-rollback-reason" prop:value=move || rollback_reason.get() on:input=move |ev| rollback_reason.set(event_target_value(&ev))/>
                    </label>
                    <button type="button" data-testid="change-rollback" disabled=move || rollback.pending().get() || rollback_reason.with(|r| r.trim().is_empty())
                        on:click=move |_| { rollback.dispatch(RollbackChange { id, reason: rollback_reason.get_untracked() }); }>{move || i18n.t("change-rollback")}</button>
                </div>
            })}
            {error}

            <h2>{move || i18n.t("change-gate")}</h2>
            <p class="muted small" data-testid="change-thresholds">{move || i18n.ta("change-gate-thresholds", &[
                ("requests", t.requests.into()), ("concurrency", t.concurrency.into()),
                ("ttft", format!("{:.0}", t.max_ttft_p95_ms).into()), ("tpot", format!("{:.0}", t.max_tpot_p95_ms).into()),
                ("failed", t.max_failed.into()),
            ])}</p>
            {match gate_report {
                None => view! { <p class="muted">{move || i18n.t("change-gate-none")}</p> }.into_any(),
                Some(g) => view! {
                    <ol class="gate-steps" data-testid="gate-steps" data-passed=g.passed.map(|p| p.to_string()).unwrap_or_default()>
                        {g.steps.into_iter().map(|s| {
                            let class = match s.pass { Some(true) => "ok", Some(false) => "error", None => "warning" };
                            let name = s.name.clone();
                            let (key, args, detail) = (s.key.clone(), s.args.clone(), s.detail.clone());
                            let outcome = move || match &key {
                                Some(k) => {
                                    let args: Vec<(&str, crate::i18n::Arg)> = args.iter().map(|(k, v)| (k.as_str(), crate::i18n::Arg::from(v.clone()))).collect();
                                    i18n.ta(k, &args)
                                }
                                None if s.pass.is_none() => i18n.t("change-gate-running"),
                                None => detail.clone(),
                            };
                            view! {
                                <li class=class data-testid="gate-step" data-step=s.name.clone() data-pass=s.pass.map(|p| p.to_string()).unwrap_or_default()>
                                    <strong>{move || i18n.t(&format!("change-gate-step-{name}"))}</strong>" "{outcome}
                                </li>
                            }
                        }).collect_view()}
                    </ol>
                    {(!g.checks.is_empty()).then(|| view! {
                        <table class="grid" data-testid="gate-checks">
                            <tbody>
                                {g.checks.into_iter().map(|k| {
                                    let name = k.name.clone();
                                    view! {
                                        <tr class=if k.pass { "ok" } else { "error" } data-check=k.name.clone()>
                                            <td>{move || i18n.t(&format!("change-check-{name}"))}</td>
                                            <td class="mono">{let k = k.clone(); move || crate::domain::review::check_texts(&k, |key| i18n.t(key), |v, d| i18n.num(v, d)).0}</td>
                                            <td class="mono">{let k = k.clone(); move || crate::domain::review::check_texts(&k, |key| i18n.t(key), |v, d| i18n.num(v, d)).1}</td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    })}
                    {g.bench_run.map(|b| view! { <p><a href=format!("/bench/compare?ids={b}")>{move || i18n.t("change-bench-run")}</a></p> })}
                }.into_any(),
            }}

            <h2>{move || i18n.t("change-history")}</h2>
            {crate::components::can(crate::domain::auth::Role::Operator).then(|| view! {
                <form class="inline change-note" on:submit=move |ev| {
                    ev.prevent_default();
                    note.dispatch(CommentChange { id, text: note_text.get_untracked() });
                    note_text.set(String::new());
                }>
                    <input type="text" data-testid="change-note" maxlength="4000" aria-label=move || i18n.t("change-note-label") prop:value=move || note_text.get() on:input=move |ev| note_text.set(event_target_value(&ev))/>
                    <button type="submit" data-testid="change-note-submit" disabled=move || note_text.with(|t| t.trim().is_empty())>{move || i18n.t("change-add-comment")}</button>
                </form>
            })}
            <ol class="timeline" data-testid="change-events">
                {c.events.into_iter().map(|e| {
                    let kind = e.kind.clone();
                    view! {
                        <li data-testid="change-event" data-kind=e.kind.clone()>
                            <small><crate::components::Time at=e.at.clone()/></small>" "
                            <strong>{e.who.clone()}</strong>" "
                            {move || i18n.t(&format!("change-event-{kind}"))}
                            {(!e.text.is_empty()).then(|| view! { <blockquote>{e.text.clone()}</blockquote> })}
                        </li>
                    }
                }).collect_view()}
            </ol>
        </section>
    }
}
