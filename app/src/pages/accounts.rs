//! Signing in, first-run setup of the admin, one's own password, and the admin's accounts page.
//!
//! After signing in or out the page is reloaded in full, so the server renders it for the new
//! session and the CSRF cookie the browser code reads is the new one.

use crate::api::{list_accounts, whoami, ChangePassword, CreateAccount, Logout, SetupAdmin, UpdateAccount};
use crate::components::use_i18n;
use crate::components::{Grid, Head};
use crate::domain::auth::Role;
use crate::pages::ErrorNote;
use leptos::prelude::*;

/// Loads a page in full (a new session needs the server's render and the new cookies).
fn reload_to(path: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(w) = web_sys::window() {
        let _ = w.location().set_href(path);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = path;
}

use crate::domain::auth::safe_next;

fn text_input(sig: RwSignal<String>, kind: &'static str, id: &'static str, auto: &'static str) -> impl IntoView {
    view! {
        <input type=kind data-testid=id autocomplete=auto prop:value=move || sig.get() on:input=move |ev| sig.set(event_target_value(&ev))/>
    }
}

#[component]
pub fn LoginPage() -> impl IntoView {
    let i18n = use_i18n();
    let query = leptos_router::hooks::use_query_map();
    let next = move || safe_next(query.read().get("next"));
    let state = crate::api::wire::data(|| (), |_| whoami());
    // A plain form (this page ships no wasm): `POST /login` signs in and redirects to `next`,
    // or comes back here with the reason in `error` (and `wait`, in seconds).
    let refusal = move || {
        let q = query.read();
        let wait = q
            .get("wait")
            .and_then(|w| w.parse::<u64>().ok())
            .unwrap_or(0)
            .min(86_400);
        let key = match q.get("error")?.as_str() {
            "wrong" => "login-error-wrong",
            "wait" => "login-error-wait",
            "busy" => "login-error-busy",
            _ => "login-error-failed",
        };
        Some(
            view! { <p class="error" role="alert" data-testid="error">{i18n.ta(key, &[("seconds", wait.into())])}</p> },
        )
    };
    view! {
        <section class="auth" data-testid="login">
            <h1>{move || i18n.t("login-title")}</h1>
            <Transition fallback=|| ()>
                {move || state.get().and_then(|r| r.ok()).map(|s| view! {
                    {s.needs_setup.then(|| view! { <p class="warning" data-testid="needs-setup">{move || i18n.t("login-needs-setup")} " " <a href="/setup">{move || i18n.t("setup-title")}</a></p> })}
                    {s.caller.map(|c| view! { <p class="muted">{move || i18n.ta("login-already", &[("name", c.name.clone().into())])}</p> })}
                })}
            </Transition>
            {refusal}
            <form method="post" action="/login">
                <input type="hidden" name="next" prop:value=next value=next/>
                <label>{move || i18n.t("login-name")} <input type="text" name="name" data-testid="login-name" autocomplete="username" required/></label>
                <label>{move || i18n.t("login-password")} <input type="password" name="password" data-testid="login-password" autocomplete="current-password" required/></label>
                <button type="submit" class="primary" data-testid="login-submit">{move || i18n.t("login-submit")}</button>
            </form>
        </section>
    }
}

#[component]
pub fn SetupPage() -> impl IntoView {
    let i18n = use_i18n();
    let secret = RwSignal::new(String::new());
    let name = RwSignal::new("admin".to_string());
    let password = RwSignal::new(String::new());
    let setup = ServerAction::<SetupAdmin>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = setup.value().get() {
            reload_to("/admin/accounts");
        }
    });
    view! {
        <section class="auth" data-testid="setup">
            <h1>{move || i18n.t("setup-title")}</h1>
            <p class="muted">{move || i18n.t("setup-intro")}</p>
            <form on:submit=move |ev| {
                ev.prevent_default();
                setup.dispatch(SetupAdmin { secret: secret.get_untracked().trim().to_string(), name: name.get_untracked().trim().to_string(), password: password.get_untracked() });
            }>
                <label>{move || i18n.t("setup-secret")} {text_input(secret, "text", "setup-secret", "off")}</label>
                <label>{move || i18n.t("login-name")} {text_input(name, "text", "setup-name", "username")}</label>
                <label>{move || i18n.t("login-password")} {text_input(password, "password", "setup-password", "new-password")}</label>
                <p class="muted small">{move || i18n.ta("password-rule", &[("min", crate::domain::auth::MIN_PASSWORD.into())])}</p>
                <button type="submit" class="primary" data-testid="setup-submit" disabled=move || setup.pending().get()>{move || i18n.t("setup-submit")}</button>
            </form>
            {move || setup.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e/> })}
        </section>
    }
}

