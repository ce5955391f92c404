//! The console's HTTPS listener (`[tls] cert`, `key`): TCP accepted in one task, each TLS
//! handshake in its own task with a deadline, finished streams handed to axum. A client that
//! opens a connection and stalls its handshake holds only its own task, for at most
//! [`HANDSHAKE_TIMEOUT`]; past [`MAX_HANDSHAKES`] in flight new connections are shed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_HANDSHAKES: usize = 256;

pub struct TlsListener {
    streams: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: std::io::Result<SocketAddr>,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, config: rustls::ServerConfig) -> Self {
        let local = tcp.local_addr();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let (tx, streams) = mpsc::channel(64);
        let accepting = tokio::spawn(async move {
            let in_flight = Arc::new(Semaphore::new(MAX_HANDSHAKES));
            loop {
                let (tcp, peer) = match tcp.accept().await {
                    Ok(conn) => conn,
                    Err(e) => {
                        // Out of file descriptors and the like: pause rather than spin.
                        tracing::warn!(error = %e, "accepting a connection");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let Ok(permit) = in_flight.clone().try_acquire_owned() else {
                    tracing::warn!(%peer, "too many TLS handshakes in flight; connection shed");
                    continue;
                };
                let _ = tcp.set_nodelay(true);
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    let _permit = permit;
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(stream)) => {
                            let _ = tx.send((stream, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Self {
            streams,
            local,
            accepting,
        }
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.streams.recv().await {
            Some(conn) => conn,
            // The accepting task ended (it only does when dropped): no more connections.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        match &self.local {
            Ok(a) => Ok(*a),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        }
    }
}
