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

/// What one connection may hold, and for how long.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// To send a request's headers (the first from the connection's start; each next on a
    /// kept-alive HTTP/1 connection).
    pub headers: Duration,
    /// To send a whole request body, from the request's start: a body that trickles or stops
    /// is cut and its request fails (`POST /login` with a body never finished held its
    /// memory for good).
    pub body: Duration,
    /// An HTTP/2 connection with no request in flight is closed after this long (hyper's
    /// header deadline covers HTTP/1 only: one request, then a connection held for good).
    pub idle: Duration,
    /// Streams one HTTP/2 connection may carry at once (hyper's default is 200).
    pub streams: u32,
    /// Bytes one request body may carry, whatever the route reads it with (a route's own
    /// extractor limit, 1 MiB for the server functions, is lower).
    pub body_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            headers: HEADER_READ_TIMEOUT,
            body: Duration::from_secs(30),
            idle: Duration::from_secs(60),
            streams: 32,
            body_bytes: 16 << 20,
        }
    }
}

/// A connection's requests: how many are in flight (until their response body ends) and
/// when the last one started or ended.
#[derive(Default)]
struct Activity {
    in_flight: std::sync::atomic::AtomicUsize,
    asked: std::sync::atomic::AtomicBool,
    last: Mutex<Option<std::time::Instant>>,
}

impl Activity {
    fn touch(&self) {
        if let Ok(mut last) = self.last.lock() {
            *last = Some(std::time::Instant::now());
        }
    }

    fn enter(self: &Arc<Self>) -> InFlight {
        self.asked.store(true, std::sync::atomic::Ordering::Relaxed);
        self.in_flight.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.touch();
        InFlight(self.clone())
    }

    /// Whether nothing is in flight and nothing has been for `idle`.
    fn idle_for(&self, idle: Duration) -> bool {
        self.in_flight.load(std::sync::atomic::Ordering::Relaxed) == 0
            && self
                .last
                .lock()
                .ok()
                .and_then(|l| *l)
                .is_some_and(|t| t.elapsed() >= idle)
    }
}

/// One request in flight: held by its response body, so a streaming answer counts until it
/// ends.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        self.0.touch();
    }
}

pin_project_lite::pin_project! {
    /// A request body with a deadline for the whole of it, or a response body that holds its
    /// request's place in [`Activity`] until it ends.
    struct Bounded<B> {
        #[pin]
        inner: B,
        #[pin]
        deadline: Option<tokio::time::Sleep>,
        // Bytes the body may still carry (a request body; `u64::MAX` for a response).
        left: u64,
        held: Option<InFlight>,
    }
}

impl<B> http_body::Body for Bounded<B>
where
    B: http_body::Body<Data = axum::body::Bytes>,
    B::Error: Into<axum::BoxError>,
{
    type Data = axum::body::Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if let Some(deadline) = this.deadline.as_pin_mut() {
            if std::future::Future::poll(deadline, cx).is_ready() {
                return std::task::Poll::Ready(Some(Err("the request body was not sent within its deadline".into())));
            }
        }
        let polled = this.inner.poll_frame(cx).map_err(Into::into);
        if let std::task::Poll::Ready(Some(Ok(frame))) = &polled {
            let n = frame.data_ref().map_or(0, |d| d.len() as u64);
            if n > *this.left {
                return std::task::Poll::Ready(Some(Err("the request body is over the console's size limit".into())));
            }
            *this.left -= n;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

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
    listener: L,
    app: Router,
    trusted: Vec<IpAddr>,
    shutdown: impl std::future::Future<Output = ()> + Send,
) where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    serve_with(listener, app, trusted, shutdown, Limits::default()).await;
}

