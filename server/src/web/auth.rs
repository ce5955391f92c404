//! The request guard (who is calling, may they, does the CSRF token match) and the account
//! service behind the sign-in, setup and admin server functions.
//!
//! Pages need a session (else a redirect to `/login`); server functions need what
//! `app::domain::auth::SERVER_FNS` says and, for every call, the session's CSRF token in the
//! `x-csrf-token` header; other `/api/` routes need a session, and `/api/engines` (what other
//! consoles in the fleet read) a session or the fleet's bearer token. Public: `/login` (the
//! page and its form), `/lang`, `/setup`, the static bundle, `/metrics`, `/healthz`,
//! `/readyz`, and the Alertmanager webhook and Prometheus service discovery, which check their
//! own bearer tokens.

use crate::accounts::ratelimit::{Key, LoginLimiter};
use crate::accounts::{Accounts, AuthError};
use app::api::csrf;
use app::api::service::BoxFut;
use app::api::{AccountInfo, AccountService, ApiError, Caller, ClientAddr, SessionToken, SignedIn};
use app::domain::auth::{Access, Role};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use std::net::SocketAddr;

pub const SESSION_COOKIE: &str = "roofline_session";
/// Its name when cookies are Secure (HTTPS): see [`csrf::HOST_COOKIE`].
pub const HOST_SESSION_COOKIE: &str = "__Host-roofline_session";

/// What the guard and the account service share.
#[derive(Clone)]
pub struct AuthState {
    pub accounts: Accounts,
    pub limiter: LoginLimiter,
    /// Cookies get `Secure` (served over HTTPS by a proxy in front).
    pub secure: bool,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    pub journal: crate::journal::Journal,
    /// `[auth] fleet_token`: what another console of the fleet presents to read `/api/engines`.
    pub fleet_token: Option<String>,
    /// `[auth] prometheus_sd_token`: what this console's Prometheus presents; once set, it
    /// (or a session) is needed for `/metrics` too.
    pub prometheus_token: Option<String>,
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| csrf::cookie_value(c, name))
        .filter(|v| !v.is_empty())
}

/// What a path needs.
#[derive(Debug, PartialEq, Eq)]
enum Need {
    Public,
    /// A server function (by endpoint).
    Function(&'static str, Access),
    UnknownFunction,
    /// A JSON or stream route: a session, answered 401 without one.
    Session,
    /// A page: a session, else a redirect to the sign-in page.
    Page,
    /// The fleet's engines: a session, or another console's `[auth] fleet_token`.
    SessionOrFleetToken,
    /// The console's own `/metrics`: public while no `[auth] prometheus_sd_token` is set
    /// (a Prometheus scrapes it without credentials), else a session or that token.
    Metrics,
}

fn need(path: &str) -> Need {
    const PUBLIC: &[&str] = &[
        "/login",
        "/lang",
        "/setup",
        "/favicon.svg",
        "/api/alerts/alertmanager",
        "/api/prometheus/sd",
        "/healthz",
        "/readyz",
    ];
    if PUBLIC.contains(&path) || path.starts_with("/pkg/") {
        return Need::Public;
    }
    if path == "/api/engines" {
        return Need::SessionOrFleetToken;
    }
    if path == "/metrics" {
        return Need::Metrics;
    }
    if let Some(name) = path.strip_prefix("/api/fn/") {
        return app::domain::auth::SERVER_FNS
            .iter()
            .find(|(e, _)| *e == name)
            .map(|(e, a)| Need::Function(e, *a))
            .unwrap_or(Need::UnknownFunction);
    }
    if path.starts_with("/api/") {
        return Need::Session;
    }
    Need::Page
}

/// A JSON-encoded `ApiError` with its status, which the UI's server-function client decodes.
fn api_refusal(status: StatusCode, e: ApiError) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string(&e).unwrap_or_default(),
    )
        .into_response()
}

