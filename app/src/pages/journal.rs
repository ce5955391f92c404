//! The change journal: every action and profile change with who, when, why and its context,
//! searchable, exportable as JSON, with the state of the hash chain shown on top.

use crate::api::{list_journal, verify_journal};
use crate::components::use_i18n;
use crate::components::{Grid, Head};
use crate::pages::ErrorNote;
use leptos::prelude::*;

#[component]
pub fn JournalPage() -> impl IntoView {
    let i18n = use_i18n();
    let query = RwSignal::new(String::new());
    let applied = RwSignal::new(String::new());
    let entries = crate::api::wire::data(move || applied.get(), |q| list_journal((!q.is_empty()).then_some(q)));
    let check = crate::api::wire::data(|| (), |_| verify_journal());
    view! {
        <section class="journal">
            <div class="page-head"><h1>{move || i18n.t("journal-title")}</h1></div>
            <Transition fallback=|| ()>
                {move || check.get().map(|r| match r {
                    Ok(c) => match c.broken {
                        None => view! { <p class="ok" data-testid="journal-check" data-intact="true">{move || i18n.ta("journal-intact", &[("count", c.entries.into())])}</p> }.into_any(),
                        Some((seq, why)) => view! { <p class="error" role="alert" data-testid="journal-check" data-intact="false">{move || i18n.ta("journal-broken", &[("seq", seq.into()), ("why", why.clone().into())])}</p> }.into_any(),
                    },
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                })}
            </Transition>
            <form class="journal-search" on:submit=move |ev| { ev.prevent_default(); applied.set(query.get_untracked()); }>
                <input type="search" data-testid="journal-query" placeholder=move || i18n.t("journal-search") prop:value=move || query.get() on:input=move |ev| query.set(event_target_value(&ev))/>
                <button type="submit" data-testid="journal-search">{move || i18n.t("journal-search")}</button>
                <a data-testid="journal-export" href=move || format!("/api/journal.json?query={}", applied.get()) download="journal.json">{move || i18n.t("journal-export")}</a>
            </form>
            {crate::pages::loaded_rows(entries, "journal-empty", move |rows| view! {
                        <Grid heads=vec![Head::text("#"), Head::t("journal-at"), Head::t("journal-who"), Head::t("journal-kind"), Head::t("col-profile"), Head::t("journal-reason"), Head::t("journal-detail")] testid="journal-table">
                                {rows.into_iter().map(|e| view! {
                                    <tr data-testid="journal-row" data-kind=e.kind.clone()>
                                        <td class="num">{e.seq}</td>
                                        <td><crate::components::Time at=e.at.clone()/></td>
                                        <td>{e.who.clone()}</td>
                                        <td>{e.kind.clone()}</td>
                                        <td>{e.subject.clone()}</td>
                                        <td>{e.reason.clone()}</td>
                                        <td class="mono small" title=e.hash.clone()>{e.detail.to_string()}</td>
                                    </tr>
                                }).collect_view()}
                            </Grid>
                    }.into_any())}
        </section>
    }
}
