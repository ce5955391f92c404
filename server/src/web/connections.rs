//! The console's accept loop: what a connection may hold before it is a request.
//!
//! `axum::serve` gives hyper no timer, so hyper's header-read deadline never runs: a client
//! that sends half a request line and waits (slowloris), or keeps a keep-alive connection idle,
//! held its socket for good, and fifteen thousand of them from one address were all accepted
//! (RELIABILITY.md). Here each connection has [`HEADER_READ_TIMEOUT`] to send its request's
//! headers (the first, counted from the connection, and each next on a kept-alive HTTP/1
//! connection; a response that streams, an event stream, is not bounded by it), one client
//! (an address; for IPv6 its /64) holds at most [`PER_CLIENT`] connections (trusted proxies excepted: they carry many clients), and all of them together
//! at most half the process's open-file limit, so the database, the engines' scrapes and the
//! logs always find a descriptor. A connection over a cap is closed at once.

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Semaphore};

/// How long a client has to send a request's headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);
/// Connections one client address may hold at once (a browser tab holds two or three: its
/// event streams and a request).
pub const PER_CLIENT: usize = 256;
/// How long a stopping console waits for its connections (event streams never end by
/// themselves) before it returns.
const DRAIN: Duration = Duration::from_secs(5);

/// A kind of refused connection, logged at most once a minute with how many were closed
/// since: a flood of connections must not become a flood of log lines.
struct Refusals {
    what: &'static str,
    closed: u64,
    logged: Option<std::time::Instant>,
}

impl Refusals {
    const EVERY: Duration = Duration::from_secs(60);

    fn new(what: &'static str) -> Self {
        Self {
            what,
            closed: 0,
            logged: None,
        }
    }

    /// Counts one refusal; logs (and says so) when the last line is a minute old.
    fn note(&mut self, peer: SocketAddr) -> bool {
        self.closed += 1;
        if self.logged.is_some_and(|t| t.elapsed() < Self::EVERY) {
            return false;
        }
        tracing::warn!(%peer, closed = self.closed, "{}; connection closed (counted since the last such line)", self.what);
        self.closed = 0;
        self.logged = Some(std::time::Instant::now());
        true
    }
}

/// Connections open per client address.
#[derive(Clone, Default)]
struct PerClient(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// A client's place among [`PER_CLIENT`]; given back when the connection ends.
struct Held(PerClient, IpAddr);

/// The client a peer address counts as: an IPv4 address (an IPv4-mapped IPv6 one too), or an
/// IPv6 /64 — one host is given a whole /64, so counting single IPv6 addresses would give
/// it 2^64 shares.
fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
    }
}

impl PerClient {
    fn take(&self, ip: IpAddr) -> Option<Held> {
        let ip = client_of(ip);
        let mut open = self.0.lock().ok()?;
        let n = open.entry(ip).or_insert(0);
        if *n >= PER_CLIENT {
            return None;
        }
        *n += 1;
        Some(Held(self.clone(), ip))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Ok(mut open) = self.0 .0.lock() {
            if let Some(n) = open.get_mut(&self.1) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    open.remove(&self.1);
                }
            }
        }
    }
}

/// How many connections the process may hold: half its open-file limit, after raising the
/// soft limit to the hard one (as servers do; a service manager's default soft limit is
/// often 1,024).
pub fn connection_limit() -> usize {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 512;
    };
    let raised = hard.min(1 << 20);
    let soft = if raised > soft && setrlimit(Resource::RLIMIT_NOFILE, raised, hard).is_ok() {
        raised
    } else {
        soft
    };
    usize::try_from(soft / 2).unwrap_or(512).max(64)
}

