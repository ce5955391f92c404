//! Failed sign-ins, counted per user name and per client address over a sliding window.
//!
//! Per name stops guessing one account's password from many addresses; per address stops
//! one client from trying many names. An attempt is *reserved* (counted as a failure) before
//! its password is hashed, in the same lock as the check, so a thousand concurrent guesses
//! for one name start at most [`PER_NAME`] hashes; a success gives its reservation back. Keys
//! are namespaced (`n:` user names, `a:` addresses, `s:` the setup secret, `p:` password
//! changes), so no user name can share the setup secret's budget. The map is swept of expired
//! entries as it grows, so a flood of names cannot grow it without bound. In memory: a console
//! restart forgives, which is fine for a brake on online guessing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Failures allowed per name within the window.
pub const PER_NAME: usize = 5;
/// Failures allowed per client address within the window.
pub const PER_ADDR: usize = 20;
pub const WINDOW: Duration = Duration::from_secs(15 * 60);
/// The map is swept when it holds more keys than this (and then at twice what survived).
const SWEEP_AT: usize = 4096;

/// What an attempt is counted against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A user name at sign-in.
    Name(String),
    /// A client address.
    Addr(String),
    /// The one-time setup secret, guessed from this client address. Per client, not one key
    /// for the console: five wrong secrets from anyone locked the first admin's setup for
    /// everyone for the whole window. The secret is 256 random bits; a budget per address
    /// (beside [`Key::Addr`]) is all the brake online guessing needs.
    Setup(String),
    /// A signed-in user's own password change (the old password is checked).
    PasswordChange(String),
}

impl Key {
    fn id(&self) -> String {
        match self {
            Key::Name(n) => format!("n:{n}"),
            Key::Addr(a) => format!("a:{a}"),
            Key::Setup(a) => format!("s:{a}"),
            Key::PasswordChange(n) => format!("p:{n}"),
        }
    }

    fn limit(&self) -> usize {
        match self {
            Key::Addr(_) => PER_ADDR,
            _ => PER_NAME,
        }
    }
}

#[derive(Default)]
struct Table {
    map: HashMap<String, Vec<Instant>>,
    sweep_at: usize,
    swept: Option<Instant>,
}

#[derive(Clone, Default)]
pub struct LoginLimiter {
    inner: Arc<Mutex<Table>>,
}

/// A counted attempt; [`LoginLimiter::succeeded`] gives it back.
#[derive(Debug)]
pub struct Reservation {
    keys: Vec<String>,
    at: Instant,
}

impl LoginLimiter {
    /// Reserves one attempt against every key, or `Err(wait)` when any of them has used up
    /// its failures (`wait`: until the oldest counted one leaves the window). Nothing is
    /// counted when refused.
    pub fn reserve(&self, keys: &[Key]) -> Result<Reservation, Duration> {
        self.reserve_at(keys, Instant::now())
    }

    fn reserve_at(&self, keys: &[Key], now: Instant) -> Result<Reservation, Duration> {
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Swept when it has grown, and at least once a window.
        let swept = *t.swept.get_or_insert(now);
        if t.map.len() > t.sweep_at.max(SWEEP_AT) || now.duration_since(swept) >= WINDOW {
            t.map.retain(|_, v| {
                v.retain(|at| now.duration_since(*at) < WINDOW);
                !v.is_empty()
            });
            t.sweep_at = (t.map.len() * 2).max(SWEEP_AT);
            t.swept = Some(now);
        }
        let mut wait = None;
        for key in keys {
            let Some(list) = t.map.get_mut(&key.id()) else { continue };
            list.retain(|at| now.duration_since(*at) < WINDOW);
            let limit = key.limit();
            if list.len() >= limit {
                let w = WINDOW.saturating_sub(now.duration_since(list[list.len() - limit]));
                wait = Some(wait.map_or(w, |x: Duration| x.max(w)));
            }
        }
        if let Some(w) = wait {
            return Err(w);
        }
        let ids: Vec<String> = keys.iter().map(Key::id).collect();
        for id in &ids {
            t.map.entry(id.clone()).or_default().push(now);
        }
        Ok(Reservation { keys: ids, at: now })
    }