/// The signed-in account: role, password change, sign out.
#[component]
pub fn AccountPage() -> impl IntoView {
    let i18n = use_i18n();
    let me = crate::api::wire::data(|| (), |_| whoami());
    let old = RwSignal::new(String::new());
    let new = RwSignal::new(String::new());
    let change = ServerAction::<ChangePassword>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = change.value().get() {
            // Every session of the account ended with the change, this one included.
            reload_to("/login");
        }
    });
    view! {
        <section class="auth" data-testid="account">
            <h1>{move || i18n.t("account-title")}</h1>
            <Transition fallback=|| ()>
                {move || me.get().and_then(|r| r.ok()).and_then(|s| s.caller).map(|c| view! {
                    <p data-testid="account-who">{c.name.clone()} " · " {move || i18n.t(&format!("role-{}", c.role.as_str()))}</p>
                })}
            </Transition>
            <form on:submit=move |ev| { ev.prevent_default(); change.dispatch(ChangePassword { old: old.get_untracked(), new: new.get_untracked() }); }>
                <label>{move || i18n.t("account-old-password")} {text_input(old, "password", "account-old", "current-password")}</label>
                <label>{move || i18n.t("account-new-password")} {text_input(new, "password", "account-new", "new-password")}</label>
                <p class="muted small">{move || i18n.ta("password-rule", &[("min", crate::domain::auth::MIN_PASSWORD.into())])}</p>
                <button type="submit" data-testid="account-change">{move || i18n.t("account-change-password")}</button>
            </form>
            {move || change.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e/> })}
        </section>
    }
}

/// The header's corner: who is signed in (with a link to the account) and sign out, or a
/// sign-in link.
#[component]
pub fn UserMenu() -> impl IntoView {
    let i18n = use_i18n();
    let me = crate::api::wire::data(|| (), |_| whoami());
    // Read again every 15 s: the degraded mode's banner comes and goes with the database.
    #[cfg(feature = "hydrate")]
    if let Ok(handle) = set_interval_with_handle(move || me.refetch(), std::time::Duration::from_secs(15)) {
        on_cleanup(move || handle.clear());
    }
    let logout = ServerAction::<Logout>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = logout.value().get() {
            reload_to("/login");
        }
    });
    view! {
        <Transition fallback=|| ()>
            {move || me.get().and_then(|r| r.ok()).and_then(|s| s.journal_alarm).map(|why| view! {
                <p class="journal-alarm" role="alert" data-testid="journal-alarm">
                    {move || i18n.ta("journal-alarm", &[("why", why.clone().into())])}
                    " " <a href="/journal">{move || i18n.t("nav-journal")}</a>
                </p>
            })}
            {move || me.get().and_then(|r| r.ok()).and_then(|s| s.database_away_since_ms).map(|since| view! {
                <p class="journal-alarm" role="alert" data-testid="database-away">
                    {move || i18n.t("database-away")}
                    " " <crate::components::TimeMs ms=since/>
                    " " <span class="muted">{move || i18n.t("database-away-detail")}</span>
                </p>
            })}
            {move || me.get().and_then(|r| r.ok()).map(|s| match s.caller {
                Some(c) => view! {
                    <span class="user" data-testid="user-menu" data-role=c.role.as_str()>
                        <a href="/account" data-testid="user-name">{c.name.clone()}</a>
                        <span class="muted small">{move || i18n.t(&format!("role-{}", c.role.as_str()))}</span>
                        {(c.role == Role::Admin).then(|| view! { <a href="/admin/accounts">{move || i18n.t("nav-accounts")}</a> })}
                        <button type="button" class="link" data-testid="logout" on:click=move |_| { logout.dispatch(Logout {}); }>{move || i18n.t("nav-sign-out")}</button>
                    </span>
                }.into_any(),
                None => view! { <a href="/login" data-testid="sign-in">{move || i18n.t("nav-sign-in")}</a> }.into_any(),
            })}
        </Transition>
    }
}