/// Identifies the caller and applies the access rules before any handler runs.
pub async fn guard(State(auth): State<AuthState>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    // The static bundle needs nobody: no session lookup for each file.
    if path.starts_with("/pkg/") || path == "/favicon.svg" {
        return next.run(req).await;
    }
    let token = cookie(req.headers(), auth.session_cookie());
    let session = match &token {
        Some(t) => auth.accounts.session(t).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "reading the session failed");
            None
        }),
        None => None,
    };
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    let forwarded = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    let addr = client_addr(peer, &forwarded, &auth.trusted_proxies);
    req.extensions_mut().insert(ClientAddr(addr));
    if let (Some(s), Some(t)) = (&session, token) {
        req.extensions_mut().insert(Caller {
            name: s.name.clone(),
            role: s.role,
        });
        req.extensions_mut().insert(SessionToken(t));
    }
    match need(&path) {
        Need::Public => {}
        Need::UnknownFunction => {
            return api_refusal(
                StatusCode::FORBIDDEN,
                ApiError::Forbidden(format!("{path} is not in the access table")),
            )
        }
        Need::Function(_, Access::Public) => {}
        Need::Function(name, Access::Role(needed)) => {
            let Some(s) = &session else {
                return api_refusal(
                    StatusCode::UNAUTHORIZED,
                    ApiError::Unauthorized("no session, or it ended".into()),
                );
            };
            if !s.role.allows(needed) {
                return api_refusal(
                    StatusCode::FORBIDDEN,
                    ApiError::Forbidden(format!(
                        "{name} needs the {} role; {} is {}",
                        needed.as_str(),
                        s.name,
                        s.role.as_str()
                    )),
                );
            }
            let sent = req.headers().get(csrf::HEADER).and_then(|v| v.to_str().ok());
            if !constant_time_eq(sent.unwrap_or_default(), &s.csrf) {
                return api_refusal(
                    StatusCode::FORBIDDEN,
                    ApiError::Forbidden("CSRF token missing or wrong; reload the page".into()),
                );
            }
        }
        Need::Session => {
            if session.is_none() {
                return (StatusCode::UNAUTHORIZED, "sign in first").into_response();
            }
        }
        Need::SessionOrFleetToken => {
            let console = auth
                .fleet_token
                .as_deref()
                .is_some_and(|t| super::guard::bearer_matches(req.headers(), t));
            if session.is_none() && !console {
                return (
                    StatusCode::UNAUTHORIZED,
                    "sign in first, or send this console's [auth] fleet_token as a bearer token",
                )
                    .into_response();
            }
        }
        Need::Metrics => {
            // It names every profile, its engine kind and state, the GPUs' faults and the
            // console's version: once the operator has a Prometheus token, only that
            // Prometheus (or someone signed in) reads it.
            let refused = auth
                .prometheus_token
                .as_deref()
                .is_some_and(|t| session.is_none() && !super::guard::bearer_matches(req.headers(), t));
            if refused {
                return (
                    StatusCode::UNAUTHORIZED,
                    "sign in first, or send this console's [auth] prometheus_sd_token as a bearer token",
                )
                    .into_response();
            }
        }
        Need::Page => {
            if session.is_none() {
                if req.method() != Method::GET && req.method() != Method::HEAD {
                    return (StatusCode::UNAUTHORIZED, "sign in first").into_response();
                }
                let next = req
                    .uri()
                    .path_and_query()
                    .map(|p| p.as_str().to_string())
                    .unwrap_or_else(|| "/".into());
                let to = match auth.accounts.count().await {
                    Ok(0) => "/setup".to_string(),
                    _ => format!("/login?next={}", urlencode(&next)),
                };
                return Redirect::to(&to).into_response();
            }
        }
    }
    next.run(req).await
}

/// The client's address: the peer, or, when the peer is a trusted proxy, the right-most
/// `X-Forwarded-For` entry that is not one of the trusted proxies (entries further left are
/// whatever the client claimed).
fn client_addr(peer: Option<std::net::IpAddr>, forwarded: &str, trusted: &[std::net::IpAddr]) -> String {
    let Some(peer) = peer else { return "unknown".into() };
    if !trusted.contains(&peer) {
        return peer.to_string();
    }
    forwarded
        .rsplit(',')
        .map(str::trim)
        .filter_map(|h| h.parse::<std::net::IpAddr>().ok())
        .find(|ip| !trusted.contains(ip))
        .unwrap_or(peer)
        .to_string()
}

fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl AuthState {
    /// The session cookie's name: `__Host-` prefixed when cookies are Secure.
    pub fn session_cookie(&self) -> &'static str {
        if self.secure {
            HOST_SESSION_COOKIE
        } else {
            SESSION_COOKIE
        }
    }

    fn cookies(&self, token: &str, csrf_token: &str, max_age: i64) -> Vec<String> {
        let secure = if self.secure { "; Secure" } else { "" };
        let csrf_name = if self.secure { csrf::HOST_COOKIE } else { csrf::COOKIE };
        vec![
            format!(
                "{}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}",
                self.session_cookie()
            ),
            // Readable by our own scripts (they echo it in the header), not HttpOnly on purpose.
            format!("{csrf_name}={csrf_token}; Path=/; SameSite=Strict; Max-Age={max_age}{secure}"),
        ]
    }

    async fn sign_in(&self, id: i64, name: String, role: Role) -> Result<SignedIn, ApiError> {
        let s = self.accounts.open_session(id).await.map_err(auth_error)?;
        Ok(SignedIn {
            caller: Caller { name, role },
            cookies: self.cookies(&s.token, &s.csrf, crate::accounts::ABSOLUTE_S),
        })
    }

    async fn record(&self, who: &str, kind: &str, subject: &str, reason: &str, detail: serde_json::Value) {
        self.journal.record(who, kind, subject, reason, detail).await;
    }
}

/// Why a sign-in was refused, for the two ways in: the server function (an `ApiError`) and
/// the plain form (a code in the sign-in page's address, shown in the reader's language).
#[derive(Debug)]
pub enum LoginRefusal {
    /// Unknown name or wrong password (the two are not told apart).
    Wrong,
    /// Too many failed attempts for the name or the address: seconds to wait.
    Wait(u64),
    /// Every password-hashing slot stayed busy (a flood of sign-ins).
    Busy,
    Failed(ApiError),
}

impl LoginRefusal {
    /// The `error` code (and wait) the sign-in page reads from its address.
    pub fn code(&self) -> (&'static str, Option<u64>) {
        match self {
            Self::Wrong => ("wrong", None),
            Self::Wait(s) => ("wait", Some(*s)),
            Self::Busy => ("busy", None),
            Self::Failed(_) => ("failed", None),
        }
    }
}

impl From<LoginRefusal> for ApiError {
    fn from(r: LoginRefusal) -> Self {
        match r {
            LoginRefusal::Wrong => auth_error(AuthError::BadLogin),
            LoginRefusal::Wait(s) => ApiError::TooMany(format!(
                "too many failed sign-ins for this name or address; try again in {s} s"
            )),
            LoginRefusal::Busy => auth_error(AuthError::Busy),
            LoginRefusal::Failed(e) => e,
        }
    }
}

impl AuthState {
    /// Checks a name and password under the sign-in limiter and opens a session.
    pub async fn check_login(&self, name: String, password: String, addr: String) -> Result<SignedIn, LoginRefusal> {
        let name = name.trim().to_string();
        // A name that cannot exist is refused like a wrong password, without a hash (the
        // name rules are public) and without putting the raw text in the log.
        if app::domain::auth::check_name(&name).is_err() || password.len() > 1024 {
            let shown: String = name.chars().take(64).collect::<String>().escape_debug().to_string();
            tracing::warn!(user = %shown, %addr, "failed sign-in (not a user name)");
            return Err(LoginRefusal::Wrong);
        }
        let reservation = self
            .limiter
            .reserve(&[Key::Name(name.clone()), Key::Addr(addr.clone())])
            .map_err(|wait| LoginRefusal::Wait(wait.as_secs().max(1)))?;
        match self.accounts.verify(&name, &password).await {
            Ok((id, role)) => {
                self.limiter.succeeded(reservation);
                tracing::info!(user = ?name, %addr, "signed in");
                self.sign_in(id, name, role).await.map_err(LoginRefusal::Failed)
            }
            Err(AuthError::BadLogin) => {
                // The reservation stays: it was a failed guess.
                // Debug-quoted: a name is anyone's input, and a newline in it would forge a log line.
                tracing::warn!(user = ?name, %addr, "failed sign-in");
                Err(LoginRefusal::Wrong)
            }
            Err(AuthError::Busy) => {
                self.limiter.release(reservation);
                Err(LoginRefusal::Busy)
            }
            Err(e) => {
                self.limiter.release(reservation);
                Err(LoginRefusal::Failed(auth_error(e)))
            }
        }
    }
}

/// The sign-in form's fields (`POST /login`, form-encoded).
#[derive(serde::Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    next: String,
}

