//! The profile editor: the launch profile's fields in the runbook's flag order (model and name
//! → parallelism → context → memory → parsers → quantization and KV → batching → speculation),
//! each step open once the steps before it validate; the argv for the chosen engine as you
//! type (switching between a vLLM and an SGLang installation converts through the flag map and
//! says what has no equivalent); flags checked against the installed engine; a diff against
//! the active version; when the installation changes, the upgrade preflight against the one the
//! profile runs on now; saved as a draft or submitted for review with a reason (the change then
//! goes through review and the gate on its own page, `/changes/ID`).

use crate::api::{
    check_profile_flags, editor_flag_help, get_profile_editor, predict_profile_vram, upgrade_check, EditorData,
    EditorHelp, ProposeChange,
};
use crate::components::use_i18n;
use crate::domain::envfile::{env_diff, parse, quote};
use crate::domain::flagmap::{display_argv, render_argv, untranslatable_speculative_keys};
use crate::domain::profile::{Profile, Severity};
use crate::pages::on_demand::{self, PredictionArgs};
use crate::pages::ErrorNote;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

/// The editor's steps, in the runbook's order, with the keys each one sets.
pub const STEPS: &[(&str, &[&str])] = &[
    ("model", &["ENGINE", "MODEL", "SERVED_MODEL_NAME"]),
    ("parallelism", &["TENSOR_PARALLEL"]),
    ("context", &["CONTEXT_LENGTH"]),
    ("memory", &["MEM_FRACTION"]),
    ("parsers", &["TOOL_CALL_PARSER", "REASONING_PARSER"]),
    ("quantization", &["QUANTIZATION", "KV_CACHE_DTYPE"]),
    ("batching", &["MAX_RUNNING_REQUESTS", "MAX_BATCHED_TOKENS"]),
    ("speculation", &["SPECULATIVE_CONFIG"]),
    ("network", &["HOST", "PORT", "EXTRA_ARGS"]),
];