    /// The attempt neither succeeded nor failed (the console was busy): it is not counted.
    pub fn release(&self, r: Reservation) {
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for id in &r.keys {
            if let Some(list) = t.map.get_mut(id) {
                if let Some(i) = list.iter().position(|at| *at == r.at) {
                    list.remove(i);
                }
            }
        }
    }

    /// The attempt succeeded: its reservation is given back, and a name's (or a password
    /// change's) earlier failures are forgiven; an address's are not.
    pub fn succeeded(&self, r: Reservation) {
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for id in &r.keys {
            if id.starts_with("a:") {
                if let Some(list) = t.map.get_mut(id) {
                    if let Some(i) = list.iter().position(|at| *at == r.at) {
                        list.remove(i);
                    }
                }
            } else {
                t.map.remove(id);
            }
        }
    }

    /// How many keys the limiter holds (for tests and the console's metrics).
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(name: &str, addr: &str) -> [Key; 2] {
        [Key::Name(name.into()), Key::Addr(addr.into())]
    }

    #[test]
    fn locks_a_name_after_five_failures_until_the_window_moves() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..PER_NAME {
            assert!(l.reserve_at(&login("alice", "10.0.0.1"), t0).is_ok(), "try {i}");
        }
        let wait = l.reserve_at(&login("alice", "10.0.0.9"), t0).unwrap_err();
        assert!(wait > Duration::from_secs(14 * 60));
        assert!(
            l.reserve_at(&login("bob", "10.0.0.9"), t0).is_ok(),
            "other names are not locked"
        );
        assert!(l.reserve_at(&login("alice", "10.0.0.9"), t0 + WINDOW).is_ok());
    }

    #[test]
    fn concurrent_attempts_are_counted_before_they_hash() {
        // Reservations happen before the (slow) hash: the sixth concurrent try is refused
        // although none of the first five has finished.
        let l = LoginLimiter::default();
        let held: Vec<_> = (0..PER_NAME)
            .map(|_| l.reserve(&login("dave", "10.0.0.1")).unwrap())
            .collect();
        assert!(l.reserve(&login("dave", "10.0.0.2")).is_err());
        drop(held);
    }

    #[test]
    fn locks_an_address_that_tries_many_names() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..PER_ADDR {
            l.reserve_at(&login(&format!("user{i}"), "10.0.0.2"), t0).unwrap();
        }
        assert!(l.reserve_at(&login("someone", "10.0.0.2"), t0).is_err());
        assert!(l.reserve_at(&login("someone", "10.0.0.3"), t0).is_ok());
    }

    #[test]
    fn success_gives_the_reservation_back_and_clears_the_name() {
        let l = LoginLimiter::default();
        for _ in 0..PER_NAME - 1 {
            l.reserve(&login("carol", "a")).unwrap();
        }
        let r = l.reserve(&login("carol", "a")).unwrap();
        l.succeeded(r);
        assert!(l.reserve(&login("carol", "b")).is_ok());
    }

    #[test]
    fn the_setup_secret_has_its_own_budget_no_user_name_shares() {
        let l = LoginLimiter::default();
        for _ in 0..PER_NAME {
            l.reserve(&login("setup", "10.0.0.1")).unwrap();
        }
        assert!(l
            .reserve(&[Key::Setup("10.0.0.5".into()), Key::Addr("10.0.0.5".into())])
            .is_ok());
    }

    #[test]
    fn wrong_setup_secrets_from_one_client_do_not_lock_out_another() {
        let l = LoginLimiter::default();
        let setup = |a: &str| [Key::Setup(a.into()), Key::Addr(a.into())];
        for _ in 0..PER_NAME {
            l.reserve(&setup("10.0.0.9")).unwrap();
        }
        assert!(l.reserve(&setup("10.0.0.9")).is_err(), "the guesser is braked");
        assert!(l.reserve(&setup("10.0.0.1")).is_ok(), "the admin can still set up");
    }

    #[test]
    fn a_flood_of_names_is_swept_once_it_expires() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..3 * SWEEP_AT {
            l.reserve_at(&[Key::Name(format!("n{i}"))], t0).unwrap();
        }
        let full = l.len();
        l.reserve_at(&[Key::Name("late".into())], t0 + WINDOW + Duration::from_secs(1))
            .unwrap();
        assert!(l.len() < full / 2, "{} keys left of {full}", l.len());
    }
}
