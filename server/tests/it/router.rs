//! The router in-process (`server::web::router` driven with `tower::ServiceExt::oneshot`, no
//! spawned binary, no socket): the access table, the guard and the CSRF check for every server
//! function; cross-origin writes refused; every response carries a request id; an internal
//! error shows the browser that id, never the detail.

use app::domain::auth::{Access, Role, SERVER_FNS};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use server::accounts::Accounts;
use server::config::DataDir;
use server::context::Context;
use server::control::EngineControl;
use server::profile_store::ProfileStore;
use std::collections::HashMap;
use std::sync::Arc;
use tower::ServiceExt;

const PASSWORD: &str = "correct horse battery staple";

struct App {
    router: axum::Router,
    ctx: Context,
    dir: tempfile::TempDir,
    /// Held for the test: its sign-ins hash in this process (see `IN_PROCESS_SIGN_INS`).
    _sign_ins: tokio::sync::MutexGuard<'static, ()>,
}

async fn app() -> App {
    app_with("").await
}

/// The console's router in-process; `extra` is appended to its `roofline.toml`.
async fn app_with(extra: &str) -> App {
    let sign_ins = crate::common::IN_PROCESS_SIGN_INS.lock().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("roofline.toml"),
        format!("models_root = \"models\"\nstate_dir = \"state\"\n{extra}\n[engines.sim-vllm]\nkind = \"vllm\"\nsimulator = true\n"),
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
    let ctx = Context::new(EngineControl::new(data, ProfileStore::new(pool)));
    let metrics = Arc::new(server::monitor::console_metrics::ConsoleMetrics::default());
    let feeds = server::monitor::start(ctx.clone(), metrics.clone()).await;
    let router = server::web::router(ctx.clone(), feeds, metrics, "127.0.0.1:3000".parse().unwrap());
    App {
        router,
        ctx,
        dir,
        _sign_ins: sign_ins,
    }
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

    /// The login server function's answer to `name` and `password`.
    async fn try_login(&self, name: &str, password: &str) -> Reply {
        self.send(form(
            "/api/fn/login",
            &format!(
                "name={}&password={}",
                crate::common::urlencode(name),
                crate::common::urlencode(password)
            ),
        ))
        .await
    }

    /// Signs in through the login server function; returns (cookie header, CSRF token).
    async fn login(&self, name: &str) -> (String, String) {
        let r = self.try_login(name, PASSWORD).await;
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

    /// A server function called by a signed-in account (cookie and CSRF token) with a form body.
    async fn call_as(&self, session: &(String, String), endpoint: &str, body: &str) -> Reply {
        self.post_as(session, endpoint, "application/x-www-form-urlencoded", body.to_string())
            .await
    }

    /// A server-function call as `session` with a body of `content_type`.
    async fn post_as(&self, session: &(String, String), endpoint: &str, content_type: &str, body: String) -> Reply {
        self.send(
            Request::post(format!("/api/fn/{endpoint}"))
                .header("content-type", content_type)
                .header("cookie", &session.0)
                .header("x-csrf-token", &session.1)
                .body(Body::from(body))
                .unwrap(),
        )
        .await
    }

    /// A stored profile of the simulated vLLM with a model directory under the models root (not
    /// served: the tests here check what is refused before anything starts).
    async fn simulated_profile(&self, name: &str) -> app::domain::profile::Profile {
        let model = self.dir.path().join("models/m");
        std::fs::create_dir_all(&model).unwrap();
        let env = format!(
            "ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=m\nPORT={}\n",
            model.display(),
            crate::common::free_port()
        );
        let (profile, _) = app::domain::profile::Profile::from_env(name, &env).unwrap();
        self.ctx.store.upsert(&profile).await.unwrap();
        profile
    }

    /// A server function whose arguments are JSON (`update_account`), called as `session`.
    async fn call_json(&self, session: &(String, String), endpoint: &str, body: &serde_json::Value) -> Reply {
        self.post_as(session, endpoint, "application/json", body.to_string())
            .await
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
    // Other API routes need a session (the fleet's engines: or the fleet token, below);
    // /metrics is open while no Prometheus token is set (below).
    for (path, status) in [
        ("/api/journal.json", 401),
        ("/api/events/fleet", 401),
        ("/api/engines", 401),
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

/// The fleet's engines (profiles, hosts, ports, models, notes) are read by a signed-in user
/// or by another console presenting `[auth] fleet_token`; nobody else.
#[tokio::test(flavor = "multi_thread")]
async fn the_fleets_engines_need_a_session_or_the_fleet_token() {
    const TOKEN: &str = "4f0c7e2d9b8a61f3c5d7e9a1b3c5d7e9f1a3b5c7";
    let engines = |bearer: Option<&str>, cookie: Option<&str>| {
        let mut r = Request::get("/api/engines");
        if let Some(b) = bearer {
            r = r.header("authorization", format!("Bearer {b}"));
        }
        if let Some(c) = cookie {
            r = r.header("cookie", c);
        }
        r.body(Body::empty()).unwrap()
    };
    let app = app_with(&format!("[auth]\nfleet_token = \"{TOKEN}\"\n")).await;
    assert_eq!(app.send(engines(None, None)).await.status, 401);
    let wrong = app
        .send(engines(Some("4f0c7e2d9b8a61f3c5d7e9a1b3c5d7e9f1a3b5c8"), None))
        .await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("fleet_token"), "{}", wrong.body);
    let console = app.send(engines(Some(TOKEN), None)).await;
    assert_eq!(console.status, 200, "{}", console.body);
    assert!(console.body.starts_with('['), "{}", console.body);
    let (cookie, _) = app.login("vera").await;
    assert_eq!(app.send(engines(None, Some(&cookie))).await.status, 200);
    // The token opens this route only.
    let other = Request::get("/api/journal.json")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.send(other).await.status, 401);
    drop(app);
    // Without a configured token no bearer opens it.
    let bare = self::app().await;
    assert_eq!(bare.send(engines(Some(TOKEN), None)).await.status, 401);
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

fn form(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn set_cookies(r: &Reply) -> Vec<String> {
    r.headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sign_in_form_posts_without_scripts_and_redirects_only_on_this_site() {
    let app = app().await;
    // The page itself ships no wasm: no hydration script, no module preload.
    let page = app
        .send(Request::get("/login?next=/journal").body(Body::empty()).unwrap())
        .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains(r#"action="/login""#), "{}", page.body);
    assert!(
        !page.body.contains("modulepreload") && !page.body.contains(".wasm"),
        "{}",
        page.body
    );
    assert!(page.body.contains(r#"name="next""#) && page.body.contains(r#"value="/journal""#));

    // Right password: the two cookies, then where `next` said.
    let ok = app
        .send(form(
            "/login",
            "name=olga&password=correct+horse+battery+staple&next=%2Fjournal",
        ))
        .await;
    assert_eq!(ok.status, 303);
    assert_eq!(ok.headers["location"], "/journal");
    let cookies = set_cookies(&ok);
    assert!(
        cookies
            .iter()
            .any(|c| c.starts_with("roofline_session=") && c.contains("HttpOnly")),
        "{cookies:?}"
    );
    assert!(cookies.iter().any(|c| c.starts_with("roofline_csrf=")), "{cookies:?}");
    let session = cookies[0].split(';').next().unwrap().to_string();
    let journal = app
        .send(
            Request::get("/journal")
                .header("cookie", &session)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(journal.status, 200, "the session opened by the form works");
    assert!(
        journal.body.contains("modulepreload"),
        "a signed-in page loads the bundle"
    );

    // Another site as `next`: home instead.
    for next in [
        "%2F%2Fevil.example",
        "https%3A%2F%2Fevil.example",
        "%2F%09%2Fevil.example",
    ] {
        let r = app
            .send(form(
                "/login",
                &format!("name=olga&password=correct+horse+battery+staple&next={next}"),
            ))
            .await;
        assert_eq!(r.headers["location"], "/", "next={next}");
    }

    // Wrong password, unknown name, a name that cannot exist, missing fields: back to the page
    // with the reason's code; nothing of what was typed in the address.
    for body in [
        "name=olga&password=wrong+password+here&next=%2Fjournal",
        "name=nobody&password=whatever",
        "name=%00%0Abad&password=x",
        "",
    ] {
        let r = app.send(form("/login", body)).await;
        assert_eq!(r.status, 303, "{body}");
        let to = r.headers["location"].to_str().unwrap();
        assert!(to.starts_with("/login?error=wrong&next="), "{body}: {to}");
        assert!(!to.contains("password") && !to.contains("nobody"), "{to}");
        assert!(set_cookies(&r).is_empty());
    }
    // The page reads the code back in the reader's language.
    let back = app
        .send(Request::get("/login?error=wrong&next=/").body(Body::empty()).unwrap())
        .await;
    assert!(back.body.contains("User name or password is wrong."), "{}", back.body);

    // The limiter counts form sign-ins like the server function's: after five failures for a
    // name, the sixth is told to wait, with the seconds.
    let mut last = String::new();
    for _ in 0..6 {
        let r = app.send(form("/login", "name=anna&password=not+her+password")).await;
        last = r.headers["location"].to_str().unwrap().to_string();
    }
    assert!(last.starts_with("/login?error=wait&next=/&wait="), "{last}");
    let wait = app
        .send(
            Request::get(&last)
                .header("accept-language", "ru")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert!(wait.body.contains("Слишком много неудачных попыток"), "{}", wait.body);

    // From another origin the form is refused before it is read.
    let cross = app
        .send(
            Request::post("/login")
                .header("origin", "http://evil.example")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from("name=olga&password=correct+horse+battery+staple"))
                .unwrap(),
        )
        .await;
    assert_eq!(cross.status, 403);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_language_form_sets_the_cookie_and_goes_back_only_on_this_site() {
    let app = app().await;
    let r = app
        .send(form("/lang", "lang=ru&back=%2Flogin%3Fnext%3D%2Fjournal"))
        .await;
    assert_eq!(r.status, 303);
    assert_eq!(r.headers["location"], "/login?next=/journal");
    let cookies = set_cookies(&r);
    assert_eq!(cookies.len(), 1);
    assert!(
        cookies[0].starts_with("lang=ru;") && cookies[0].contains("SameSite=Lax"),
        "{cookies:?}"
    );
    let page = app
        .send(
            Request::get("/login")
                .header("cookie", "lang=ru")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert!(page.body.contains("Войти"), "{}", page.body);
    // An unknown language sets nothing; a foreign `back` goes home.
    let r = app.send(form("/lang", "lang=xx&back=%2F%2Fevil.example")).await;
    assert_eq!(r.headers["location"], "/");
    assert!(set_cookies(&r).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_development_bundle_is_served_from_the_site_directory_uncached() {
    let app = app().await;
    // Whatever target/site holds (or nothing): never a file outside it, never a page.
    let r = app
        .send(Request::get("/pkg/..%2F..%2FCargo.toml").body(Body::empty()).unwrap())
        .await;
    assert_eq!(r.status, 404);
    let r = app
        .send(Request::get("/pkg/no-such-file.js").body(Body::empty()).unwrap())
        .await;
    assert_eq!(r.status, 404);
    assert!(
        !r.body.contains("<html"),
        "a missing bundle file is a plain 404, not the app"
    );
}

/// Issue 11, through the router in-process: an operator submits v1, an approver opens it, the
/// operator saves v2, the approver approves what he saw. The approval is bound to the content
/// hash reviewed, so it is refused, naming both hashes; the approval of v2 as it is goes
/// through and the journal records the hash approved.
#[tokio::test(flavor = "multi_thread")]
async fn an_approval_binds_to_the_content_the_approver_saw() {
    let app = app().await;
    let model = app.dir.path().join("models/m");
    std::fs::create_dir_all(&model).unwrap();
    let active = format!(
        "ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nPORT=18123\n",
        model.display()
    );
    let (profile, _) = app::domain::profile::Profile::from_env("ed", &active).unwrap();
    app.ctx.store.upsert(&profile).await.unwrap();
    let active = profile.to_env();
    let (olga, anna) = (app.login("olga").await, app.login("anna").await);
    let propose = |id: Option<i64>, text: &str| {
        let id = id.map(|i| format!("id={i}&")).unwrap_or_default();
        format!(
            "{id}profile=ed&env_text={}&reason=4k&submit=true",
            crate::common::urlencode(text)
        )
    };
    let change = async |id: i64| -> serde_json::Value {
        let r = app.call_as(&anna, "get_change", &format!("id={id}")).await;
        assert_eq!(r.status, 200, "{}", r.body);
        serde_json::from_str(&r.body).unwrap()
    };

    let v1 = active.replace("CONTEXT_LENGTH=8192", "CONTEXT_LENGTH=4096");
    let r = app.call_as(&olga, "propose_change", &propose(None, &v1)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let id: i64 = r.body.trim().parse().unwrap();
    // The approver opens v1.
    let seen = change(id).await;
    let h1 = seen["content_hash"].as_str().unwrap().to_string();
    assert_eq!(h1.len(), 64, "{seen}");
    // The operator saves v2 while the approver reads.
    let v2 = active.replace("CONTEXT_LENGTH=8192", "CONTEXT_LENGTH=131072");
    let r = app.call_as(&olga, "propose_change", &propose(Some(id), &v2)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Approving what he saw is refused, naming the hash's start.
    let r = app
        .call_as(
            &anna,
            "review_change",
            &format!("id={id}&approve=true&comment=ok&content_hash={h1}"),
        )
        .await;
    assert!(
        r.status.as_u16() >= 400,
        "an approval of content that changed went through: {}",
        r.body
    );
    assert!(
        r.body.contains("changed since") && r.body.contains(&h1[..12]),
        "{}",
        r.body
    );
    let now = change(id).await;
    assert_eq!(now["summary"]["state"], "submitted", "{now}");
    assert_ne!(now["content_hash"], seen["content_hash"]);
    // Without a hash nothing is approved either.
    let r = app
        .call_as(&anna, "review_change", &format!("id={id}&approve=true&comment=ok"))
        .await;
    assert!(r.status.as_u16() >= 400, "{}", r.body);
    // v2 as it is now is approved, and the journal records the hash approved.
    let h2 = now["content_hash"].as_str().unwrap();
    let r = app
        .call_as(
            &anna,
            "review_change",
            &format!("id={id}&approve=true&comment=ok&content_hash={h2}"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let approved = app.ctx.journal.list(None, Some("change-approved"), 10).await.unwrap();
    assert!(
        approved.iter().any(|e| e.detail.to_string().contains(h2)),
        "{approved:?}"
    );
}

/// Roles at work (a viewer reads, an operator acts), the last admin stays, a password too
/// short is refused, and disabling an account ends its sessions at once.
#[tokio::test(flavor = "multi_thread")]
async fn viewers_read_operators_act_admins_manage_accounts() {
    let app = app().await;
    let profile = app.simulated_profile("acc").await;
    let (vera, root) = (app.login("vera").await, app.login("root").await);

    let r = app.call_as(&vera, "list_profiles", "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .call_as(&vera, "run_engine_action", "profile=acc&action=serve")
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        app.ctx.control.status(&profile).await.state,
        app::domain::engine::EngineState::Stopped,
        "a viewer's serve moved nothing"
    );

    let demote = serde_json::json!({"name": "root", "role": "operator", "disabled": null, "password": null});
    let r = app.call_json(&root, "update_account", &demote).await;
    assert!(r.status.as_u16() >= 400 && r.body.contains("last admin"), "{}", r.body);
    let r = app
        .call_as(
            &root,
            "create_account",
            &format!(
                "name=newbie&role=operator&password={}",
                crate::common::urlencode(PASSWORD)
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .call_as(&root, "create_account", "name=short&role=operator&password=abc")
        .await;
    assert!(r.status.as_u16() >= 400 && r.body.contains("password"), "{}", r.body);
    let newbie = app.login("newbie").await;
    assert_eq!(app.call_as(&newbie, "list_profiles", "").await.status, 200);
    let disable = serde_json::json!({"name": "newbie", "role": null, "disabled": true, "password": null});
    let r = app.call_json(&root, "update_account", &disable).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        app.call_as(&newbie, "list_profiles", "").await.status,
        401,
        "a disabled account's session ends"
    );
    assert_ne!(app.try_login("newbie", PASSWORD).await.status, 200);
}

/// The session cookie is HttpOnly and SameSite=Strict (the CSRF cookie readable by the page);
/// an unknown name answers like a wrong password; five failures lock the account's sign-in.
#[tokio::test(flavor = "multi_thread")]
async fn sign_in_sets_strict_cookies_and_is_rate_limited() {
    let app = app().await;
    let r = app.try_login("olga", PASSWORD).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let cookies = set_cookies(&r);
    let session = cookies.iter().find(|c| c.starts_with("roofline_session=")).unwrap();
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Strict"),
        "{session}"
    );
    let csrf = cookies.iter().find(|c| c.starts_with("roofline_csrf=")).unwrap();
    assert!(!csrf.contains("HttpOnly") && csrf.contains("SameSite=Strict"), "{csrf}");

    let nobody = app.try_login("nobody", "whatever whatever").await;
    let wrong = app.try_login("olga", "whatever whatever").await;
    assert_ne!(wrong.status, 200);
    assert_eq!((nobody.status, nobody.body), (wrong.status, wrong.body));
    for _ in 0..4 {
        assert_ne!(app.try_login("olga", "not the password").await.status, 200);
    }
    let locked = app.try_login("olga", PASSWORD).await;
    assert_ne!(locked.status, 200, "locked after five failures");
    assert!(locked.body.contains("too many failed sign-ins"), "{}", locked.body);
}

/// Pages need a session (the sign-in page, and back afterwards), render in the negotiated
/// language (cookie, then Accept-Language), show the rendered command line; a cross-origin
/// write reaches nothing; the console's own `/metrics` and the JSON fleet.
#[tokio::test(flavor = "multi_thread")]
async fn pages_render_in_the_negotiated_language_and_writes_need_our_origin() {
    let app = app().await;
    let profile = app.simulated_profile("web1").await;
    let get = |path: &str, cookie: &str, lang: Option<&str>| {
        let mut req = Request::get(path).header("cookie", cookie);
        if let Some(l) = lang {
            req = req.header("accept-language", l);
        }
        req.body(Body::empty()).unwrap()
    };
    let r = app.send(get("/profiles/web1", "", None)).await;
    assert_eq!(r.status, 303);
    assert_eq!(r.headers["location"], "/login?next=/profiles/web1");
    let r = app.send(get("/login", "", None)).await;
    assert!(r.body.contains("data-testid=\"login-submit\""), "{}", r.body);

    let olga = app.login("olga").await;
    // The fleet lists the profile once the collector has seen it.
    let mut en = String::new();
    for _ in 0..100 {
        en = app.send(get("/", &olga.0, None)).await.body;
        if en.contains("web1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        en.contains("<html lang=\"en\"") && en.contains(">Fleet<") && en.contains("web1"),
        "{en}"
    );
    let ru = app.send(get("/", &format!("lang=ru; {}", olga.0), None)).await.body;
    assert!(ru.contains("<html lang=\"ru\"") && ru.contains("Парк движков"), "{ru}");
    let ru = app.send(get("/profiles", &olga.0, Some("ru-RU,ru;q=0.9"))).await.body;
    assert!(ru.contains("Профили запуска"), "{ru}");
    let page = app.send(get("/profiles/web1", &olga.0, None)).await.body;
    assert!(
        page.contains("--served-model-name m"),
        "the rendered command line is shown"
    );
    assert_eq!(app.send(get("/nope", &olga.0, None)).await.status, 404);

    // A cross-origin write is refused before it reaches engine control.
    let evil = app
        .send(
            Request::post("/api/fn/run_engine_action")
                .header("content-type", "application/x-www-form-urlencoded")
                .header("cookie", &olga.0)
                .header("x-csrf-token", &olga.1)
                .header("origin", "http://evil.example")
                .body(Body::from("profile=web1&action=serve"))
                .unwrap(),
        )
        .await;
    assert_eq!(evil.status, 403, "{}", evil.body);
    assert_eq!(
        app.ctx.control.status(&profile).await.state,
        app::domain::engine::EngineState::Stopped
    );

    // The console's own /metrics, in Prometheus text format.
    let own = app.send(get("/metrics", "", None)).await.body;
    let parsed = app::domain::prometheus::parse(&own);
    assert!(parsed.errors.is_empty(), "{own}");
    let value = |name: &str, state: Option<&str>| {
        parsed
            .samples
            .iter()
            .find(|s| s.name == name && state.is_none_or(|st| s.label("state") == Some(st)))
            .map(|s| s.value)
    };
    assert_eq!(value("roofline_engines", Some("stopped")), Some(1.0), "{own}");
    assert!(value("roofline_scrapes_total", None).is_some());
    assert!(value("roofline_sse_clients", None).is_some());

    let fleet: serde_json::Value =
        serde_json::from_str(&app.send(get("/api/engines", &olga.0, None)).await.body).unwrap();
    assert_eq!(fleet[0]["profile"], "web1");
    assert_eq!(fleet[0]["simulated"], true);
}

/// Pages and server functions' answers travel compressed for a browser that takes it (the
/// engine page's HTML was 25 KiB as sent, 4–5 KiB compressed: a slow VPN carries it first);
/// the bundle keeps its own precompressed copies (not compressed twice), and the event
/// streams are never compressed (a compressor would hold their events back).
#[tokio::test(flavor = "multi_thread")]
async fn pages_and_answers_travel_compressed_and_event_streams_do_not() {
    use std::io::Read;
    let app = app().await;
    let olga = app.login("olga").await;
    let fetch = |req: Request<Body>| {
        let router = app.router.clone();
        async move {
            let resp = router.oneshot(req).await.unwrap();
            let headers = resp.headers().clone();
            let bytes = axum::body::to_bytes(resp.into_body(), 1 << 22).await.unwrap();
            (headers, bytes)
        }
    };
    let page = |accept: &str| {
        Request::get("/")
            .header("cookie", &olga.0)
            .header("accept-encoding", accept)
            .body(Body::empty())
            .unwrap()
    };
    let (plain_headers, plain) = fetch(page("identity")).await;
    assert!(plain_headers.get("content-encoding").is_none());
    let plain = String::from_utf8(plain.to_vec()).unwrap();
    assert!(plain.contains("<html"), "{plain}");

    let (headers, body) = fetch(page("gzip, deflate, br")).await;
    assert_eq!(headers["content-encoding"], "br", "{headers:?}");
    assert!(
        headers["vary"].to_str().unwrap().contains("accept-encoding"),
        "{headers:?}"
    );
    let mut html = String::new();
    brotli::Decompressor::new(&body[..], 4096)
        .read_to_string(&mut html)
        .unwrap();
    assert!(html.contains("<html") && html.contains("</html>"), "{html}");
    assert!(
        body.len() * 2 < html.len(),
        "{} bytes sent for {}",
        body.len(),
        html.len()
    );

    // A server function's answer, to a client that takes gzip only.
    let (headers, body) = fetch(
        Request::post("/api/fn/list_profiles")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", &olga.0)
            .header("x-csrf-token", &olga.1)
            .header("accept-encoding", "gzip")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    if headers.get("content-encoding").is_some() {
        assert_eq!(headers["content-encoding"], "gzip");
        let mut json = String::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_string(&mut json)
            .unwrap();
        assert!(json.starts_with('[') || json.starts_with('{'), "{json}");
    } else {
        assert!(body.len() < 1024, "an answer of {} bytes went uncompressed", body.len());
    }

    // The journal's export, streamed a page at a time: compressed whole (the compressor polls
    // the stream once more after its end, which a plain `unfold` answered with a panic and a
    // connection cut without a byte).
    let (headers, body) = fetch(
        Request::get("/api/journal.json")
            .header("cookie", &olga.0)
            .header("accept-encoding", "br")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(headers["content-encoding"], "br", "{headers:?}");
    let mut json = String::new();
    brotli::Decompressor::new(&body[..], 4096)
        .read_to_string(&mut json)
        .unwrap();
    // A whole file: the closing bracket came (a cut export ends without one).
    let entries: Result<Vec<serde_json::Value>, _> = serde_json::from_str(&json);
    assert!(entries.is_ok(), "{json}");

    // The fleet's event stream: never compressed, whatever the client takes.
    let resp = app
        .router
        .clone()
        .oneshot(
            Request::get(app::api::FLEET_STREAM)
                .header("cookie", &olga.0)
                .header("accept-encoding", "gzip, br")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    assert!(resp.headers().get("content-encoding").is_none(), "{:?}", resp.headers());
}

/// The console's `/metrics` names every profile, its engine kind and state, and the console's
/// version: once `[auth] prometheus_sd_token` is set, only that token (what the Prometheus
/// scrape job sends) or a signed-in session reads it; without the key it stays open, as a
/// Prometheus with no credentials configured expects.
#[tokio::test(flavor = "multi_thread")]
async fn the_consoles_metrics_need_the_prometheus_token_once_one_is_set() {
    const TOKEN: &str = "prometheus-token-0123456789abcdef0123456789";
    let app = app_with(&format!("[auth]\nprometheus_sd_token = \"{TOKEN}\"\n")).await;
    let metrics = |auth: Option<String>, cookie: Option<&str>| {
        let mut req = Request::get("/metrics");
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        req.body(Body::empty()).unwrap()
    };
    let r = app.send(metrics(None, None)).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(
        r.body.contains("prometheus_sd_token"),
        "the refusal names the key: {}",
        r.body
    );
    assert!(!r.body.contains("roofline_"), "{}", r.body);
    let r = app.send(metrics(Some("Bearer wrong".into()), None)).await;
    assert_eq!(r.status, 401);
    let r = app.send(metrics(Some(format!("Bearer {TOKEN}")), None)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("roofline_build_info"), "{}", r.body);
    let vera = app.login("vera").await;
    let r = app.send(metrics(None, Some(&vera.0))).await;
    assert_eq!(r.status, 200, "a viewer signed in reads it: {}", r.body);
    // The same token does not open anything else.
    let r = app
        .send(
            Request::get("/api/journal.json")
                .header("authorization", format!("Bearer {TOKEN}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, 401);
}