/// The profile file from the form's values (kept keys in file order, then `ENV_*` untouched).
pub fn assemble(values: &[(String, String)], env_lines: &[String]) -> String {
    let mut out = String::new();
    for (k, v) in values {
        if !v.trim().is_empty() {
            out.push_str(&format!("{k}={}\n", quote(v.trim())));
        }
    }
    for l in env_lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[component]
pub fn ProfileEditPage() -> impl IntoView {
    let params = use_params_map();
    let query = leptos_router::hooks::use_query_map();
    let key = move || {
        (
            params.read().get("name").unwrap_or_default(),
            query.read().get("change").and_then(|c| c.parse::<i64>().ok()),
        )
    };
    let data = crate::api::wire::data(key, |(name, change)| get_profile_editor(name, change));
    view! {
        {crate::pages::loaded(data, move |d| view! { <Editor data=d/> }.into_any())}
    }
}

#[component]
fn Editor(data: EditorData) -> impl IntoView {
    let i18n = use_i18n();
    let name = data.name.clone();
    let active = data.active_env.clone();
    let change_id = data.change;
    let active_engine: Option<String> = parse(&active)
        .ok()
        .and_then(|a| a.into_iter().find(|x| x.key == "ENGINE").map(|x| x.value));
    let parsed = parse(&data.env_text).unwrap_or_default();
    let env_lines: Vec<String> = parsed
        .iter()
        .filter(|a| a.key.starts_with("ENV_"))
        .map(|a| format!("{}={}", a.key, quote(&a.value)))
        .collect();
    let values: Vec<(String, RwSignal<String>)> = STEPS
        .iter()
        .flat_map(|(_, keys)| keys.iter())
        .map(|k| {
            let v = parsed
                .iter()
                .find(|a| a.key == *k)
                .map(|a| a.value.clone())
                .unwrap_or_default();
            (k.to_string(), RwSignal::new(v))
        })
        .collect();
    let values = StoredValue::new(values);
    let text = Memo::new(move |_| {
        let vals: Vec<(String, String)> = values.with_value(|v| v.iter().map(|(k, s)| (k.clone(), s.get())).collect());
        assemble(&vals, &env_lines)
    });
    let name_for_check = name.clone();
    let validated = Memo::new(move |_| Profile::from_env(&name_for_check, &text.get()));
    let issues_of = move |keys: &'static [&'static str]| {
        validated.with(|r| {
            let issues = match r {
                Ok((_, warnings)) => warnings.clone(),
                Err(errors) => errors.clone(),
            };
            issues
                .into_iter()
                .filter(|i| keys.contains(&i.field.as_str()))
                .collect::<Vec<_>>()
        })
    };
    // A step opens once every earlier step is free of errors.
    let step_open = move |index: usize| {
        STEPS[..index]
            .iter()
            .all(|(_, keys)| issues_of(keys).iter().all(|i| i.severity != Severity::Error))
    };
    let installs = data.installs.clone();
    let argv = Memo::new(move |_| {
        let (p, _) = validated.get().ok()?;
        let install = installs.iter().find(|i| i.name == p.engine)?;
        Some((
            display_argv(&render_argv(install.kind, &install.command, &p)),
            install.kind,
        ))
    });
    let untranslated = Memo::new(move |_| {
        validated
            .get()
            .ok()
            .and_then(|(p, _)| p.speculative_config.map(|s| untranslatable_speculative_keys(&s)))
            .unwrap_or_default()
    });
    let diff = Memo::new(move |_| env_diff(&active, &text.get()));
    let check = Action::new(move |(n, t): &(String, String)| check_profile_flags(n.clone(), t.clone()));
    let predict = Action::new(move |(n, t): &(String, String)| predict_profile_vram(n.clone(), Some(t.clone())));
    // The verdict follows the edit as it is typed; its breakdown (bars, the concurrency curve,
    // the arithmetic: the calculator's own view, loaded with its part) when asked for.
    let breakdown = RwSignal::new(false);
    // Moving the profile to another installation runs the upgrade preflight (again whenever
    // the installation changes; the button re-checks the text as edited since).
    #[expect(
        clippy::expect_used,
        reason = "`values` holds one field per key of STEPS, ENGINE among them"
    )]
    let engine_now = values
        .with_value(|v| v.iter().find(|(k, _)| k == "ENGINE").map(|(_, s)| *s))
        .expect("ENGINE has a field");
    let moved = Memo::new(move |_| active_engine.as_deref().is_some_and(|a| a != engine_now.get()));
    let upgrade = Action::new(move |(n, t): &(String, String)| upgrade_check(n.clone(), t.clone()));
    let name_for_upgrade = name.clone();
    Effect::new({
        let name = name_for_upgrade.clone();
        move |_| {
            let _ = engine_now.get();
            if moved.get_untracked() {
                upgrade.dispatch((name.clone(), text.get_untracked()));
            }
        }
    });
    // Each field's help from the chosen installation's own --help (again when it changes),
    // asked by the browser once hydrated: an action, not a resource, because forty fields
    // reading one resource during a multi-threaded server render deadlocked leptos'
    // reactive graph (an effect and the resource's suspense locking in opposite orders).
    let help = Action::new(|install: &String| editor_flag_help(install.clone()));
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        help.dispatch(engine_now.get());
    });
    let help_of = move |key: &str| -> Option<crate::api::FieldHelp> {
        help.value()
            .get()
            .and_then(|r| r.ok())
            .and_then(|h: EditorHelp| h.field(key).cloned())
    };
    // The calculator's verdict for the values being edited, asked 400 ms after the last
    // keystroke of a profile that validates.
    #[cfg(feature = "hydrate")]
    {
        let generation = StoredValue::new(0u64);
        let name = name.clone();
        Effect::new(move |_| {
            let t = text.get();
            if validated.with(|r| r.is_err()) {
                return;
            }
            let mine = generation.get_value() + 1;
            generation.set_value(mine);
            let name = name.clone();
            set_timeout(
                move || {
                    if generation.get_value() == mine {
                        predict.dispatch((name, t));
                    }
                },
                std::time::Duration::from_millis(400),
            );
        });
    }
    let save = ServerAction::<ProposeChange>::new();
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(id)) = save.value().get() {
            navigate(&format!("/changes/{id}"), Default::default());
        }
    });
    let reason = RwSignal::new(String::new());
    let name_for_save = name.clone();
    let name_for_flags = name.clone();
    let name_for_vram = name.clone();
    let install_names: Vec<String> = data.installs.iter().map(|i| i.name.clone()).collect();
    view! {
        <section class="profile-edit" data-testid="profile-editor">
            <div class="page-head">
                <h1>{move || i18n.ta("editor-title", &[("name", name.clone().into())])}</h1>
                <a href=format!("/profiles/{}", data.name)>{move || i18n.t("editor-back")}</a>
            </div>
            <p class="muted">{move || i18n.t("editor-intro")}</p>
            {STEPS.iter().enumerate().map(|(index, (step, keys))| {
                let install_names = install_names.clone();
                view! {
                    <fieldset class="editor-step" data-step=*step disabled=move || !step_open(index) data-open=move || step_open(index).to_string()>
                        <legend>{move || i18n.t(&format!("editor-step-{step}"))}</legend>
                        {keys.iter().map(|key| {
                            #[expect(clippy::expect_used, reason = "`values` is built from these same keys")]
                            let signal = values.with_value(|v| v.iter().find(|(k, _)| k == key).map(|(_, s)| *s)).expect("every step key has a field");
                            let key_slice: &'static [&'static str] = std::slice::from_ref(key);
                            let key: &'static str = key;
                            let (field_id, help_id, issues_id, list_id) = (format!("field-{key}"), format!("help-{key}"), format!("issues-{key}"), format!("choices-{key}"));
                            let described = format!("{help_id} {issues_id}");
                            let invalid = move || issues_of(key_slice).iter().any(|i| i.severity == Severity::Error).to_string();
                            let input = if key == "ENGINE" {
                                let names = install_names.clone();
                                view! {
                                    <select id=field_id.clone() data-testid=field_id.clone() aria-describedby=described.clone() on:change=move |ev| signal.set(event_target_value(&ev))>
                                        {names.into_iter().map(|n| { let selected = signal.get_untracked() == n; view! { <option value=n.clone() selected=selected>{n.clone()}</option> } }).collect_view()}
                                    </select>
                                }.into_any()
                            } else {
                                view! { <input type="text" id=field_id.clone() data-testid=field_id.clone() list=list_id.clone() aria-invalid=invalid aria-describedby=described.clone() prop:value=move || signal.get() on:input=move |ev| signal.set(event_target_value(&ev))/> }.into_any()
                            };
                            let choices = move || help_of(key).map(|f| f.choices.into_iter().map(|c| view! { <option value=c/> }).collect_view());
                            let field_help = move || help_of(key).map(|f| {
                                let default = f.default.clone().map(|d| view! { " " <span class="muted" data-testid="field-default">{move || i18n.ta("editor-default", &[("value", d.clone().into())])}</span> });
                                view! {
                                    <span data-testid="field-flag-help"><code>{f.flag.clone()}</code>" "{f.help.clone()}</span>
                                    {default}
                                    {f.deprecated.then(|| view! { " " <span class="warning">{move || i18n.t("editor-flag-deprecated")}</span> })}
                                }
                            });
                            let advice_key = format!("advice-{key}");
                            let advice = i18n.has(&advice_key).then(|| view! {
                                <span class="advice" data-testid="field-advice">{move || i18n.t(&advice_key)}</span>
                            });
                            let issues = move || issues_of(key_slice).into_iter().map(|issue| {
                                let class = if issue.severity == Severity::Error { "error" } else { "warning" };
                                let code = issue.kind.code();
                                let args = issue.kind.args();
                                let text = move || {
                                    let args: Vec<(&str, crate::i18n::Arg)> = args.iter().map(|(k, v)| (*k, crate::i18n::Arg::from(v.clone()))).collect();
                                    i18n.ta(&format!("profile-issue-{code}"), &args)
                                };
                                view! { <p class=class data-testid="field-issue">{text}</p> }
                            }).collect_view();
                            view! {
                                <div class="editor-field">
                                    <label for=field_id><code>{key}</code></label>
                                    {input}
                                    <datalist id=list_id>{choices}</datalist>
                                    <p class="field-help small" id=help_id data-testid=format!("help-{key}")>{field_help}" "{advice}</p>
                                    <div id=issues_id>{issues}</div>
                                </div>
                            }
                        }).collect_view()}
                    </fieldset>
                }
            }).collect_view()}
            <h2>{move || i18n.t("engine-command")}</h2>
            <pre class="argv" data-testid="editor-argv">{move || argv.get().map(|(a, _)| a).unwrap_or_else(|| i18n.t("editor-argv-invalid"))}</pre>
            {move || (!untranslated.get().is_empty()).then(|| view! {
                <p class="warning" data-testid="editor-untranslated">{move || i18n.ta("profile-untranslated", &[("keys", untranslated.get().join(", ").into())])}</p>
            })}
            <button type="button" data-testid="editor-check-flags" on:click=move |_| { check.dispatch((name_for_flags.clone(), text.get_untracked())); }>
                {move || i18n.t("editor-check-flags")}
            </button>
            {move || check.value().get().map(|r| match r {
                Ok(c) if c.unknown.is_empty() && c.bad_values.is_empty() => view! {
                    <p class="ok" data-testid="editor-flags" data-ok="true">{move || i18n.ta("editor-flags-ok", &[("version", c.version.clone().into())])}</p>
                }.into_any(),
                Ok(c) => view! {
                    <ul class="issues" data-testid="editor-flags" data-ok="false">
                        {c.unknown.iter().map(|u| view! { <li class="error">{format!("{}{}", u.flag, u.suggestion.as_ref().map(|s| format!(" → {s}?")).unwrap_or_default())}</li> }).collect_view()}
                        {c.bad_values.iter().map(|b| view! { <li class="error">{format!("{} {}{}", b.flag, b.value, b.suggestion.as_ref().map(|s| format!(" → {s}?")).unwrap_or_default())}</li> }).collect_view()}
                    </ul>
                }.into_any(),
                Err(e) => view! { <ErrorNote error=e/> }.into_any(),
            })}
            <button type="button" data-testid="editor-vram" disabled=move || validated.with(|r| r.is_err()) on:click=move |_| { predict.dispatch((name_for_vram.clone(), text.get_untracked())); }>
                {move || i18n.t("editor-vram")}
            </button>
            " "
            <button
                type="button"
                data-testid="editor-vram-breakdown"
                aria-expanded=move || breakdown.get().to_string()
                disabled=move || predict.value().with(|r| !matches!(r, Some(Ok(_))))
                on:click=move |_| breakdown.update(|b| *b = !*b)
            >
                {move || i18n.t(if breakdown.get() { "editor-vram-breakdown-hide" } else { "editor-vram-breakdown-show" })}
            </button>
            {move || predict.value().get().map(|r| match r {
                Ok(p) => {
                    let id = p.report.verdict.id();
                    let (tokens, concurrency, ctx) = (p.report.kv_tokens, p.report.max_concurrency, p.ctx);
                    view! {
                        <p class="editor-verdict" data-testid="editor-verdict" data-verdict=id aria-live="polite">
                            <strong>{move || i18n.t(&format!("vram-verdict-{id}"))}</strong>" "
                            {move || i18n.ta("editor-verdict-line", &[("tokens", tokens.into()), ("concurrency", i18n.num(concurrency, 1).into()), ("ctx", ctx.into())])}
                        </p>
                        {move || breakdown.get().then(|| on_demand::prediction(PredictionArgs { prediction: p.clone(), testid: "editor-vram-result" }))}
                    }.into_any()
                }
                Err(e) => view! { <ErrorNote error=e/> }.into_any(),
            })}
            {move || moved.get().then(|| {
                let name = name_for_upgrade.clone();
                view! {
                    <section class="editor-upgrade" data-testid="editor-upgrade">
                        <h2>{move || i18n.t("upgrade-title")}</h2>
                        <button type="button" data-testid="editor-upgrade-check" disabled=move || upgrade.pending().get() on:click=move |_| { upgrade.dispatch((name.clone(), text.get_untracked())); }>
                            {move || i18n.t("upgrade-check-again")}
                        </button>
                        {move || upgrade.value().get().map(|r| match r {
                            Ok(c) => on_demand::upgrade(c),
                            Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        })}
                    </section>
                }
            })}
            <h2>{move || i18n.t("editor-diff")}</h2>
            <pre class="envfile" data-testid="editor-diff">{move || { let d = diff.get(); if d.is_empty() { i18n.t("editor-no-change") } else { d.join("\n") } }}</pre>
            <label class="editor-field">
                <span>{move || i18n.t("incident-action-reason")}</span>
                <input type="text" data-testid="editor-reason" prop:value=move || reason.get() on:input=move |ev| reason.set(event_target_value(&ev))/>
            </label>
            {move || change_id.map(|id| view! { <p class="muted" data-testid="editor-change">{move || i18n.ta("editor-editing-change", &[("id", id.into())])}</p> })}
            <div class="actions">
                <button
                    type="button"
                    data-testid="editor-draft"
                    disabled=move || validated.with(|r| r.is_err()) || diff.with(|d| d.is_empty()) || save.pending().get()
                    on:click={
                        let name = name_for_save.clone();
                        move |_| { save.dispatch(ProposeChange { id: change_id, profile: name.clone(), env_text: text.get_untracked(), reason: reason.get_untracked(), submit: false }); }
                    }
                >
                    {move || i18n.t("editor-save-draft")}
                </button>
                <button
                    type="button"
                    class="primary"
                    data-testid="editor-submit"
                    disabled=move || validated.with(|r| r.is_err()) || diff.with(|d| d.is_empty()) || reason.with(|r| r.trim().is_empty()) || save.pending().get()
                    on:click=move |_| { save.dispatch(ProposeChange { id: change_id, profile: name_for_save.clone(), env_text: text.get_untracked(), reason: reason.get_untracked(), submit: true }); }
                >
                    {move || i18n.t("editor-submit")}
                </button>
            </div>
            <p class="muted">{move || i18n.t("editor-review-hint")}</p>
            {move || save.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e/> })}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_key_has_a_step_in_the_runbook_order() {
        let keys: Vec<&str> = STEPS.iter().flat_map(|(_, k)| k.iter().copied()).collect();
        for k in crate::domain::profile::KEYS {
            assert!(keys.contains(k), "{k} has no step");
        }
        let order: Vec<&str> = STEPS.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            &order[..8],
            &[
                "model",
                "parallelism",
                "context",
                "memory",
                "parsers",
                "quantization",
                "batching",
                "speculation"
            ]
        );
    }

    #[test]
    fn assembling_keeps_env_lines_and_quotes_values() {
        let text = assemble(
            &[
                ("ENGINE".into(), "sim".into()),
                ("EXTRA_ARGS".into(), "--a \"b c\"".into()),
                ("PORT".into(), "".into()),
            ],
            &["ENV_X=1".into()],
        );
        let back = parse(&text).unwrap();
        assert_eq!(
            back.iter().find(|a| a.key == "EXTRA_ARGS").unwrap().value,
            "--a \"b c\""
        );
        assert!(back.iter().any(|a| a.key == "ENV_X") && !back.iter().any(|a| a.key == "PORT"));
        assert_eq!(env_diff("A=1\nB=2\n", "A=1\nB=3\n"), vec!["-B=2", "+B=3"]);
    }
}
