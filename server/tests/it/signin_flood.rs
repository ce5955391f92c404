//! Issue 11: 60 concurrent wrong sign-ins for one name ran 60 argon2 hashes at once (48 →
//! 562 MiB) and answered 500. Now the attempts are reserved before hashing (at most five
//! hashes for the name), the rest are refused with 429 before any work, a wrong password is
//! 401, and a name that cannot exist costs no hash. In-process, so the console's own hash
//! counter is exact (one test per binary).

use app::domain::auth::Role;
use axum::body::Body;
use axum::http::Request;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tower::ServiceExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_wrong_sign_ins_runs_five_hashes_and_is_told_429() {
    // The hash count is the process's: no other in-process sign-in may run meanwhile.
    let _sign_ins = crate::common::IN_PROCESS_SIGN_INS.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = server::config::DataDir::open(dir.path()).unwrap();
    let pool = server::db::open(&data.db_path()).await.unwrap();
    server::accounts::Accounts::new(pool.clone())
        .create("root", "correct horse battery staple", Role::Admin)
        .await
        .unwrap();
    let ctx = server::context::Context::new(server::control::EngineControl::new(
        data,
        server::profile_store::ProfileStore::new(pool),
    ));
    let metrics = Arc::new(server::monitor::console_metrics::ConsoleMetrics::default());
    let feeds = server::monitor::start(ctx.clone(), metrics.clone()).await;
    let router = server::web::router(ctx, feeds, metrics, "127.0.0.1:3000".parse().unwrap());
    let login = |name: &str, password: &str| {
        let router = router.clone();
        let body = format!("name={name}&password={password}");
        async move {
            let resp = router
                .oneshot(
                    Request::post("/api/fn/login")
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(Body::from(body))
                        .unwrap(),
                )
                .await
                .unwrap();
            resp.status().as_u16()
        }
    };

    let before = server::accounts::HASHES_STARTED.load(Ordering::Relaxed);
    let statuses = futures::future::join_all((0..60).map(|_| login("root", "wrong+wrong+wrong"))).await;
    let hashes = server::accounts::HASHES_STARTED.load(Ordering::Relaxed) - before;
    assert!(hashes <= 5, "{hashes} hashes for one name");
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 55, "{statuses:?}");
    assert!(!statuses.contains(&500), "{statuses:?}");

    // A name that cannot exist: refused like a wrong password, without a hash.
    let before = server::accounts::HASHES_STARTED.load(Ordering::Relaxed);
    let weird = "x".repeat(5000) + "%0A%1B[31m";
    assert_eq!(login(&weird, "p").await, 401);
    assert_eq!(server::accounts::HASHES_STARTED.load(Ordering::Relaxed), before);
}
