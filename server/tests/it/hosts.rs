//! Issue 16: several hosts' consoles on one PostgreSQL are one console: one set of accounts,
//! one journal, and an action on another host's engine queued as a job there, claimed and
//! performed by that host's console with its own engine control.

use crate::common::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Host consoles sharing `url`, each with its own data directory and name.
fn host(url: &str, name: &str) -> Env {
    Env::with_extra_config(&format!(
        "database_url = \"{url}\"\nhost_name = \"{name}\"\nscrape_interval_s = 1\n"
    ))
}

async fn job(s: &Session, id: i64) -> serde_json::Value {
    let (code, body) = s.call("get_job", &format!("id={id}")).await;
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

async fn settled(s: &Session, id: i64, within: Duration) -> serde_json::Value {
    eventually(within, async || {
        let j = job(s, id).await;
        matches!(j["state"].as_str(), Some("done" | "failed")).then_some(j)
    })
    .await
    .unwrap_or_else(|| panic!("job {id} did not finish"))
}

async fn engines_of(port: u16) -> Vec<serde_json::Value> {
    console_engines(port)
        .await
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

/// Hosts gpu-a and gpu-b on one PostgreSQL (gpu-b reaching it at `b_url`), alice an operator,
/// `profile` served on gpu-b, both consoles up and gpu-a's fleet showing gpu-b's engine.
struct TwoHosts {
    a: Env,
    b: Env,
    ports: [u16; 2],
    _consoles: Vec<Console>,
}

async fn two_hosts(url: &str, b_url: &str, profile: &str) -> TwoHosts {
    let (a, b) = (host(url, "gpu-a"), host(b_url, "gpu-b"));
    a.add_user("alice", "operator");
    b.vllm_profile(profile, free_port(), "");
    b.serve_ok(profile);
    let ports = [free_port(), free_port()];
    let consoles = vec![Console::start(&a, ports[0]), Console::start(&b, ports[1])];
    eventually(Duration::from_secs(30), async || {
        engines_of(ports[0])
            .await
            .into_iter()
            .find(|e| e["node"] == "gpu-b" && e["state"] == "healthy")
    })
    .await
    .expect("gpu-a's fleet shows gpu-b's engine");
    TwoHosts {
        a,
        b,
        ports,
        _consoles: consoles,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn three_hosts_on_one_postgres_operate_each_others_engines() {
    let Some(url) = pg_database().await else { return };
    let (a, b, c) = (host(&url, "gpu-a"), host(&url, "gpu-b"), host(&url, "gpu-c"));
    // One set of accounts: made on one host, valid on all.
    a.add_user("alice", "operator");
    c.add_user("vera", "viewer");
    // Profiles are the fleet's; engines run where they are served.
    let engine_port = free_port();
    b.vllm_profile("b-llama", engine_port, "");
    b.serve_ok("b-llama");
    let pid_before = b.status("b-llama")["pid"].as_i64().unwrap();
    let ports = [free_port(), free_port(), free_port()];
    let _consoles: Vec<Console> = [&a, &b, &c]
        .iter()
        .zip(ports)
        .map(|(e, p)| Console::start(e, p))
        .collect();

    // Host A's fleet shows B's engine, marked with its host and linked to B's console.
    let started = Instant::now();
    let seen = eventually(Duration::from_secs(30), async || {
        engines_of(ports[0])
            .await
            .into_iter()
            .find(|e| e["node"] == "gpu-b" && e["profile"] == "b-llama" && e["state"] == "healthy")
    })
    .await
    .expect("gpu-a's fleet shows gpu-b's engine");
    eprintln!(
        "gpu-b's engine on gpu-a's fleet {} ms after the consoles started",
        started.elapsed().as_millis()
    );
    assert_eq!(seen["link"], format!("http://127.0.0.1:{}/engines/b-llama", ports[1]));
    // Ready on PostgreSQL (issue 47: the write probe was SQLite's dialect, 503 always).
    for port in ports {
        let r = client()
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        assert_eq!(status, 200, "{}", r.text().await.unwrap_or_default());
    }

    let alice = Session::login(&format!("http://127.0.0.1:{}", ports[0]), "alice").await;
    // Every host is in the registry, heard from.
    let hosts: serde_json::Value = serde_json::from_str(&alice.call("list_hosts", "").await.1).unwrap();
    let names: Vec<(&str, bool)> = hosts
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["name"].as_str().unwrap(), h["reachable"].as_bool().unwrap()))
        .collect();
    assert_eq!(names, [("gpu-a", true), ("gpu-b", true), ("gpu-c", true)], "{hosts}");

    // Alice, signed in on A, restarts B's engine: a job B claims and performs.
    let queued = Instant::now();
    let (code, body) = alice
        .call(
            "request_host_action",
            "host=gpu-b&profile=b-llama&action=restart&reason=rolling+drill",
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    let done = settled(&alice, id, Duration::from_secs(60)).await;
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(
        (done["requested_by"].as_str(), done["requested_on"].as_str()),
        (Some("alice"), Some("gpu-a"))
    );
    let claimed_after = done["claimed_ms"].as_i64().unwrap() - done["created_ms"].as_i64().unwrap();
    eprintln!(
        "job claimed {claimed_after} ms after it was queued; done {} ms after",
        queued.elapsed().as_millis()
    );
    assert!(
        claimed_after < 2_000,
        "claimed within a poll at worst: {claimed_after} ms"
    );
    let after = b.status("b-llama");
    assert_eq!(after["state"], "healthy");
    assert_ne!(after["pid"].as_i64().unwrap(), pid_before, "restarted on gpu-b");

    // Its log, read on B, shown on A.
    let (_, body) = alice
        .call("request_host_action", "host=gpu-b&profile=b-llama&action=logs&reason=")
        .await;
    let logs = settled(&alice, body.trim().parse().unwrap(), Duration::from_secs(30)).await;
    assert_eq!(logs["state"], "done", "{logs}");
    assert!(logs["outcome"].as_str().unwrap().contains("vLLM"), "{logs}");

    // Refused before anything is queued: a host that is not in the registry, a profile that
    // does not exist, a viewer.
    let (code, body) = alice
        .call("request_host_action", "host=gpu-z&profile=b-llama&action=stop&reason=")
        .await;
    assert!(code >= 400 && body.contains("no host named gpu-z"), "{code} {body}");
    let (code, body) = alice
        .call("request_host_action", "host=gpu-b&profile=nope&action=stop&reason=")
        .await;
    assert!(code >= 400 && body.contains("nope"), "{code} {body}");
    let vera = Session::login(&format!("http://127.0.0.1:{}", ports[2]), "vera").await;
    let (code, _) = vera
        .call("request_host_action", "host=gpu-b&profile=b-llama&action=stop&reason=")
        .await;
    assert_eq!(code, 403);
    // The job is visible from every host (the viewer on C follows it too).
    assert_eq!(job(&vera, id).await["state"], "done");

    // One journal: the restart B performed, by alice with her reason and the job, written in
    // the chain every host verifies.
    for env in [&a, &b, &c] {
        let out = env.run(&["journal", "verify"]);
        assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    }
    let list: serde_json::Value =
        serde_json::from_str(&str(&c.run(&["--json", "journal", "list", "--profile", "b-llama"])).0).unwrap();
    let restart = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "restart")
        .expect("the restart is journaled");
    assert_eq!(restart["who"], "alice");
    assert!(
        restart["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("rolling drill (job #{id} from gpu-a)")),
        "{restart}"
    );
    b.run(&["stop", "--profile", "b-llama"]);
}

/// The rest of an engine's actions follow it to its host: a smoke test and a bench asked on
/// the Hosts page, an incident opened on A whose evidence is read on B, a change's gate
/// started on A that serves the candidate on B. The account is read again where the job runs:
/// a job queued in the requester's name by hand, for an account that cannot act, is refused.
#[tokio::test(flavor = "multi_thread")]
async fn smoke_bench_gate_and_evidence_run_where_the_engine_runs() {
    let Some(url) = pg_database().await else { return };
    let TwoHosts { a, b, ports, .. } = &two_hosts(&url, &url, "b-llama").await;
    a.add_user("bob", "approver");
    a.add_user("vera", "viewer");
    let base = format!("http://127.0.0.1:{}", ports[0]);
    let alice = Session::login(&base, "alice").await;
    let bob = Session::login(&base, "bob").await;
    let queue = async |s: &Session, args: &str| {
        let (code, body) = s.call("request_host_action", args).await;
        assert_eq!(code, 200, "{args}: {body}");
        body.trim().parse::<i64>().unwrap()
    };

    // smoke-toolcall on B, to its verdict, the stored run named.
    let id = queue(
        &alice,
        "host=gpu-b&profile=b-llama&action=smoke&reason=after+the+driver+update",
    )
    .await;
    let smoke = settled(&alice, id, Duration::from_secs(120)).await;
    assert_eq!(smoke["state"], "done", "{smoke}");
    assert!(
        smoke["outcome"]
            .as_str()
            .unwrap()
            .starts_with("smoke-toolcall passed (run #"),
        "{smoke}"
    );
    assert!(smoke["result_id"].as_i64().is_some(), "{smoke}");

    // A bench with the form's parameters; without them it is refused before it is queued.
    let (code, body) = alice
        .call("request_host_action", "host=gpu-b&profile=b-llama&action=bench&reason=")
        .await;
    assert!(code >= 400 && body.contains("bench"), "{code} {body}");
    let id = queue(
        &alice,
        "host=gpu-b&profile=b-llama&action=bench&reason=&args[bench][requests]=6&args[bench][concurrency]=2&args[bench][input_len]=32&args[bench][output_len]=8",
    )
    .await;
    let bench = settled(&alice, id, Duration::from_secs(120)).await;
    assert_eq!(bench["state"], "done", "{bench}");
    assert_eq!(bench["args"]["bench"]["requests"], 6, "{bench}");
    assert!(
        bench["outcome"]
            .as_str()
            .unwrap()
            .starts_with("bench: 6 completed, 0 failed"),
        "{bench}"
    );

    // An incident opened from A's incidents page: the evidence is B's (its health, its log).
    let (code, body) = alice
        .call("open_incident", "profile=b-llama&clients_see_errors=true")
        .await;
    assert_eq!(code, 200, "{body}");
    let incident: i64 = body.trim().parse().unwrap();
    let (_, body) = alice.call("get_incident", &format!("id={incident}")).await;
    let inc: serde_json::Value = serde_json::from_str(&body).unwrap();
    let ev = &inc["evidence"];
    assert_eq!(
        ev["health_status"], 200,
        "read on gpu-b, where the engine answers: {ev}"
    );
    assert_eq!(ev["clients_see_errors"], true, "{ev}");
    assert!(!ev["log_tail"].as_array().unwrap().is_empty(), "{ev}");
    let jobs: serde_json::Value = serde_json::from_str(&alice.call("list_jobs", "").await.1).unwrap();
    let evidence = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["action"] == "evidence")
        .expect("an evidence job");
    assert_eq!(
        (evidence["host"].as_str(), evidence["result_id"].as_i64()),
        (Some("gpu-b"), Some(incident))
    );

    // A change approved on A, its gate started on A: the candidate is served and checked on B.
    let active = str(&b.run(&["profile", "export", "b-llama"])).0;
    let candidate = active.replace("CONTEXT_LENGTH=8192", "CONTEXT_LENGTH=4096");
    let (code, body) = alice
        .call(
            "propose_change",
            &format!(
                "profile=b-llama&env_text={}&reason=shorter+context&submit=true",
                urlencode(&candidate)
            ),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let change_id: i64 = body.trim().parse().unwrap();
    let (code, body) = review(&bob, change_id, true, "ok").await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = alice.call("start_change_gate", &format!("id={change_id}")).await;
    assert_eq!(code, 200, "{body}");
    // Queued for gpu-b, which moves it to its gate within moments and then to its end.
    let gated = eventually(Duration::from_secs(180), async || {
        let c = change(&alice, change_id).await;
        (!matches!(c["summary"]["state"].as_str(), Some("approved" | "gating"))).then_some(c)
    })
    .await
    .expect("the gate finishes");
    assert_eq!(gated["summary"]["state"], "active", "{gated}");
    let jobs: serde_json::Value = serde_json::from_str(&alice.call("list_jobs", "").await.1).unwrap();
    let gate = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["action"] == "gate")
        .expect("the gate went to gpu-b as a job")
        .clone();
    let gate = settled(&alice, gate["id"].as_i64().unwrap(), Duration::from_secs(60)).await;
    assert_eq!(
        (
            gate["host"].as_str(),
            gate["state"].as_str(),
            gate["result_id"].as_i64()
        ),
        (Some("gpu-b"), Some("done"), Some(change_id)),
        "{gate}"
    );
    let status = b.status("b-llama");
    assert_eq!(status["state"], "healthy", "{status}");
    assert!(
        str(&b.run(&["profile", "show", "b-llama"]))
            .0
            .contains("CONTEXT_LENGTH=4096"),
        "the candidate is active on gpu-b"
    );

    // A job in the name of an account that may not act (a viewer) is refused where it runs.
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let forged: i64 = sqlx::query_scalar(
        "insert into job (host, profile, action, requested_by, requested_on, reason, state, created_ms)
         values ('gpu-b', 'b-llama', 'stop', 'vera', 'gpu-a', '', 'queued', 0) returning job_id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let refused = settled(&alice, forged, Duration::from_secs(30)).await;
    assert_eq!(refused["state"], "failed", "{refused}");
    assert!(
        refused["outcome"].as_str().unwrap().contains("vera may not act"),
        "{refused}"
    );
    assert_eq!(b.status("b-llama")["state"], "healthy", "nothing was stopped");

    // The incident's own action, taken on A's incident page: the engine on B stops, and the
    // outcome and B's re-check land on the incident's timeline.
    let act =
        serde_json::json!({"id": incident, "action": {"kind": "stop"}, "reason": "drain before the driver update"});
    let r = alice.post_json("incident_action", &act).send().await.unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    eventually(Duration::from_secs(60), async || {
        (b.status("b-llama")["state"] == "stopped").then_some(())
    })
    .await
    .expect("the incident's stop ran on gpu-b");
    let timeline = eventually(Duration::from_secs(60), async || {
        let (_, body) = alice.call("get_incident", &format!("id={incident}")).await;
        body.contains("\"recheck\"").then_some(body)
    })
    .await
    .expect("the outcome and re-check are on the timeline");
    assert!(timeline.contains("drain before the driver update (job #"), "{timeline}");
    for env in [&a, &b] {
        let out = env.run(&["journal", "verify"]);
        assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    }
    b.run(&["stop", "--profile", "b-llama"]);
}

/// A host whose console is down keeps its jobs queued, and performs them when it is back;
/// one killed while a job ran fails that job with the reason at its next start.
#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_is_down_keeps_its_jobs_until_it_is_back() {
    let Some(url) = pg_database().await else { return };
    let (a, b) = (host(&url, "gpu-a"), host(&url, "gpu-b"));
    a.add_user("alice", "operator");
    let engine_port = free_port();
    b.vllm_profile("b-qwen", engine_port, "");
    let ports = [free_port(), free_port()];
    let _a = Console::start(&a, ports[0]);
    let b_console = Console::start(&b, ports[1]);
    eventually(Duration::from_secs(20), async || console_engines(ports[0]).await)
        .await
        .expect("gpu-a's console answers");
    let alice = Session::login(&format!("http://127.0.0.1:{}", ports[0]), "alice").await;
    // B registered, then goes down.
    eventually(Duration::from_secs(20), async || {
        let hosts: serde_json::Value = serde_json::from_str(&alice.call("list_hosts", "").await.1).ok()?;
        (hosts.as_array()?.len() == 2).then_some(())
    })
    .await
    .expect("both hosts registered");
    drop(b_console);
    let (code, body) = alice
        .call(
            "request_host_action",
            "host=gpu-b&profile=b-qwen&action=serve&reason=after+maintenance",
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        job(&alice, id).await["state"],
        "queued",
        "nobody else performs gpu-b's job"
    );
    // B is back: the job runs there.
    let _b = Console::start(&b, ports[1]);
    let done = settled(&alice, id, Duration::from_secs(60)).await;
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(b.status("b-qwen")["state"], "healthy");
    b.run(&["stop", "--profile", "b-qwen"]);
}

/// A PostgreSQL of this test's own (it restarts it): `scripts/postgres.sh` in a temporary
/// directory, stopped and removed on drop.
struct OwnPostgres {
    dir: tempfile::TempDir,
    admin: String,
}

impl OwnPostgres {
    fn script() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh")
    }

    /// `None` where the test run has no PostgreSQL (the same gate as `pg_database`).
    async fn start() -> Option<Self> {
        pg_database().await?;
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(Self::script())
            .arg("start")
            .arg(dir.path().join("pg"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", str(&out));
        Some(Self {
            admin: String::from_utf8(out.stdout).unwrap().trim().to_string(),
            dir,
        })
    }

    async fn database(&self) -> String {
        use sqlx::{Connection, Executor};
        let mut conn = sqlx::PgConnection::connect(&self.admin).await.unwrap();
        conn.execute("create database drill").await.unwrap();
        format!("{}/drill", self.admin.rsplit_once('/').unwrap().0)
    }

    /// Stops the server, waits `down`, starts it again on the same port.
    fn restart(&self, down: Duration) {
        let out = std::process::Command::new(Self::script())
            .arg("restart")
            .arg(self.dir.path().join("pg"))
            .arg(down.as_secs().to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", str(&out));
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = std::process::Command::new(Self::script())
            .arg("stop")
            .arg(self.dir.path().join("pg"))
            .output();
    }
}

/// Issue 16's drill: PostgreSQL stopped for three seconds while two hosts' consoles work and an
/// operator queues jobs. The consoles reconnect by themselves; the session stays valid; every
/// job accepted is performed exactly once; the journal's chain holds on both hosts.
#[tokio::test(flavor = "multi_thread")]
async fn postgres_restarted_during_traffic_loses_nothing_and_runs_nothing_twice() {
    let Some(pg) = OwnPostgres::start().await else { return };
    let url = pg.database().await;
    let TwoHosts { a, b, ports, .. } = &two_hosts(&url, &url, "b-drill").await;
    let alice = Session::login(&format!("http://127.0.0.1:{}", ports[0]), "alice").await;

    // Traffic: a job for gpu-b's log every 200 ms, through the outage.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let traffic = {
        let (alice, stop) = (alice.clone(), stop.clone());
        tokio::spawn(async move {
            let (mut accepted, mut refused) = (Vec::new(), 0);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match alice
                    .call(
                        "request_host_action",
                        "host=gpu-b&profile=b-drill&action=logs&reason=drill",
                    )
                    .await
                {
                    (200, body) => accepted.push(body.trim().parse::<i64>().unwrap()),
                    _ => refused += 1,
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            (accepted, refused)
        })
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    pg.restart(Duration::from_secs(3));
    tokio::time::sleep(Duration::from_secs(6)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (accepted, refused) = traffic.await.unwrap();
    eprintln!(
        "{} jobs accepted, {refused} refused while the database was down",
        accepted.len()
    );
    assert!(
        accepted.len() >= 10,
        "requests flowed before and after: {}",
        accepted.len()
    );

    // Every accepted job is performed, once; none is left queued or running.
    for id in &accepted {
        let j = settled(&alice, *id, Duration::from_secs(30)).await;
        assert_eq!(j["state"], "done", "{j}");
    }
    // An engine action after the outage runs once and is journaled once.
    let (code, body) = alice
        .call(
            "request_host_action",
            "host=gpu-b&profile=b-drill&action=restart&reason=after+the+drill",
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    assert_eq!(settled(&alice, id, Duration::from_secs(60)).await["state"], "done");
    for env in [&a, &b] {
        let out = env.run(&["journal", "verify"]);
        assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    }
    let list: serde_json::Value =
        serde_json::from_str(&str(&a.run(&["--json", "journal", "list", "--profile", "b-drill"])).0).unwrap();
    let restarts = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "restart")
        .count();
    assert_eq!(restarts, 1, "{list}");
    b.run(&["stop", "--profile", "b-drill"]);
}

/// A TCP path to PostgreSQL that the test can cut as a network would: while cut, nothing
/// passes either way and nothing is refused (connections hang, new ones too); when it is
/// restored, the connections from before are reset (as a firewall that lost its state does)
/// and new ones pass.
struct Link {
    port: u16,
    cut: tokio::sync::watch::Sender<bool>,
    generation: tokio::sync::watch::Sender<u64>,
}

impl Link {
    async fn to(target: std::net::SocketAddr) -> Link {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (cut, cut_rx) = tokio::sync::watch::channel(false);
        let (generation, gen_rx) = tokio::sync::watch::channel(0u64);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (cut, mut gen) = (cut_rx.clone(), gen_rx.clone());
                tokio::spawn(async move {
                    let born = *gen.borrow_and_update();
                    let mut waiting = cut.clone();
                    // A connection made while cut waits; it is reset when the link is back.
                    while *waiting.borrow_and_update() {
                        if waiting.changed().await.is_err() {
                            return;
                        }
                    }
                    if *gen.borrow() != born {
                        return;
                    }
                    let Ok(server) = tokio::net::TcpStream::connect(target).await else {
                        return;
                    };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    tokio::select! {
                        _ = pump(cr, sw, cut.clone()) => {}
                        _ = pump(sr, cw, cut.clone()) => {}
                        _ = gen.changed() => {}
                    }
                });
            }
        });
        Link { port, cut, generation }
    }

    fn cut(&self) {
        self.cut.send_replace(true);
    }

    fn restore(&self) {
        self.generation.send_modify(|g| *g += 1);
        self.cut.send_replace(false);
    }
}

/// Copies one direction, holding what it read while the link is cut.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut cut: tokio::sync::watch::Receiver<bool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while *cut.borrow_and_update() {
            if cut.changed().await.is_err() {
                return;
            }
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// Issue 16's drill: the network between one host and the database is cut. Its engines keep
/// running; its signed-in operator keeps control of them, and every page says the console
/// runs in its degraded mode; its CLI reads the engine's log and stops it; the other hosts
/// see it unreachable; the journal entries made while cut off (the page's and the CLI's) are
/// written when the link is back, in order, the chain intact.
#[tokio::test(flavor = "multi_thread")]
async fn a_host_cut_off_from_the_database_keeps_local_control_and_journals_on_return() {
    let Some(url) = pg_database().await else { return };
    let authority = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let target: std::net::SocketAddr = authority.parse().unwrap();
    let link = Link::to(target).await;
    let b_url = url.replace(authority, &format!("127.0.0.1:{}", link.port));
    let TwoHosts { a, b, ports, .. } = &two_hosts(&url, &b_url, "b-llama").await;
    let pid = |rows: Vec<serde_json::Value>| {
        rows.into_iter()
            .find(|e| e["profile"] == "b-llama" && e["state"] == "healthy")
            .and_then(|e| e["pid"].as_i64())
    };
    let on_b = Session::login(&format!("http://127.0.0.1:{}", ports[1]), "alice").await;
    // The header's state. The first requests after the cut may wait out the pool's timeouts
    // before the heartbeat has found the outage (under load, past the client's 20 s): such an
    // answer reads as nothing yet.
    let whoami = async |s: &Session| -> serde_json::Value {
        let r = s.post_fn("whoami", "").send().await;
        match r {
            Ok(r) if r.status() == 200 => r.json().await.unwrap_or_default(),
            _ => serde_json::json!({"unanswered": true}),
        }
    };
    assert!(whoami(&on_b).await["database_away_since_ms"].is_null());
    let pid_before = pid(engines_of(ports[1]).await).expect("b-llama healthy on gpu-b");

    link.cut();
    let cut_at = Instant::now();
    // gpu-b's pages say so (the heartbeat finds it within a scrape interval and a timeout).
    eventually(Duration::from_secs(30), async || {
        whoami(&on_b).await["database_away_since_ms"].as_i64()
    })
    .await
    .expect("gpu-b states its degraded mode");
    eprintln!("degraded mode stated {} ms after the cut", cut_at.elapsed().as_millis());
    // The engine keeps running; the operator restarts it from gpu-b's page.
    assert_eq!(pid(engines_of(ports[1]).await), Some(pid_before), "the engine runs on");
    let asked = Instant::now();
    let (code, body) = on_b.call("run_engine_action", "profile=b-llama&action=restart").await;
    assert_eq!(code, 200, "{body}");
    eprintln!(
        "restart answered {} ms after it was asked, cut off",
        asked.elapsed().as_millis()
    );
    eventually(Duration::from_secs(60), async || {
        pid(engines_of(ports[1]).await).filter(|p| *p != pid_before)
    })
    .await
    .expect("restarted while cut off");
    // gpu-a sees gpu-b go quiet.
    let on_a = Session::login(&format!("http://127.0.0.1:{}", ports[0]), "alice").await;
    eventually(Duration::from_secs(40), async || {
        let hosts: serde_json::Value = serde_json::from_str(&on_a.call("list_hosts", "").await.1).ok()?;
        hosts
            .as_array()?
            .iter()
            .any(|h| h["name"] == "gpu-b" && h["reachable"] == false)
            .then_some(())
    })
    .await
    .expect("gpu-a shows gpu-b unreachable");
    let before_return: Vec<serde_json::Value> = journal_of(a, "b-llama");
    // gpu-b's CLI, cut off too: the engine's log and its stop work on this host alone.
    let out = b.run(&["logs", "--profile", "b-llama", "--lines", "5"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    assert!(str(&out).1.contains("degraded mode"), "{:?}", str(&out));
    let out = b.run(&["stop", "--profile", "b-llama", "--reason", "drain while cut off"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    eventually(Duration::from_secs(30), async || {
        pid(engines_of(ports[1]).await).is_none().then_some(())
    })
    .await
    .expect("stopped from the CLI while cut off");

    link.restore();
    // The entries made while cut off arrive, in order, in the one chain.
    let arrived = eventually(Duration::from_secs(60), async || {
        let all = journal_of(a, "b-llama");
        // Both of them: the spool is written one entry at a time.
        (all.len() >= before_return.len() + 2).then_some(all)
    })
    .await
    .expect("gpu-b's journal entries are written on its return");
    // Newest first: the entries that arrived are the first ones.
    let kinds: Vec<&str> = arrived[..arrived.len() - before_return.len()]
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["stop", "restart"], "in order, newest first: {arrived:?}");
    let restart = arrived
        .iter()
        .find(|e| e["kind"] == "restart" && e["detail"]["spooled"] == true)
        .unwrap_or_else(|| panic!("the restart, spooled: {arrived:?}"));
    assert_eq!(restart["who"], "alice");
    assert!(restart["detail"]["happened_at"].is_string(), "{restart}");
    for env in [&a, &b] {
        let out = env.run(&["journal", "verify"]);
        assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    }
    eventually(Duration::from_secs(30), async || {
        let w = whoami(&on_b).await;
        (w["database_away_since_ms"].is_null() && w["unanswered"].is_null()).then_some(())
    })
    .await
    .expect("the degraded mode ends");
    let stop = &arrived[0];
    assert_eq!(stop["reason"], "drain while cut off", "{stop}");
    assert_eq!(stop["detail"]["spooled"], true, "{stop}");
}

/// The journal's entries about `profile`, newest first, as a host's CLI lists them.
fn journal_of(env: &Env, profile: &str) -> Vec<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(&str(&env.run(&["--json", "journal", "list", "--profile", profile])).0)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

/// Issue 42: a change's review page shows the command line and each extra flag as the host
/// that runs the engine renders them, with its own configuration. gpu-b serves `tmpl`; a
/// change naming a chat template in gpu-b's models root is read on gpu-a, whose own models root
/// does not hold that path (it would show no flag: the path is refused there).
#[tokio::test(flavor = "multi_thread")]
async fn a_change_is_rendered_by_the_host_that_runs_its_engine() {
    let Some(url) = pg_database().await else { return };
    let t = two_hosts(&url, &url, "tmpl").await;
    let template = t.b.model().join("t.jinja");
    std::fs::write(&template, "{{ messages }}").unwrap();
    let active = str(&t.b.run(&["profile", "export", "tmpl"])).0;
    let candidate = format!("{active}EXTRA_ARGS='--chat-template {}'\n", template.display());
    let on_b = Session::login(&format!("http://127.0.0.1:{}", t.ports[1]), "alice").await;
    let (status, body) = on_b
        .call(
            "propose_change",
            &format!(
                "profile=tmpl&env_text={}&reason={}&submit=true",
                urlencode(&candidate),
                urlencode("the model's own template")
            ),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    let on_a = Session::login(&format!("http://127.0.0.1:{}", t.ports[0]), "alice").await;
    let c = change(&on_a, id).await;
    assert_eq!(c["rendered_by"], "gpu-b", "{c}");
    assert_eq!(c["render_note"], serde_json::Value::Null, "{c}");
    let flags = extra_flags(&c, "flag");
    assert_eq!(flags, [("--chat-template".to_string(), "checked".to_string())], "{c}");
    let after = c["argv_after"].to_string();
    assert!(after.contains(&template.display().to_string()), "{after}");
    // Asked again: the rendering is kept, no second job.
    let again = change(&on_a, id).await;
    assert_eq!(again["extra_flags"], c["extra_flags"]);
    let (_, jobs) = on_a.call("list_jobs", "").await;
    let renders = jobs.matches("\"render\"").count();
    assert_eq!(renders, 1, "{jobs}");
}