/// `POST /login`: the sign-in page is a plain form (no wasm on that page, so it loads in a few
/// kilobytes). Signed in: the session cookies and a redirect to `next` (same-site paths only).
/// Refused: back to the sign-in page with the reason's code, the name kept out of the address.
pub async fn login_form(
    State(auth): State<AuthState>,
    axum::Extension(ClientAddr(addr)): axum::Extension<ClientAddr>,
    axum::Form(form): axum::Form<LoginForm>,
) -> Response {
    let next = app::domain::auth::safe_next(Some(form.next));
    match auth.check_login(form.name, form.password, addr).await {
        Ok(done) => {
            let mut resp = Redirect::to(&next).into_response();
            for c in &done.cookies {
                if let Ok(v) = axum::http::HeaderValue::from_str(c) {
                    resp.headers_mut().append(header::SET_COOKIE, v);
                }
            }
            resp
        }
        Err(refusal) => {
            if let LoginRefusal::Failed(e) = &refusal {
                tracing::warn!(error = %e, "sign-in failed");
            }
            let (code, wait) = refusal.code();
            let mut to = format!("/login?error={code}&next={}", urlencode(&next));
            if let Some(w) = wait {
                to.push_str(&format!("&wait={w}"));
            }
            Redirect::to(&to).into_response()
        }
    }
}

/// The language switch's fields (`POST /lang`).
#[derive(serde::Deserialize)]
pub struct LangForm {
    #[serde(default)]
    lang: String,
    #[serde(default)]
    back: String,
}

