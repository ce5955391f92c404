//! Launch profiles, read-only: the list and one profile with its rendered command line.

use crate::api::{get_profile, list_profiles, ProfileSummary, ProfileView};
use crate::components::{use_i18n, SimulatedBadge};
use crate::components::{Grid, Head};
use crate::domain::flagmap::display_argv;
use crate::domain::profile::Severity;
use crate::i18n::Arg;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

#[component]
pub fn ProfileListPage() -> impl IntoView {
    let i18n = use_i18n();
    let profiles = crate::api::wire::data(|| (), |_| list_profiles());
    view! {
        <section>
            <div class="page-head"><h1>{move || i18n.t("profiles-title")}</h1></div>
            <p class="muted">{move || i18n.t("profiles-hint")}</p>
            {crate::pages::loaded(profiles, move |rows| view! { <ProfileTable rows/> }.into_any())}
        </section>
    }
}

#[component]
fn ProfileTable(rows: Vec<ProfileSummary>) -> impl IntoView {
    view! {
        <Grid heads=vec![Head::t("col-profile"), Head::t("col-engine"), Head::t("col-model"), Head::t("col-port"), Head::t("col-updated")] testid="profile-table">
                {rows.into_iter().map(|p| {
                    let kind = p.kind.map(|k| k.as_str()).unwrap_or("?");
                    view! {
                        <tr data-testid="profile-row">
                            <td><a href=format!("/profiles/{}", p.name)>{p.name.clone()}</a></td>
                            <td>{format!("{} ({kind})", p.engine)} " " {p.simulated.then(|| view! { <SimulatedBadge/> })}</td>
                            <td class="mono">{p.model.clone()}</td>
                            <td class="mono">{p.port}</td>
                            <td><crate::components::Time at=p.updated_at.clone()/></td>
                        </tr>
                    }
                }).collect_view()}
            </Grid>
    }
}

#[component]
pub fn ProfilePage() -> impl IntoView {
    let params = use_params_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let view_res = crate::api::wire::data(name, get_profile);
    view! {
        {crate::pages::loaded(view_res, move |v| view! { <ProfileDetail view=v/> }.into_any())}
    }
}

#[component]
fn ProfileDetail(view: ProfileView) -> impl IntoView {
    let i18n = use_i18n();
    let p = view.profile.clone();
    let engine_href = format!("/engines/{}", p.name);
    let issues = view.issues.clone();
    let untranslated = view.untranslated.join(", ");
    let kind = view.kind.map(|k| k.as_str()).unwrap_or("?");
    view! {
        <section class="profile">
            <div class="page-head">
                <h1>{p.name.clone()}</h1>
                {view.simulated.then(|| view! { <SimulatedBadge/> })}
                <a class="button" href=engine_href>{move || i18n.t("profile-open-engine")}</a>
                {crate::components::can(crate::domain::auth::Role::Operator).then(|| view! {
                    <a class="button" data-testid="profile-edit" href=format!("/profiles/{}/edit", p.name)>{move || i18n.t("profile-propose")}</a>
                })}
            </div>
            <dl class="facts">
                <dt>{move || i18n.t("col-engine")}</dt><dd>{format!("{} ({kind})", p.engine)}</dd>
                <dt>{move || i18n.t("col-model")}</dt><dd class="mono">{p.model.clone()}</dd>
                <dt>{move || i18n.t("col-updated")}</dt><dd><crate::components::Time at=view.updated_at.clone()/></dd>
            </dl>
            {(!issues.is_empty()).then(|| view! {
                <ul class="issues" data-testid="issues">
                    {issues.into_iter().map(|issue| {
                        let class = if issue.severity == Severity::Error { "error" } else { "warning" };
                        let field = issue.field.clone();
                        let key = format!("profile-issue-{}", issue.kind.code());
                        let args = issue.kind.args();
                        view! {
                            <li class=class>
                                <code>{field}</code> ": "
                                {move || {
                                    let args: Vec<(&str, Arg)> = args.iter().map(|(k, v)| (*k, Arg::from(v.clone()))).collect();
                                    i18n.ta(&key, &args)
                                }}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            })}
            {(!untranslated.is_empty()).then(|| view! {
                <p class="warning">{move || i18n.ta("profile-untranslated", &[("keys", untranslated.clone().into())])}</p>
            })}
            <KnownGoodView known_good=view.known_good.clone()/>
            <h2>{move || i18n.t("engine-command")}</h2>
            <pre class="argv" data-testid="argv">{display_argv(&view.argv)}</pre>
            <h2>{move || i18n.t("profile-file")}</h2>
            <pre class="envfile" data-testid="envfile">{view.env_text.clone()}</pre>
            <h2>{move || i18n.t("changes-title")}</h2>
            <crate::pages::changes::ChangeList profile=Some(p.name.clone())/>
        </section>
    }
}

/// The pinned set: what the profile last started well on, to restore after a bad upgrade.
#[component]
fn KnownGoodView(known_good: Option<crate::domain::pins::KnownGood>) -> impl IntoView {
    let i18n = crate::components::use_i18n();
    let Some(k) = known_good else {
        return view! {
            <h2>{move || i18n.t("profile-known-good")}</h2>
            <p class="muted" data-testid="profile-known-good" data-empty="true">{move || i18n.t("profile-known-good-none")}</p>
        }
        .into_any();
    };
    let when = [("at", crate::i18n::time_utc(k.at_ms)), ("install", k.install.clone())];
    let facts = &k.facts;
    let rows = [
        ("engine", facts.engine_version.clone()),
        ("torch", facts.torch.clone()),
        ("cuda", facts.cuda.clone()),
        ("driver", facts.driver.clone()),
        ("image", k.image_digest.clone()),
    ];
    let bench = k.bench.clone();
    view! {
        <h2>{move || i18n.t("profile-known-good")}</h2>
        <div data-testid="profile-known-good" data-empty="false">
            <p class="muted">{move || {
                let args: Vec<(&str, Arg)> = when.iter().map(|(k, v)| (*k, Arg::from(v.clone()))).collect();
                i18n.ta("profile-known-good-when", &args)
            }}</p>
            <dl class="facts">
                {rows.into_iter().map(|(field, value)| view! {
                    <dt>{move || i18n.t(&format!("pin-field-{field}"))}</dt>
                    <dd class="mono" data-pin=field>{value.unwrap_or_else(|| "—".into())}</dd>
                }).collect_view()}
            </dl>
            {match bench {
                Some(b) => view! {
                    <p data-testid="profile-known-good-bench">{move || i18n.ta("profile-known-good-bench", &[
                        ("run", b.run.into()),
                        ("ttft", format!("{:.0}", b.ttft_p95_ms).into()),
                        ("tpot", format!("{:.1}", b.tpot_p95_ms).into()),
                        ("throughput", format!("{:.0}", b.output_tokens_per_s).into()),
                    ])}</p>
                }.into_any(),
                None => view! { <p class="muted" data-testid="profile-known-good-bench">{move || i18n.t("profile-known-good-no-bench")}</p> }.into_any(),
            }}
        </div>
    }
    .into_any()
}