/// Accounts for admins: create with a role and an initial password, change roles, disable,
/// set a new password.
#[component]
pub fn AccountsPage() -> impl IntoView {
    let i18n = use_i18n();
    let create = ServerAction::<CreateAccount>::new();
    let update = ServerAction::<UpdateAccount>::new();
    let rows = crate::api::wire::data(
        move || (create.version().get(), update.version().get()),
        |_| list_accounts(),
    );
    let name = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let role = RwSignal::new(Role::Operator);
    let role_options = move |current: Role| {
        Role::ALL
            .into_iter()
            .map(|r| view! { <option value=r.as_str() selected=r == current>{move || i18n.t(&format!("role-{}", r.as_str()))}</option> })
            .collect_view()
    };
    view! {
        <section class="accounts" data-testid="accounts">
            <div class="page-head"><h1>{move || i18n.t("accounts-title")}</h1></div>
            <form class="account-new" on:submit=move |ev| {
                ev.prevent_default();
                create.dispatch(CreateAccount { name: name.get_untracked().trim().to_string(), role: role.get_untracked(), password: password.get_untracked() });
            }>
                <label>{move || i18n.t("login-name")} {text_input(name, "text", "new-account-name", "off")}</label>
                <label>{move || i18n.t("accounts-role")}
                    <select data-testid="new-account-role" on:change=move |ev| { if let Ok(r) = event_target_value(&ev).parse() { role.set(r) } }>
                        {role_options(Role::Operator)}
                    </select>
                </label>
                <label>{move || i18n.t("accounts-initial-password")} {text_input(password, "password", "new-account-password", "new-password")}</label>
                <button type="submit" data-testid="new-account-submit">{move || i18n.t("accounts-create")}</button>
            </form>
            {move || create.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e/> })}
            {move || update.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e/> })}
            {crate::pages::loaded(rows, move |list| view! {
                        <Grid heads=vec![Head::t("login-name"), Head::t("accounts-role"), Head::t("accounts-state"), Head::t("accounts-created"), Head::t("accounts-password")] testid="accounts-table">
                                {list.into_iter().map(|a| {
                                    let (n1, n2, n3) = (a.name.clone(), a.name.clone(), a.name.clone());
                                    let disabled = a.disabled;
                                    let new_password = RwSignal::new(String::new());
                                    view! {
                                        <tr data-testid="account-row" data-name=a.name.clone()>
                                            <td>{a.name.clone()}</td>
                                            <td>
                                                <select data-testid="account-role" on:change=move |ev| {
                                                    if let Ok(r) = event_target_value(&ev).parse() {
                                                        update.dispatch(UpdateAccount { name: n1.clone(), role: Some(r), disabled: None, password: None });
                                                    }
                                                }>{role_options(a.role)}</select>
                                            </td>
                                            <td>
                                                <button type="button" data-testid="account-toggle" on:click=move |_| {
                                                    update.dispatch(UpdateAccount { name: n2.clone(), role: None, disabled: Some(!disabled), password: None });
                                                }>{move || if disabled { i18n.t("accounts-enable") } else { i18n.t("accounts-disable") }}</button>
                                                {disabled.then(|| view! { " " <span class="muted">{move || i18n.t("accounts-disabled")}</span> })}
                                            </td>
                                            <td><crate::components::Time at=a.created_at.clone()/></td>
                                            <td>
                                                <form class="inline" on:submit=move |ev| {
                                                    ev.prevent_default();
                                                    update.dispatch(UpdateAccount { name: n3.clone(), role: None, disabled: None, password: Some(new_password.get_untracked()) });
                                                    new_password.set(String::new());
                                                }>
                                                    {text_input(new_password, "password", "account-new-password", "new-password")}
                                                    <button type="submit" data-testid="account-set-password" disabled=move || new_password.with(|p| p.is_empty())>{move || i18n.t("accounts-set-password")}</button>
                                                </form>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </Grid>
                    }.into_any())}
        </section>
    }
}
