//! TLS both ways: a console serving HTTPS from `[tls] cert`/`key` (plain HTTP refused, cookies
//! `Secure`), and consoles polling it as a fleet member, one trusting its private CA through
//! `[tls] ca_file`, one not (that host shows as unreachable, the certificate named).

use crate::common::*;
use std::path::Path;
use std::time::Duration;

/// A private CA and a certificate it signed for 127.0.0.1 and localhost, as PEM files.
struct Pki {
    ca: std::path::PathBuf,
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
    other_ca: std::path::PathBuf,
}

fn pki(dir: &Path) -> Pki {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "Roofline test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    let other_key = rcgen::KeyPair::generate().unwrap();
    let mut other_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    other_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let other = other_params.self_signed(&other_key).unwrap();
    let p = Pki {
        ca: dir.join("ca.pem"),
        cert: dir.join("console.pem"),
        key: dir.join("console.key"),
        other_ca: dir.join("other-ca.pem"),
    };
    std::fs::write(&p.ca, ca_cert.pem()).unwrap();
    std::fs::write(&p.cert, cert.pem()).unwrap();
    std::fs::write(&p.key, key.serialize_pem()).unwrap();
    std::fs::write(&p.other_ca, other.pem()).unwrap();
    p
}

fn https_client(ca: &Path) -> reqwest::Client {
    let pem = std::fs::read(ca).unwrap();
    server::tls::install_default_provider();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_console_serves_https_and_fleet_members_trust_it_through_ca_file() {
    let certs = tempfile::tempdir().unwrap();
    let pki = pki(certs.path());

    // Host A: one running engine, the console on HTTPS only.
    let (host_a, _engine) = Env::serving_vllm("eng-a", "");
    host_a.append_config(&format!(
        "\n[tls]\ncert = {:?}\nkey = {:?}\n",
        pki.cert.display().to_string(),
        pki.key.display().to_string()
    ));
    host_a.add_user("root", "admin");
    let port_a = free_port();
    let _a = Console::start(&host_a, port_a);
    let https = https_client(&pki.ca);
    let base = format!("https://127.0.0.1:{port_a}");
    eventually(Duration::from_secs(30), async || {
        let r = https.get(format!("{base}/healthz")).send().await.ok()?;
        r.status().is_success().then_some(())
    })
    .await
    .expect("the console answers over HTTPS with the configured certificate");

    // HTTP/2 through ALPN, so a page's many wasm parts share one connection; HTTP/1.1 still
    // answered for clients that offer only it.
    let page = https.get(format!("{base}/login")).send().await.unwrap();
    assert_eq!(page.version(), reqwest::Version::HTTP_2);
    assert!(page.status().is_success());
    let http1 = reqwest::Client::builder()
        .no_proxy()
        .http1_only()
        .tls_certs_only([reqwest::Certificate::from_pem(&std::fs::read(&pki.ca).unwrap()).unwrap()])
        .build()
        .unwrap();
    let page = http1.get(format!("{base}/login")).send().await.unwrap();
    assert_eq!(page.version(), reqwest::Version::HTTP_11);
    assert!(page.status().is_success());

    // Clients that open a connection and never start the handshake hold nothing up: each
    // handshake waits in its own task (10 s deadline), others are served meanwhile.
    let mut stalled = Vec::new();
    for _ in 0..50 {
        stalled.push(tokio::net::TcpStream::connect(("127.0.0.1", port_a)).await.unwrap());
    }
    let served = tokio::time::timeout(Duration::from_secs(5), https.get(format!("{base}/healthz")).send())
        .await
        .expect("served while 50 handshakes stall")
        .unwrap();
    assert!(served.status().is_success());
    drop(stalled);

    // Plain HTTP to the same port gets no answer, and a client that does not trust the CA
    // is refused in the handshake.
    assert!(client()
        .get(format!("http://127.0.0.1:{port_a}/healthz"))
        .send()
        .await
        .is_err());
    let stranger = https_client(&pki.other_ca);
    let e = stranger.get(format!("{base}/healthz")).send().await.unwrap_err();
    assert!(format!("{e:?}").contains("UnknownIssuer"), "{e:?}");

    // Signing in over HTTPS on loopback: the session cookies are Secure all the same.
    let r = https
        .post(format!("{base}/login"))
        .header("origin", &base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("name=root&password={}&next=%2Fjournal", urlencode(PASSWORD)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/journal");
    let cookies: Vec<_> = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    assert_eq!(cookies.len(), 2, "{cookies:?}");
    assert!(cookies.iter().all(|c| c.contains("; Secure")), "{cookies:?}");
    // Issue 29: with the `__Host-` prefix (the browser refuses it unless Secure, host-only,
    // Path=/), and HSTS on the console's own HTTPS listener.
    assert!(cookies.iter().all(|c| c.starts_with("__Host-roofline_")), "{cookies:?}");
    assert!(r.headers().contains_key("strict-transport-security"));

    // Host B trusts the private CA; host C only the system's roots.
    let fleet = format!("\n[[fleet]]\nname = \"gpu-a\"\nconsole = \"{base}\"\n");
    let host_b = Env::with_extra_config("scrape_interval_s = 1\n");
    host_b.append_config(&format!(
        "{fleet}\n[tls]\nca_file = {:?}\n",
        pki.ca.display().to_string()
    ));
    let host_c = Env::with_extra_config("scrape_interval_s = 1\n");
    host_c.append_config(&fleet);
    let (port_b, port_c) = (free_port(), free_port());
    let _b = Console::start(&host_b, port_b);
    let _c = Console::start(&host_c, port_c);
    let row = |port: u16| async move {
        let rows = console_engines(port).await?;
        rows.as_array()?.iter().find(|r| r["node"] == "gpu-a").cloned()
    };
    let seen = eventually(Duration::from_secs(40), async || {
        let r = row(port_b).await?;
        (r["state"] == "healthy").then_some(r)
    })
    .await
    .expect("the console trusting the CA lists host A's engine as healthy");
    assert_eq!(seen["profile"], "eng-a");
    assert_eq!(seen["link"], format!("{base}/engines/eng-a"));
    let refused = eventually(Duration::from_secs(40), async || {
        let r = row(port_c).await?;
        (r["state"] == "unreachable").then_some(r)
    })
    .await
    .expect("the console without the CA shows host A as unreachable");
    let note = refused["note"].as_str().unwrap();
    assert!(note.contains("certificate") || note.contains("UnknownIssuer"), "{note}");
}

/// What the binary says on standard error when `args` fails with `tls` appended to a fresh
/// host configuration; panics if it succeeds.
fn refused(tls: &str, args: &[&str]) -> (Option<i32>, String) {
    let env = Env::with_extra_config("");
    env.append_config(tls);
    let out = env.run(args);
    assert!(!out.status.success(), "{tls} was accepted");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_listener_needs_both_cert_and_key_and_readable_files() {
    let addr = format!("127.0.0.1:{}", free_port());
    let console = ["console", "--addr", addr.as_str()];
    let (_, err) = refused("\n[tls]\ncert = \"/nonexistent/console.pem\"\n", &console);
    assert!(err.contains("[tls] needs both `cert` and `key`"), "{err}");

    let (_, err) = refused(
        "\n[tls]\ncert = \"/nonexistent/console.pem\"\nkey = \"/nonexistent/console.key\"\n",
        &console,
    );
    assert!(err.contains("/nonexistent/console.pem"), "{err}");

    let (code, err) = refused("\n[tls]\nca_file = \"/nonexistent/ca.pem\"\n", &["status"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("ca_file") && err.contains("/nonexistent/ca.pem"), "{err}");
}
