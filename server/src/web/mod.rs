//! The web console: leptos pages and server functions, the event streams, static files and
//! the request guards (no cross-origin writes; sessions, roles and CSRF tokens).

mod adapters;
pub mod assets;
mod auth;
mod connections;
mod events;
mod guard;
mod incidents;
mod prometheus;
pub mod streams;
mod tls_listener;

use crate::context::Context;
use anyhow::{bail, Context as _};
use axum::routing::get;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct WebState {
    pub leptos: LeptosOptions,
    pub ctx: Context,
    pub fleet: tokio::sync::watch::Receiver<Vec<app::domain::engine::EngineStatus>>,
    pub gpu: tokio::sync::watch::Receiver<app::domain::gpu::GpuState>,
    pub history: crate::monitor::history::History,
    pub runs: crate::runs::live::LiveRuns,
    pub metrics: Arc<crate::monitor::console_metrics::ConsoleMetrics>,
    pub incidents: crate::incidents::Incidents,
    pub records: crate::records::Records,
    /// `/readyz`'s last database check and when it was made.
    pub readyz: ReadyCache,
}

/// The database part of `/readyz`, kept for a second.
pub type ReadyCache = Arc<std::sync::Mutex<Option<(std::time::Instant, Vec<String>)>>>;

impl axum::extract::FromRef<WebState> for LeptosOptions {
    fn from_ref(s: &WebState) -> Self {
        s.leptos.clone()
    }
}

