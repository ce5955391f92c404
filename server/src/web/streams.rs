//! The event streams' (`/api/events/*`) bounds: how many one session and the console hold
//! open, and how long a stream outlives the session it was opened with.
//!
//! A stream is authorised once, when it opens; before these bounds a disabled account's open
//! stream kept delivering for as long as it stayed open, and one session opened 400 of them.
//! Now each stream re-checks its session every [`RECHECK`] and ends when the session has
//! ended (signed out, expired, the account disabled or its sessions dropped by a restore),
//! and a stream beyond [`PER_SESSION`], [`PER_ACCOUNT`] or [`TOTAL`] is refused with 429.
//! Per account as well as per session: one viewer signing in sixteen times held all 256.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Open streams one session may hold (a few tabs of engine pages, the fleet and the lists).
pub const PER_SESSION: usize = 16;
/// Open streams one account may hold over all its sessions (two browsers' worth).
pub const PER_ACCOUNT: usize = 32;
/// Open streams the console holds in all.
pub const TOTAL: usize = 256;
/// How often an open stream checks that its session still stands.
pub const RECHECK: Duration = Duration::from_secs(5);

/// The open streams, counted per session (by the token's hash) and in all.
#[derive(Clone)]
pub struct StreamGate {
    accounts: crate::accounts::Accounts,
    open: Arc<Mutex<HashMap<String, usize>>>,
    recheck: Duration,
}

/// One open stream's place (its session's and its account's); given back when the stream
/// ends or is dropped.
struct Slot {
    open: Arc<Mutex<HashMap<String, usize>>>,
    keys: [String; 2],
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.open.lock() {
            for key in &self.keys {
                if let Some(n) = open.get_mut(key) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        open.remove(key);
                    }
                }
            }
        }
    }
}

/// Why one more event stream is refused (the 429's body).
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("the console holds {TOTAL} event streams, its most")]
    Console,
    #[error("this session holds {PER_SESSION} event streams, its most: close a tab")]
    Session,
    #[error("this account holds {PER_ACCOUNT} event streams over its sessions, its most: close a tab")]
    Account,
    #[error("stream table poisoned")]
    Poisoned,
}

impl StreamGate {
    /// `ROOFLINE_STREAM_RECHECK_MS` shortens the interval (tests); it can never lengthen it.
    pub fn new(accounts: crate::accounts::Accounts) -> Self {
        let recheck = std::env::var("ROOFLINE_STREAM_RECHECK_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .map_or(RECHECK, |d| d.clamp(Duration::from_millis(100), RECHECK));
        Self {
            accounts,
            open: Default::default(),
            recheck,
        }
    }

    /// A place for one more stream of this session (`session`: its token's hash) of this
    /// account, or why not.
    fn acquire(&self, session: &str, account: &str) -> Result<Slot, Refused> {
        acquire(&self.open, session, account)
    }

    /// Streams open now, in all.
    pub fn open_streams(&self) -> usize {
        self.open
            .lock()
            .map(|o| o.iter().filter(|(k, _)| k.starts_with("s:")).map(|(_, n)| n).sum())
            .unwrap_or(0)
    }
}

/// A place for one more stream of `session` of `account` in `table`, or why not.
fn acquire(table: &Arc<Mutex<HashMap<String, usize>>>, session: &str, account: &str) -> Result<Slot, Refused> {
    let mut open = table.lock().map_err(|_| Refused::Poisoned)?;
    let total: usize = open.iter().filter(|(k, _)| k.starts_with("s:")).map(|(_, n)| n).sum();
    if total >= TOTAL {
        return Err(Refused::Console);
    }
    let keys = [format!("s:{session}"), format!("a:{account}")];
    if open.get(&keys[0]).copied().unwrap_or(0) >= PER_SESSION {
        return Err(Refused::Session);
    }
    if open.get(&keys[1]).copied().unwrap_or(0) >= PER_ACCOUNT {
        return Err(Refused::Account);
    }
    for k in &keys {
        *open.entry(k.clone()).or_default() += 1;
    }
    Ok(Slot {
        open: table.clone(),
        keys,
    })
}

/// Counts, bounds and re-checks every `/api/events/*` response (after the access guard).
pub async fn gate(State(gate): State<StreamGate>, req: Request, next: Next) -> Response {
    use futures::StreamExt;
    if !req.uri().path().starts_with("/api/events/") {
        return next.run(req).await;
    }
    // The guard refuses a stream without a session; nothing to count then.
    let Some(token) = req.extensions().get::<app::api::SessionToken>().cloned() else {
        return next.run(req).await;
    };
    let key = crate::accounts::digest(&token.0);
    let account = req
        .extensions()
        .get::<app::api::Caller>()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let slot = match gate.acquire(&key, &account) {
        Ok(s) => s,
        Err(why) => {
            tracing::warn!(%why, "event stream refused");
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", "10")],
                format!("{why}\n"),
            )
                .into_response();
        }
    };
    let resp = next.run(req).await;
    if !resp.status().is_success() {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let (accounts, every) = (gate.accounts.clone(), gate.recheck);
    let ended = async move {
        loop {
            tokio::time::sleep(every).await;
            match accounts.session(&token.0).await {
                Ok(Some(_)) => {}
                Ok(None) => {
                    tracing::info!("event stream closed: its session ended");
                    return;
                }
                // A database hiccup is not a revocation; the next check decides.
                Err(e) => tracing::warn!(error = %e, "re-checking an event stream's session failed"),
            }
        }
    };
    let stream = body.into_data_stream().take_until(ended).map(move |chunk| {
        let _held = &slot;
        chunk
    });
    Response::from_parts(parts, axum::body::Body::from_stream(stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_account_holds_its_share_however_many_sessions_it_opens() {
        let table = Arc::new(Mutex::new(HashMap::new()));
        let mut held = Vec::new();
        // Sixteen sign-ins of one viewer, a stream each until refused.
        'sessions: for s in 0..16 {
            for _ in 0..PER_SESSION {
                match acquire(&table, &format!("vera-{s}"), "vera") {
                    Ok(slot) => held.push(slot),
                    Err(Refused::Account) => break 'sessions,
                    Err(e) => panic!("{e}"),
                }
            }
        }
        assert_eq!(held.len(), PER_ACCOUNT, "not the console's {TOTAL}");
        assert!(acquire(&table, "root-1", "root").is_ok(), "everyone else still gets in");
        drop(held);
        let again = acquire(&table, "vera-0", "vera").expect("given back when the streams end");
        assert_eq!(table.lock().unwrap().len(), 2, "only the open one's entries are left");
        drop(again);
        assert!(table.lock().unwrap().is_empty());
    }
}
