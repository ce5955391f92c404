//! The router in-process (`server::web::router` driven with `tower::ServiceExt::oneshot`, no
//! spawned binary, no socket): the access table, the guard and the CSRF check for every server
//! function; cross-origin writes refused; every response carries a request id; an internal
//! error shows the browser that id, never the detail.
// Tests and benches panic on a broken setup on purpose (workspace lint: no unwrap elsewhere).
#![allow(clippy::unwrap_used)]

use app::domain::auth::{Access, Role, SERVER_FNS};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use server::auth::Accounts;
use server::config::DataDir;
use server::control::profiles::ProfileStore;
use server::control::EngineControl;
use std::collections::HashMap;
use std::sync::Arc;
use tower::ServiceExt;

const PASSWORD: &str = "correct horse battery staple";

struct App {
    router: axum::Router,
    _dir: tempfile::TempDir,
}

async fn app() -> App {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("roofline.toml"),
        "models_root = \"models\"\nstate_dir = \"state\"\n\n[engines.sim-vllm]\nkind = \"vllm\"\nsimulator = true\n",
    )
    .unwrap();
    let data = DataDir::open(dir.path()).unwrap();
    let pool = server::db::open(&data.db_path()).await.unwrap();
    let accounts = Accounts::new(pool.clone());
    for (n, r) in [
        ("vera", Role::Viewer),
        ("olga", Role::Operator),
        ("anna", Role::Approver),
        ("root", Role::Admin),
    ] {
        accounts.create(n, PASSWORD, r).await.unwrap();
    }
    let control = EngineControl::new(data, ProfileStore::new(pool));
    let metrics = Arc::new(server::monitor::console_metrics::ConsoleMetrics::default());
    let feeds = server::monitor::start(control.clone(), metrics.clone()).await;
    let router = server::web::router(control, feeds, metrics, "127.0.0.1:3000".parse().unwrap());
    App { router, _dir: dir }
}

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

impl App {
    async fn send(&self, req: Request<Body>) -> Reply {
        let resp = self.router.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20).await.unwrap();
        Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// Signs in through the login server function; returns (cookie header, CSRF token).
    async fn login(&self, name: &str) -> (String, String) {
        let r = self
            .send(
                Request::post("/api/fn/login")
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(Body::from(format!("name={name}&password=correct+horse+battery+staple")))
                    .unwrap(),
            )
            .await;
        assert_eq!(r.status, 200, "login {name}: {}", r.body);
        let cookie = |n: &str| {
            r.headers
                .get_all("set-cookie")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find_map(|v| v.split(';').next()?.strip_prefix(&format!("{n}=")).map(str::to_string))
                .unwrap_or_default()
        };
        (
            format!("roofline_session={}", cookie("roofline_session")),
            cookie("roofline_csrf"),
        )
    }

    async fn call(&self, endpoint: &str, cookie: Option<&str>, csrf: Option<&str>) -> Reply {
        let mut req =
            Request::post(format!("/api/fn/{endpoint}")).header("content-type", "application/x-www-form-urlencoded");
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        if let Some(t) = csrf {
            req = req.header("x-csrf-token", t);
        }
        self.send(req.body(Body::empty()).unwrap()).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_function_checks_session_role_and_csrf() {
    let app = app().await;
    let mut sessions = HashMap::new();
    for (n, r) in [
        ("vera", Role::Viewer),
        ("olga", Role::Operator),
        ("anna", Role::Approver),
        ("root", Role::Admin),
    ] {
        sessions.insert(r, app.login(n).await);
    }
    let mut checked = 0;
    for (endpoint, access) in SERVER_FNS {
        let Access::Role(needed) = access else { continue };
        let r = app.call(endpoint, None, None).await;
        assert_eq!(r.status, 401, "{endpoint} without a session: {}", r.body);
        for role in Role::ALL.into_iter().filter(|r| r < needed) {
            let (cookie, csrf) = &sessions[&role];
            let r = app.call(endpoint, Some(cookie), Some(csrf)).await;
            assert_eq!(r.status, 403, "{endpoint} as {role:?}: {}", r.body);
        }
        let (cookie, _) = &sessions[needed];
        let r = app.call(endpoint, Some(cookie), None).await;
        assert_eq!(r.status, 403, "{endpoint} without the CSRF token");
        assert!(r.body.contains("CSRF"), "{endpoint}: {}", r.body);
        let r = app.call(endpoint, Some(cookie), Some(&"0".repeat(64))).await;
        assert_eq!(r.status, 403, "{endpoint} with a wrong CSRF token");
        checked += 1;
    }
    assert!(checked > 20, "only {checked} functions in the access table");
    let (cookie, csrf) = &sessions[&Role::Admin];
    let r = app.call("no_such_function", Some(cookie), Some(csrf)).await;
    assert_eq!(r.status, 403, "unknown functions are refused: {}", r.body);
    // Other API routes need a session; the fleet JSON and /metrics stay open for the fleet.
    for (path, status) in [
        ("/api/journal.json", 401),
        ("/api/events/fleet", 401),
        ("/api/engines", 200),
        ("/metrics", 200),
    ] {
        let r = app.send(Request::get(path).body(Body::empty()).unwrap()).await;
        assert_eq!(r.status, status, "{path}");
    }
    // Pages send the anonymous to the sign-in page.
    let r = app.send(Request::get("/journal").body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, 303);
    assert!(r.headers["location"].to_str().unwrap().starts_with("/login"));
}

#[tokio::test(flavor = "multi_thread")]
async fn cross_origin_writes_are_refused_before_anything_else() {
    let app = app().await;
    let (cookie, csrf) = app.login("root").await;
    let r = app
        .send(
            Request::post("/api/fn/list_journal")
                .header("cookie", &cookie)
                .header("x-csrf-token", &csrf)
                .header("origin", "http://evil.example")
                .header("sec-fetch-site", "cross-site")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_names_its_request_id() {
    let app = app().await;
    let a = app
        .send(Request::get("/api/engines").body(Body::empty()).unwrap())
        .await;
    let b = app
        .send(Request::get("/api/engines").body(Body::empty()).unwrap())
        .await;
    let id = |r: &Reply| r.headers["x-request-id"].to_str().unwrap().to_string();
    assert_eq!(id(&a).len(), 12);
    assert_ne!(id(&a), id(&b));
}