/// Where the compiled browser bundle lives: `ROOFLINE_SITE`, else `site/` next to the
/// binary's target dir (`target/site` for a cargo build), else `./target/site`.
pub fn site_root() -> PathBuf {
    if let Some(p) = std::env::var_os("ROOFLINE_SITE") {
        return PathBuf::from(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        for up in exe.ancestors().skip(1).take(3) {
            let cand = up.join("site");
            if cand.join("pkg").exists() {
                return cand;
            }
        }
    }
    PathBuf::from("target/site")
}

/// The features the router and the fleet's job runner share: one run registry (a bench a
/// job started shows on the engine page), one incidents service, one review, this host.
#[derive(Clone)]
pub struct Shared {
    pub runs: crate::runs::live::LiveRuns,
    pub incidents: crate::incidents::Incidents,
    pub changes: crate::changes::Changes,
    pub hosts: crate::hosts::Hosts,
}

impl Shared {
    pub fn new(ctx: &Context, feeds: &crate::monitor::Feeds, me: Arc<crate::hosts::Identity>) -> Self {
        Self {
            runs: crate::runs::live::LiveRuns::new(ctx.clone(), Default::default()),
            incidents: crate::incidents::Incidents::new(
                ctx.clone(),
                Some(feeds.history.clone()),
                Some(feeds.gpu.clone()),
            ),
            changes: crate::changes::Changes::new(ctx.clone()),
            hosts: crate::hosts::Hosts::new(ctx.clone(), me),
        }
    }

    /// The use-cases the jobs queued for this host run through.
    pub fn performer(&self, ctx: &Context, feeds: &crate::monitor::Feeds) -> crate::hosts::perform::Performer {
        crate::hosts::perform::Performer {
            engines: crate::engines::Engines::new(ctx.clone(), feeds, self.runs.clone()),
            runs: self.runs.clone(),
            changes: self.changes.clone(),
            incidents: self.incidents.clone(),
            accounts: crate::accounts::Accounts::new(ctx.pool.clone()),
        }
    }
}

/// Builds the router (separately from binding, so tests can drive it).
pub fn router(
    ctx: Context,
    feeds: crate::monitor::Feeds,
    metrics: Arc<crate::monitor::console_metrics::ConsoleMetrics>,
    addr: SocketAddr,
) -> Router {
    let shared = Shared::new(&ctx, &feeds, Arc::new(crate::hosts::Identity::of(&ctx, addr)));
    router_with(ctx, feeds, metrics, addr, shared)
}

/// The router over features built by the caller (the console shares them with its runner).
pub fn router_with(
    ctx: Context,
    feeds: crate::monitor::Feeds,
    metrics: Arc<crate::monitor::console_metrics::ConsoleMetrics>,
    addr: SocketAddr,
    shared: Shared,
) -> Router {
    let site = assets::Site::detect(site_root());
    let urls = site.urls();
    let leptos = LeptosOptions::builder()
        .output_name("console")
        .site_root(site.root().to_string_lossy().into_owned())
        .site_pkg_dir(urls.pkg_dir.clone())
        .site_addr(addr)
        .build();
    let Shared {
        runs,
        incidents,
        changes,
        hosts,
    } = shared;
    let auth = auth::AuthState {
        accounts: crate::accounts::Accounts::new(ctx.pool.clone()),
        limiter: Default::default(),
        // Over the console's own HTTPS listener cookies are always Secure.
        secure: ctx.data.config.tls.listener().is_some()
            || ctx.data.config.auth.secure_cookies.unwrap_or(!addr.ip().is_loopback()),
        journal: ctx.journal.clone(),
        trusted_proxies: ctx.data.config.auth.trusted_proxies.clone(),
        fleet_token: ctx.data.config.auth.fleet_token.clone(),
        prometheus_token: ctx.data.config.auth.prometheus_sd_token.clone(),
    };
    let auth_accounts = auth.accounts.clone();
    let services = adapters::services(adapters::Features {
        ctx: ctx.clone(),
        feeds: feeds.clone(),
        runs: runs.clone(),
        incidents: incidents.clone(),
        auth: auth.clone(),
        changes,
        hosts,
    });
    let pool = ctx.pool.clone();
    let state = WebState {
        leptos: leptos.clone(),
        ctx,
        fleet: feeds.fleet,
        gpu: feeds.gpu,
        history: feeds.history,
        runs,
        metrics,
        incidents,
        records: crate::records::Records::start(pool),
        readyz: Default::default(),
    };
    let hsts = state.ctx.data.config.tls.listener().is_some();
    let names = guard::HostNames::new(&state.ctx.data.config.auth.allowed_hosts);
    // The same sessions as the pages' guard: a stream stays open through the degraded mode.
    let stream_gate = streams::StreamGate::new(auth_accounts);
    let routes = generate_route_list(app::App);
    Router::new()
        .route(app::api::FLEET_STREAM, get(events::fleet))
        .route(app::api::ENGINE_STREAM_ROUTE, get(events::engine))
        .route(app::api::RECORDS_STREAM, get(events::records))
        .route("/api/engines", get(events::engines_json))
        .route("/metrics", get(events::console_metrics))
        .route("/api/alerts/alertmanager", axum::routing::post(incidents::alertmanager))
        .route("/api/prometheus/sd", get(prometheus::service_discovery))
        .route("/api/incidents/{id}/postmortem.md", get(incidents::postmortem_markdown))
        .route("/api/journal.json", get(incidents::journal_export))
        .route("/favicon.svg", get(favicon))
        .route("/help/{doc}", get(help_doc))
        .route("/pkg/{*path}", get(assets::serve).with_state(Arc::new(site)))
        .route("/login", axum::routing::post(auth::login_form).with_state(auth.clone()))
        .route("/lang", axum::routing::post(auth::lang_form))
        .route("/healthz", get(events::healthz))
        .route("/readyz", get(events::readyz))
        .leptos_routes_with_context(
            &state,
            routes,
            {
                let services = services.clone();
                move || provide_context(services.clone())
            },
            {
                let (leptos, urls) = (leptos.clone(), urls.clone());
                move || app::shell(leptos.clone(), urls.clone())
            },
        )
        .fallback(leptos_axum::file_and_error_handler::<WebState, _>(move |o| {
            app::shell(o, urls.clone())
        }))
        // Inside the guard: a stream is counted and re-checked only once it is let in.
        .layer(axum::middleware::from_fn_with_state(stream_gate, streams::gate))
        .layer(axum::middleware::from_fn_with_state(auth, auth::guard))
        .layer(axum::middleware::from_fn(guard::refuse_cross_origin_writes))
        .layer(axum::middleware::from_fn_with_state(hsts, guard::security_headers))
        // Outermost of the checks: a request for another site's name gets no further.
        .layer(axum::middleware::from_fn_with_state(names, guard::allowed_host))
        .layer(axum::extract::DefaultBodyLimit::max(1 << 20))
        .layer(axum::middleware::from_fn(server_fn_status))
        .layer(axum::middleware::from_fn(request_id))
        .layer(compression())
        .with_state(state)
}

/// Pages and answers compressed for the browsers that take it: the HTML of a page (the engine
/// page's is 25 KiB with its data) reaches an operator on a slow VPN first, before any of the
/// bundle. Brotli at quality 4 (gzip at 4 for the rest): a few milliseconds a page, most of the
/// gain of quality 11, which is kept for the bundle compressed once at build time. Responses
/// that carry their own encoding (the bundle's precompressed copies) are left alone, and so
/// are the event streams (tower-http's default predicate: a compressor would hold their events
/// back) and bodies under 32 bytes. No secret travels in a body beside reflected input (the
/// CSRF token and the session are cookies), so compression reveals nothing (BREACH).
fn compression() -> tower_http::compression::CompressionLayer {
    tower_http::compression::CompressionLayer::new()
        .br(true)
        .gzip(true)
        .quality(tower_http::CompressionLevel::Precise(4))
}

/// A server function's error comes back as 500 whatever it is; this gives it the status it
/// means (`ApiError::status`: 401 not signed in, 403 not allowed, 429 too many attempts, 400
/// invalid input, …), so clients, proxies and logs can tell a refusal from a failure.
async fn server_fn_status(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let is_fn = req.uri().path().starts_with("/api/fn/");
    let resp = next.run(req).await;
    if !is_fn || resp.status() != axum::http::StatusCode::INTERNAL_SERVER_ERROR {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return axum::response::Response::from_parts(parts, axum::body::Body::empty());
    };
    if let Ok(e) = serde_json::from_slice::<app::api::ApiError>(&bytes) {
        if let Ok(status) = axum::http::StatusCode::from_u16(e.status()) {
            parts.status = status;
        }
    }
    axum::response::Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// Gives every request an id: errors logged while serving it carry the id, the browser is
/// told only the id (`crate::api_error`), and the response names it in `x-request-id`.
/// Gives each request an id (the `x-request-id` header, and the scope errors are logged in)
/// and logs one line per request: method, path (never the query), status, milliseconds. The
/// static bundle logs at debug level only.
async fn request_id(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let id = crate::api_error::new_id();
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let started = std::time::Instant::now();
    let mut resp = crate::api_error::REQUEST_ID.scope(id.clone(), next.run(req)).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let status = resp.status().as_u16();
    if path.starts_with("/pkg/") {
        tracing::debug!(target: "roofline::request", request_id = %id, %method, %path, status, ms, "request");
    } else {
        tracing::info!(target: "roofline::request", request_id = %id, %method, %path, status, ms, "request");
    }
    if let Ok(v) = axum::http::HeaderValue::from_str(&id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}

async fn favicon() -> impl axum::response::IntoResponse {
    const SVG: &str = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><path d='M1 14 L8 3 L15 14 Z' fill='#2f6fde'/></svg>";
    ([(axum::http::header::CONTENT_TYPE, "image/svg+xml")], SVG)
}

/// The release's own install guide and annotated host configuration, served by the console
/// (the fleet page's first-run note links here: an air-gapped operator has no web to search).
async fn help_doc(axum::extract::Path(doc): axum::extract::Path<String>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let text = match doc.as_str() {
        "INSTALL.md" => include_str!("../../../packaging/INSTALL.md"),
        "roofline.toml.example" => include_str!("../../../packaging/roofline.toml.example"),
        _ => return axum::http::StatusCode::NOT_FOUND.into_response(),
    };
    ([(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

/// Runs the console until Ctrl-C or SIGTERM. Engines keep running: they are not our children
/// in any way that ends with us.
pub async fn serve(ctx: Context, addr: SocketAddr) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() && ctx.data.config.auth.secure_cookies == Some(false) {
        tracing::warn!(
            "listening on {addr} with secure_cookies = false: sessions travel in clear text unless TLS is in front"
        );
    }
    crate::changes::Changes::new(ctx.clone()).recover().await;
    match crate::accounts::Accounts::new(ctx.pool.clone())
        .setup_secret(&ctx.data.console_id())
        .await
    {
        Ok(Some(secret)) => {
            // The one way in on a fresh console: printed once, stored only as a hash, used up
            // by the first admin. A restart before that prints a new one.
            let line = format!(
                "No accounts yet. Create the first admin at http://{addr}/setup with this one-time setup secret: {secret}"
            );
            tracing::warn!("{line}");
            println!("{line}");
        }
        Ok(None) => {}
        Err(e) => bail!("reading accounts: {e}"),
    }
    ctx.data.config.auth.check_secrets()?;
    let metrics = Arc::new(crate::monitor::console_metrics::ConsoleMetrics::default());
    // The fleet's hosts on the shared database: the other hosts' engines join this one's
    // fleet, and the jobs queued for this host's engines are performed here.
    let me = Arc::new(crate::hosts::Identity::of(&ctx, addr));
    let shared = crate::hosts::runner::follow(
        ctx.pool.clone(),
        me.clone(),
        crate::hosts::stale_after_ms(ctx.data.config.scrape_interval_s),
    );
    let feeds = crate::monitor::start_with(ctx.clone(), metrics.clone(), Some(shared)).await;
    let parts = Shared::new(&ctx, &feeds, me.clone());
    crate::hosts::runner::start(ctx.clone(), parts.performer(&ctx, &feeds), feeds.fleet.clone(), me)
        .await
        .context("taking this host's place in the fleet's database")?;
    let tls = match ctx.data.config.tls.listener() {
        // Relative paths mean the data directory, as every other path in its configuration
        // does (not wherever the console was started from).
        Some((cert, key)) => Some(
            crate::tls::server_config(&ctx.data.resolve(cert), &ctx.data.resolve(key)).context("[tls] cert and key")?,
        ),
        None => None,
    };
    let trusted = ctx.data.config.auth.trusted_proxies.clone();
    let app = router_with(ctx, feeds, metrics, addr, parts);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!("Roofline console on {scheme}://{addr}");
    println!("Roofline console on {scheme}://{addr}");
    use axum::serve::ListenerExt;
    let shutdown = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {}
        }
    };
    match tls {
        Some(config) => {
            let listener = tls_listener::TlsListener::new(listener, config);
            connections::serve(listener, app, trusted, shutdown).await;
        }
        None => {
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            connections::serve(listener, app, trusted, shutdown).await;
        }
    }
    Ok(())
}