/// [`serve`] with these [`Limits`].
pub async fn serve_with<L>(
    mut listener: L,
    app: Router,
    trusted: Vec<IpAddr>,
    shutdown: impl std::future::Future<Output = ()> + Send,
    limits: Limits,
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
            // so a client that sends nothing at all would otherwise wait forever). What is in
            // flight: an HTTP/2 connection with nothing in flight for `idle` is closed.
            let activity = Arc::new(Activity::default());
            let seen = activity.clone();
            let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let (app, activity) = (app.clone(), seen.clone());
                async move {
                    let held = activity.enter();
                    let mut req = req.map(|b| {
                        axum::body::Body::new(Bounded {
                            inner: b,
                            deadline: Some(tokio::time::sleep(limits.body)),
                            left: limits.body_bytes,
                            held: None,
                        })
                    });
                    req.extensions_mut().insert(ConnectInfo(peer));
                    let resp = tower::ServiceExt::oneshot(app, req).await?;
                    Ok::<_, std::convert::Infallible>(resp.map(|b| {
                        axum::body::Body::new(Bounded {
                            inner: b,
                            deadline: None,
                            left: u64::MAX,
                            held: Some(held),
                        })
                    }))
                }
            });
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.headers);
            builder
                .http2()
                .timer(TokioTimer::new())
                .max_concurrent_streams(limits.streams)
                .keep_alive_interval(Some(limits.idle))
                .keep_alive_timeout(limits.headers);
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
            let mut conn = std::pin::pin!(conn);
            let asked = activity.clone();
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
                    tokio::time::sleep(limits.headers).await;
                    if asked.asked.load(std::sync::atomic::Ordering::Relaxed) {
                        std::future::pending::<()>().await;
                    }
                } => {
                    tracing::debug!(%peer, "no request within the header deadline; connection closed");
                }
                () = async {
                    let tick = (limits.idle / 4).max(Duration::from_millis(10));
                    while !activity.idle_for(limits.idle) {
                        tokio::time::sleep(tick).await;
                    }
                } => {
                    tracing::debug!(%peer, "idle connection closed");
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(DRAIN, conn).await;
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

    /// A console's accept loop on a free loopback port with short limits, serving `app`.
    async fn console(app: Router, limits: Limits) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve_with(listener, app, Vec::new(), std::future::pending(), limits));
        addr
    }

    fn short() -> Limits {
        Limits {
            headers: Duration::from_secs(15),
            body: Duration::from_millis(300),
            idle: Duration::from_millis(300),
            streams: 2,
            body_bytes: 64 << 10,
        }
    }

    async fn h2(
        addr: SocketAddr,
    ) -> (
        hyper::client::conn::http2::SendRequest<String>,
        tokio::task::JoinHandle<()>,
    ) {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
        (
            send,
            tokio::spawn(async move {
                let _ = conn.await;
            }),
        )
    }

    fn get(path: &str) -> hyper::Request<String> {
        hyper::Request::get(format!("http://localhost{path}"))
            .body(String::new())
            .unwrap()
    }

    #[tokio::test]
    async fn an_http2_connection_with_nothing_in_flight_is_closed() {
        let app = Router::new().route("/", axum::routing::get(|| async { "ok" }));
        let addr = console(app, short()).await;
        let (mut send, closed) = h2(addr).await;
        let resp = send.send_request(get("/")).await.unwrap();
        assert_eq!(resp.status(), 200);
        drop(resp);
        // Held with no deadline before: the connection ends by itself once idle.
        tokio::time::timeout(Duration::from_secs(20), closed)
            .await
            .expect("the idle HTTP/2 connection was closed")
            .unwrap();
    }

    #[tokio::test]
    async fn one_http2_connection_carries_at_most_its_streams_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let now = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(tokio::sync::Semaphore::new(0));
        let (n, m, o) = (now.clone(), most.clone(), open.clone());
        let app = Router::new().route(
            "/slow",
            axum::routing::get(move || {
                let (n, m, o) = (n.clone(), m.clone(), o.clone());
                async move {
                    let here = n.fetch_add(1, Ordering::SeqCst) + 1;
                    m.fetch_max(here, Ordering::SeqCst);
                    let _ = o.acquire().await.map(|p| p.forget());
                    n.fetch_sub(1, Ordering::SeqCst);
                    "done"
                }
            }),
        );
        let addr = console(app, short()).await;
        let (send, _closed) = h2(addr).await;
        let asks: Vec<_> = (0..6)
            .map(|_| {
                let mut send = send.clone();
                tokio::spawn(async move { send.send_request(get("/slow")).await.map(|r| r.status()) })
            })
            .collect();
        // Wait until the server holds as many as it will, then let them all finish.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while now.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        open.add_permits(6);
        let mut answered = 0;
        for a in asks {
            // A stream over the cap is refused (REFUSED_STREAM: the client may retry it).
            match a.await.unwrap() {
                Ok(status) => {
                    assert_eq!(status, 200);
                    answered += 1;
                }
                Err(e) => assert!(format!("{e:?}").contains("REFUSED_STREAM"), "{e:?}"),
            }
        }
        assert!(answered >= 2, "{answered}");
        assert_eq!(
            most.load(Ordering::SeqCst),
            2,
            "the stream cap is what the server runs at once"
        );
    }

    #[tokio::test]
    async fn a_request_body_that_never_ends_is_cut_at_its_deadline() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let app = Router::new().route(
            "/login",
            axum::routing::post(|body: axum::body::Body| async move {
                match axum::body::to_bytes(body, 1 << 20).await {
                    Ok(_) => axum::http::StatusCode::OK,
                    Err(_) => axum::http::StatusCode::REQUEST_TIMEOUT,
                }
            }),
        );
        let addr = console(app, short()).await;
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.write_all(b"POST /login HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\nname=a")
            .await
            .unwrap();
        let mut answer = Vec::new();
        // Before, the body was awaited for good: this read never returned.
        let read = tokio::time::timeout(Duration::from_secs(20), async {
            let mut buf = [0u8; 1024];
            loop {
                match tcp.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        answer.extend_from_slice(&buf[..n]);
                        if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                            break;
                        }
                    }
                }
            }
        })
        .await;
        assert!(read.is_ok(), "the unfinished body was cut");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    }

    #[tokio::test]
    async fn a_request_body_over_the_size_limit_is_cut_whatever_the_route_reads_it_with() {
        // A route with no limit of its own (reads the body whole, up to 1 GiB).
        let app = Router::new().route(
            "/upload",
            axum::routing::post(|body: axum::body::Body| async move {
                match axum::body::to_bytes(body, 1 << 30).await {
                    Ok(b) => (axum::http::StatusCode::OK, b.len().to_string()),
                    Err(e) => (axum::http::StatusCode::PAYLOAD_TOO_LARGE, e.to_string()),
                }
            }),
        );
        let addr = console(app, short()).await;
        crate::tls::install_default_provider();
        let c = reqwest::Client::builder().no_proxy().build().unwrap();
        let at = format!("http://{addr}/upload");
        let small = c.post(&at).body(vec![b'x'; 1000]).send().await.unwrap();
        assert_eq!(small.status(), 200);
        let big = c.post(&at).body(vec![b'x'; 1 << 20]).send().await.unwrap();
        assert_eq!(big.status(), 413, "{}", big.text().await.unwrap_or_default());
    }

    #[test]
    fn the_limit_leaves_descriptors_for_everything_else() {
        let limit = connection_limit();
        let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).unwrap();
        assert!(limit as u64 <= soft / 2 || limit == 64, "{limit} of {soft}");
    }
}