/// `POST /lang`: the language switch without scripts (the sign-in page has none): the cookie
/// the server renders by, then back to the page it was on.
pub async fn lang_form(axum::Form(form): axum::Form<LangForm>) -> Response {
    let back = app::domain::auth::safe_next(Some(form.back));
    let mut resp = Redirect::to(&back).into_response();
    if let Some(lang) = app::i18n::Lang::ALL.into_iter().find(|l| l.code() == form.lang) {
        let c = format!(
            "{}={}; Path=/; Max-Age=31536000; SameSite=Lax",
            app::i18n::LANG_COOKIE,
            lang.code()
        );
        if let Ok(v) = axum::http::HeaderValue::from_str(&c) {
            resp.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    resp
}

fn auth_error(e: AuthError) -> ApiError {
    match e {
        AuthError::Sqlx(_) | AuthError::Hash(_) => crate::api_error::internal(e),
        AuthError::Busy => ApiError::TooMany(e.to_string()),
        AuthError::BadLogin | AuthError::BadSecret => ApiError::Unauthorized(e.to_string()),
        other => ApiError::Invalid(other.to_string()),
    }
}

impl AccountService for AuthState {
    fn login(&self, name: String, password: String, addr: String) -> BoxFut<'_, Result<SignedIn, ApiError>> {
        Box::pin(async move { self.check_login(name, password, addr).await.map_err(ApiError::from) })
    }

    fn logout(&self, token: Option<String>) -> BoxFut<'_, Result<Vec<String>, ApiError>> {
        Box::pin(async move {
            if let Some(t) = token {
                match self.accounts.close_session(&t).await {
                    Ok(()) => {}
                    // Cut off from the database: this console honours the session no more and
                    // the browser forgets it; the row goes when the session's limits end it.
                    Err(e) if crate::db::away() => {
                        tracing::warn!(error = %e, "signed out while the database is away")
                    }
                    Err(e) => return Err(auth_error(e)),
                }
            }
            Ok(self.cookies("", "", 0))
        })
    }

    fn setup_admin(
        &self,
        secret: String,
        name: String,
        password: String,
        addr: String,
    ) -> BoxFut<'_, Result<SignedIn, ApiError>> {
        Box::pin(async move {
            // Guessing the secret is rate-limited like a password, on its own key per client.
            let reservation = self
                .limiter
                .reserve(&[Key::Setup(addr.clone()), Key::Addr(addr.clone())])
                .map_err(|wait| {
                    ApiError::TooMany(format!(
                        "too many wrong setup secrets; try again in {} s",
                        wait.as_secs().max(1)
                    ))
                })?;
            match self.accounts.setup_admin(&secret, &name, &password).await {
                Ok(id) => {
                    self.limiter.succeeded(reservation);
                    self.record(
                        &name,
                        "account-created",
                        &name,
                        "first admin (setup secret)",
                        serde_json::json!({"role": "admin"}),
                    )
                    .await;
                    self.sign_in(id, name, Role::Admin).await
                }
                Err(AuthError::BadSecret) => Err(auth_error(AuthError::BadSecret)),
                Err(e) => {
                    self.limiter.release(reservation);
                    Err(auth_error(e))
                }
            }
        })
    }

    fn needs_setup(&self) -> BoxFut<'_, Result<bool, ApiError>> {
        Box::pin(async move { self.accounts.needs_setup().await.map_err(auth_error) })
    }

    fn change_password(&self, who: String, old: String, new: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            // A stolen session must not become an unlimited password oracle.
            let reservation = self
                .limiter
                .reserve(&[Key::PasswordChange(who.clone())])
                .map_err(|wait| {
                    ApiError::TooMany(format!(
                        "too many wrong old passwords; try again in {} s",
                        wait.as_secs().max(1)
                    ))
                })?;
            match self.accounts.verify(&who, &old).await {
                Ok(_) => self.limiter.succeeded(reservation),
                Err(AuthError::BadLogin) => return Err(ApiError::Invalid("old password: wrong".into())),
                Err(other) => {
                    self.limiter.release(reservation);
                    return Err(auth_error(other));
                }
            }
            self.accounts
                .update(&who, None, None, Some(&new))
                .await
                .map_err(auth_error)?;
            self.record(
                &who,
                "account-password",
                &who,
                "own password changed",
                serde_json::json!({}),
            )
            .await;
            Ok(())
        })
    }

    fn list(&self) -> BoxFut<'_, Result<Vec<AccountInfo>, ApiError>> {
        Box::pin(async move {
            Ok(self
                .accounts
                .list()
                .await
                .map_err(auth_error)?
                .into_iter()
                .map(|a| AccountInfo {
                    name: a.name,
                    role: a.role,
                    disabled: a.disabled,
                    created_at: a.created_at,
                })
                .collect())
        })
    }

    fn create(&self, who: String, name: String, role: Role, password: String) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            self.accounts
                .create(name.trim(), &password, role)
                .await
                .map_err(auth_error)?;
            self.record(
                &who,
                "account-created",
                name.trim(),
                "created by an admin",
                serde_json::json!({"role": role}),
            )
            .await;
            Ok(())
        })
    }

    fn update(
        &self,
        who: String,
        name: String,
        role: Option<Role>,
        disabled: Option<bool>,
        password: Option<String>,
    ) -> BoxFut<'_, Result<(), ApiError>> {
        Box::pin(async move {
            self.accounts
                .update(&name, role, disabled, password.as_deref())
                .await
                .map_err(auth_error)?;
            self.record(
                &who,
                "account-changed",
                &name,
                "changed by an admin",
                serde_json::json!({"role": role, "disabled": disabled, "password_reset": password.is_some()}),
            )
            .await;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server function added without an entry in the access table would be refused for
    /// everybody; this says so at test time instead of in production.
    #[test]
    fn every_registered_server_function_is_in_the_access_table() {
        let paths: Vec<&str> = leptos::server_fn::axum::server_fn_paths().map(|(p, _)| p).collect();
        assert!(paths.len() >= app::domain::auth::SERVER_FNS.len(), "{paths:?}");
        for path in paths {
            assert!(
                matches!(need(path), Need::Function(..)),
                "{path} has no entry in app::domain::auth::SERVER_FNS"
            );
        }
        for (name, _) in app::domain::auth::SERVER_FNS {
            assert!(
                leptos::server_fn::axum::server_fn_paths().any(|(p, _)| p == format!("/api/fn/{name}")),
                "{name} is in the table but not a server function"
            );
        }
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let proxy: std::net::IpAddr = "10.0.0.1".parse().unwrap();
        let client: std::net::IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(client_addr(Some(client), "1.2.3.4", &[proxy]), "192.0.2.7");
        assert_eq!(client_addr(Some(proxy), "6.6.6.6, 192.0.2.7", &[proxy]), "192.0.2.7");
        assert_eq!(client_addr(Some(proxy), "192.0.2.7, 10.0.0.1", &[proxy]), "192.0.2.7");
        assert_eq!(client_addr(Some(proxy), "garbage", &[proxy]), "10.0.0.1");
        assert_eq!(client_addr(None, "", &[]), "unknown");
    }

    #[test]
    fn paths_are_classified_deny_by_default() {
        assert_eq!(need("/pkg/console.wasm"), Need::Public);
        assert_eq!(need("/login"), Need::Public);
        assert_eq!(need("/api/fn/nope"), Need::UnknownFunction);
        assert!(matches!(
            need("/api/fn/review_change"),
            Need::Function("review_change", Access::Role(Role::Approver))
        ));
        assert_eq!(need("/api/journal.json"), Need::Session);
        assert_eq!(need("/metrics"), Need::Metrics);
        assert_eq!(need("/changes/3"), Need::Page);
        assert!(constant_time_eq("abc", "abc") && !constant_time_eq("abc", "abd") && !constant_time_eq("", "a"));
    }
}
