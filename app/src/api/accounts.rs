//! Accounts in the API: who is signed in, signing in and out, first-run setup, and the admin's
//! account list. The server's request guard decides access from `domain::auth::SERVER_FNS`
//! before any of these run; the functions here check only their own secrets.

use super::{csrf::CsrfClient, ApiError};
use crate::domain::auth::Role;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The signed-in account, as the request guard found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Caller {
    pub name: String,
    pub role: Role,
}

/// The session cookie's token, put on the request by the guard (server side only).
#[derive(Clone, Debug)]
pub struct SessionToken(pub String);

/// The client's address, put on the request by the guard (server side only).
#[derive(Clone, Debug)]
pub struct ClientAddr(pub String);

/// What the header and the sign-in page need to know.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct SessionState {
    pub caller: Option<Caller>,
    /// No account exists yet: the first admin is created with the setup secret.
    pub needs_setup: bool,
    /// Why the change journal refuses new entries (shown to signed-in users on every page).
    #[serde(default)]
    pub journal_alarm: Option<String>,
    /// Since when (ms) the shared database has not answered this console: it runs in its
    /// degraded mode, which every page's header states.
    #[serde(default)]
    pub database_away_since_ms: Option<i64>,
}

/// An account as admins see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct AccountInfo {
    pub name: String,
    pub role: Role,
    pub disabled: bool,
    pub created_at: String,
}

#[cfg(feature = "ssr")]
pub use ssr::*;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::api::service::BoxFut;

    /// A successful sign-in: who, and the `Set-Cookie` values to send.
    pub struct SignedIn {
        pub caller: Caller,
        pub cookies: Vec<String>,
    }

    /// Accounts and sessions; implemented by the server over SQLite.
    pub trait AccountService: Send + Sync {
        fn login(&self, name: String, password: String, addr: String) -> BoxFut<'_, Result<SignedIn, ApiError>>;
        /// Ends the session; returns the cookies that clear it in the browser.
        fn logout(&self, token: Option<String>) -> BoxFut<'_, Result<Vec<String>, ApiError>>;
        fn setup_admin(
            &self,
            secret: String,
            name: String,
            password: String,
            addr: String,
        ) -> BoxFut<'_, Result<SignedIn, ApiError>>;
        fn needs_setup(&self) -> BoxFut<'_, Result<bool, ApiError>>;
        fn change_password(&self, who: String, old: String, new: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn list(&self) -> BoxFut<'_, Result<Vec<AccountInfo>, ApiError>>;
        fn create(&self, who: String, name: String, role: Role, password: String) -> BoxFut<'_, Result<(), ApiError>>;
        fn update(
            &self,
            who: String,
            name: String,
            role: Option<Role>,
            disabled: Option<bool>,
            password: Option<String>,
        ) -> BoxFut<'_, Result<(), ApiError>>;
    }
}

/// Who is signed in, and whether the console still needs its first admin.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "whoami")]
pub async fn whoami() -> Result<SessionState, ApiError> {
    let s = crate::api::service::authorized("whoami")?;
    let caller = crate::api::service::caller_opt();
    let (journal_alarm, database_away_since_ms) = match caller {
        Some(_) => (s.journal.alarm().await, s.hosts.database_away_since()),
        None => (None, None),
    };
    Ok(SessionState {
        caller,
        needs_setup: s.accounts.needs_setup().await?,
        journal_alarm,
        database_away_since_ms,
    })
}

/// Signs in: sets the HttpOnly session cookie and the CSRF cookie.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "login")]
pub async fn login(name: String, password: String) -> Result<Caller, ApiError> {
    let s = crate::api::service::authorized("login")?;
    let done = s
        .accounts
        .login(name, password, crate::api::service::client_addr())
        .await?;
    crate::api::service::set_cookies(&done.cookies);
    Ok(done.caller)
}

#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "logout")]
pub async fn logout() -> Result<(), ApiError> {
    let s = crate::api::service::authorized("logout")?;
    let cookies = s.accounts.logout(crate::api::service::session_token()).await?;
    crate::api::service::set_cookies(&cookies);
    Ok(())
}

/// Creates the first admin with the one-time secret from the console log, and signs in.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "setup_admin")]
pub async fn setup_admin(secret: String, name: String, password: String) -> Result<Caller, ApiError> {
    let s = crate::api::service::authorized("setup_admin")?;
    let done = s
        .accounts
        .setup_admin(secret, name, password, crate::api::service::client_addr())
        .await?;
    crate::api::service::set_cookies(&done.cookies);
    Ok(done.caller)
}

/// Changes the signed-in account's own password (the old one is asked again).
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "change_password")]
pub async fn change_password(old: String, new: String) -> Result<(), ApiError> {
    let who = crate::api::service::caller()?.name;
    crate::api::service::authorized("change_password")?
        .accounts
        .change_password(who, old, new)
        .await
}

#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "list_accounts")]
pub async fn list_accounts() -> Result<Vec<AccountInfo>, ApiError> {
    crate::api::service::authorized("list_accounts")?.accounts.list().await
}

#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "create_account")]
pub async fn create_account(name: String, role: Role, password: String) -> Result<(), ApiError> {
    let who = crate::api::service::caller()?.name;
    crate::api::service::authorized("create_account")?
        .accounts
        .create(who, name, role, password)
        .await
}

/// Changes an account's role, disables or enables it, or sets a new password.
#[server(prefix = "/api/fn", client = CsrfClient, output = crate::api::wire::Wire, endpoint = "update_account", input = leptos::server_fn::codec::Json)]
pub async fn update_account(
    name: String,
    role: Option<Role>,
    disabled: Option<bool>,
    password: Option<String>,
) -> Result<(), ApiError> {
    let who = crate::api::service::caller()?.name;
    crate::api::service::authorized("update_account")?
        .accounts
        .update(who, name, role, disabled, password)
        .await
}
