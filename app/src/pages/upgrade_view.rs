//! The upgrade preflight as the editor shows it when a profile moves to another
//! installation: what would stop the start (removed, renamed or retyped flags, parser names
//! gone), what only warns (deprecations, defaults the profile relies on), and what the last
//! gate on that installation found missing among the metrics the console reads.

use crate::components::use_i18n;
use crate::domain::upgrade::{Finding, UpgradeCheck};
use crate::i18n::Arg;
use leptos::prelude::*;

fn finding_args(f: &Finding) -> Vec<(&'static str, String)> {
    let none = |v: &Option<String>| v.clone().unwrap_or_else(|| "None".into());
    match f {
        Finding::Removed { flag, .. } => vec![("flag", flag.clone())],
        Finding::Renamed { flag, to } => vec![("flag", flag.clone()), ("to", to.clone())],
        Finding::Retyped { flag, from, to } => vec![("flag", flag.clone()), ("from", from.clone()), ("to", to.clone())],
        Finding::ValueGone { flag, value, .. } => vec![("flag", flag.clone()), ("value", value.clone())],
        Finding::Deprecated { flag, help } => vec![("flag", flag.clone()), ("help", help.clone())],
        Finding::DefaultChanged { flag, from, to } => {
            vec![("flag", flag.clone()), ("from", none(from)), ("to", none(to))]
        }
    }
}

fn suggestion(f: &Finding) -> Option<String> {
    match f {
        Finding::Removed { suggestion, .. } | Finding::ValueGone { suggestion, .. } => suggestion.clone(),
        _ => None,
    }
}

#[component]
pub fn UpgradeView(check: UpgradeCheck) -> impl IntoView {
    let i18n = use_i18n();
    let blocking = check.blocking();
    let versions = [
        ("from", check.from_install.clone()),
        ("fromVersion", check.from_version.clone()),
        ("to", check.to_install.clone()),
        ("toVersion", check.to_version.clone()),
    ];
    let other = check.flags.other_defaults.clone();
    let other_count = other.len() + check.flags.other_defaults_left_out;
    let metrics = check.metrics.clone();
    view! {
        <div class="upgrade" data-testid="upgrade-result" data-blocking=blocking.to_string()>
            <p data-testid="upgrade-versions">{move || {
                let args: Vec<(&str, Arg)> = versions.iter().map(|(k, v)| (*k, Arg::from(v.clone()))).collect();
                i18n.ta("upgrade-versions", &args)
            }}</p>
            <p class=if blocking == 0 { "ok" } else { "error" } data-testid="upgrade-verdict">{move || {
                if blocking == 0 {
                    i18n.t("upgrade-verdict-clear")
                } else {
                    i18n.ta("upgrade-verdict-blocked", &[("count", blocking.into())])
                }
            }}</p>
            <ul class="issues" data-testid="upgrade-findings">
                {check.flags.findings.iter().map(|f| {
                    let key = format!("upgrade-finding-{}", f.id());
                    let args = finding_args(f);
                    let closest = suggestion(f);
                    view! {
                        <li class=if f.blocks() { "error" } else { "warning" } data-kind=f.id() data-flag=f.flag().to_string()>
                            {move || {
                                let a: Vec<(&str, Arg)> = args.iter().map(|(k, v)| (*k, Arg::from(v.clone()))).collect();
                                i18n.ta(&key, &a)
                            }}
                            {closest.map(|s| view! { " " <span class="muted">{move || i18n.ta("upgrade-closest", &[("suggestion", s.clone().into())])}</span> })}
                        </li>
                    }
                }).collect_view()}
            </ul>
            {(other_count > 0).then(|| view! {
                <details data-testid="upgrade-other-defaults">
                    <summary>{move || i18n.ta("upgrade-other-defaults", &[("count", other_count.into())])}</summary>
                    <ul>
                        {other.iter().map(|d| view! {
                            <li><code>{d.flag.clone()}</code>": "{d.from.clone().unwrap_or_else(|| "None".into())}" → "{d.to.clone().unwrap_or_else(|| "None".into())}</li>
                        }).collect_view()}
                    </ul>
                </details>
            })}
            {match metrics {
                None => view! { <p class="muted" data-testid="upgrade-metrics" data-checked="false">{move || i18n.t("upgrade-metrics-unchecked")}</p> }.into_any(),
                Some(m) if m.missing.is_empty() => view! {
                    <p class="ok" data-testid="upgrade-metrics" data-checked="true">{move || i18n.ta("upgrade-metrics-ok", &[("change", m.change.into())])}</p>
                }.into_any(),
                Some(m) => view! {
                    <ul class="issues" data-testid="upgrade-metrics" data-checked="true">
                        {m.missing.iter().map(|s| {
                            let args = [("signal", s.signal.clone()), ("names", s.names.join(", ")), ("change", m.change.to_string())];
                            view! {
                                <li class=if s.core { "error" } else { "warning" } data-signal=s.signal.clone()>{move || {
                                    let a: Vec<(&str, Arg)> = args.iter().map(|(k, v)| (*k, Arg::from(v.clone()))).collect();
                                    i18n.ta("upgrade-metrics-missing", &a)
                                }}</li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any(),
            }}
            <p class="muted">{move || i18n.t("upgrade-keep-old")}</p>
        </div>
    }
}