/// Serves `app` on `listener` until `shutdown` completes. `trusted` are the proxies exempt
/// from the per-client cap (`[auth] trusted_proxies`).
pub async fn serve<L>(
    mut listener: L,
    app: Router,
    trusted: Vec<IpAddr>,
    shutdown: impl std::future::Future<Output = ()> + Send,
) where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    let limit = connection_limit();
    let all = Arc::new(Semaphore::new(limit));
    let per_client = PerClient::default();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut over_all = Refusals::new("connection limit reached");
    let mut over_client = Refusals::new("too many connections from one address");
    loop {
        let (io, peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let Ok(slot) = all.clone().try_acquire_owned() else {
            over_all.note(peer);
            continue;
        };
        let held = if trusted.contains(&peer.ip()) {
            None
        } else {
            match per_client.take(peer.ip()) {
                Some(h) => Some(h),
                None => {
                    over_client.note(peer);
                    continue;
                }
            }
        };
        let app = app.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            // Whether a request has reached the router: until one has, the connection is on
            // the header deadline (hyper's own timer starts only after the protocol is known,
            // so a client that sends nothing at all would otherwise wait forever).
            let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let first = asked.clone();
            let service = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                first.store(true, std::sync::atomic::Ordering::Relaxed);
                req.extensions_mut().insert(ConnectInfo(peer));
                tower::ServiceExt::oneshot(app.clone(), req.map(axum::body::Body::new))
            });
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            builder.http2().timer(TokioTimer::new());
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(%peer, error = %e, "connection ended");
                    }
                }
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(DRAIN, conn).await;
                }
                () = async {
                    tokio::time::sleep(HEADER_READ_TIMEOUT).await;
                    if asked.load(std::sync::atomic::Ordering::Relaxed) {
                        std::future::pending::<()>().await;
                    }
                } => {
                    tracing::debug!(%peer, "no request within the header deadline; connection closed");
                }
            }
            drop((slot, held));
        });
    }
    let _ = stop_tx.send(true);
    // Open connections finish their requests (event streams are cut after the drain).
    let _ = tokio::time::timeout(DRAIN + Duration::from_secs(1), async {
        while all.available_permits() < limit {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_holds_at_most_its_share_and_gets_it_back() {
        let clients = PerClient::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let held: Vec<Held> = (0..PER_CLIENT).map(|_| clients.take(a).unwrap()).collect();
        assert!(clients.take(a).is_none(), "one over the cap");
        assert!(clients.take(b).is_some(), "another address is not affected");
        drop(held);
        let one = clients.take(a).expect("given back");
        assert_eq!(clients.0.lock().unwrap().get(&a), Some(&1));
        drop(one);
        assert_eq!(
            clients.0.lock().unwrap().get(&a),
            None,
            "no entry left for a gone client"
        );
    }

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_ipv4_its_address() {
        let clients = PerClient::default();
        let held: Vec<Held> = (0..PER_CLIENT as u16)
            .map(|i| clients.take(format!("2001:db8:1:2::{i:x}").parse().unwrap()).unwrap())
            .collect();
        assert!(
            clients.take("2001:db8:1:2:ffff::1".parse().unwrap()).is_none(),
            "the same /64"
        );
        assert!(
            clients.take("2001:db8:1:3::1".parse().unwrap()).is_some(),
            "another /64"
        );
        drop(held);
        assert_eq!(
            client_of("::ffff:10.0.0.1".parse().unwrap()),
            "10.0.0.1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_flood_of_refusals_is_one_log_line_a_minute() {
        let mut r = Refusals::new("too many connections from one address");
        let peer: SocketAddr = "10.0.0.1:4000".parse().unwrap();
        let logged = (0..10_000).filter(|_| r.note(peer)).count();
        assert_eq!(logged, 1);
        assert_eq!(r.closed, 9_999, "the next line says how many were closed meanwhile");
        r.logged = Some(std::time::Instant::now() - Refusals::EVERY);
        assert!(r.note(peer));
        assert_eq!(r.closed, 0);
    }

    #[test]
    fn the_limit_leaves_descriptors_for_everything_else() {
        let limit = connection_limit();
        let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).unwrap();
        assert!(limit as u64 <= soft / 2 || limit == 64, "{limit} of {soft}");
    }
}
