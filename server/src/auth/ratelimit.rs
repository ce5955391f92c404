//! Failed sign-ins, counted per user name and per client address over a sliding window.
//!
//! Per name stops guessing one account's password from many addresses; per address stops
//! one client from trying many names. In memory: a console restart forgives, which is fine
//! for a brake on online guessing (argon2 makes each try slow as well).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Failures allowed per name within the window.
pub const PER_NAME: usize = 5;
/// Failures allowed per client address within the window.
pub const PER_ADDR: usize = 20;
pub const WINDOW: Duration = Duration::from_secs(15 * 60);

#[derive(Clone, Default)]
pub struct LoginLimiter {
    inner: Arc<Mutex<HashMap<String, Vec<Instant>>>>,
}

impl LoginLimiter {
    /// `Err(wait)` when either key has used up its failures; `wait` is until the oldest
    /// counted failure leaves the window.
    pub fn check(&self, name: &str, addr: &str) -> Result<(), Duration> {
        self.check_at(name, addr, Instant::now())
    }

    fn check_at(&self, name: &str, addr: &str, now: Instant) -> Result<(), Duration> {
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut wait = None;
        for (key, limit) in [(format!("n:{name}"), PER_NAME), (format!("a:{addr}"), PER_ADDR)] {
            let Some(list) = map.get_mut(&key) else { continue };
            list.retain(|t| now.duration_since(*t) < WINDOW);
            if list.len() >= limit {
                let w = WINDOW.saturating_sub(now.duration_since(list[list.len() - limit]));
                wait = Some(wait.map_or(w, |x: Duration| x.max(w)));
            }
        }
        map.retain(|_, v| !v.is_empty());
        wait.map_or(Ok(()), Err)
    }

    pub fn failed(&self, name: &str, addr: &str) {
        self.failed_at(name, addr, Instant::now())
    }

    fn failed_at(&self, name: &str, addr: &str, now: Instant) {
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for key in [format!("n:{name}"), format!("a:{addr}")] {
            map.entry(key).or_default().push(now);
        }
    }

    /// A successful sign-in clears the name's failures (not the address's).
    pub fn succeeded(&self, name: &str) {
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(&format!("n:{name}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_a_name_after_five_failures_until_the_window_moves() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..PER_NAME {
            assert!(l.check_at("alice", "10.0.0.1", t0).is_ok(), "try {i}");
            l.failed_at("alice", "10.0.0.1", t0);
        }
        let wait = l.check_at("alice", "10.0.0.9", t0).unwrap_err();
        assert!(wait > Duration::from_secs(14 * 60));
        assert!(l.check_at("bob", "10.0.0.9", t0).is_ok(), "other names are not locked");
        assert!(l.check_at("alice", "10.0.0.9", t0 + WINDOW).is_ok());
    }

    #[test]
    fn locks_an_address_that_tries_many_names() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..PER_ADDR {
            l.failed_at(&format!("user{i}"), "10.0.0.2", t0);
        }
        assert!(l.check_at("someone", "10.0.0.2", t0).is_err());
        assert!(l.check_at("someone", "10.0.0.3", t0).is_ok());
    }

    #[test]
    fn success_clears_the_name() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for _ in 0..PER_NAME {
            l.failed_at("carol", "a", t0);
        }
        l.succeeded("carol");
        assert!(l.check_at("carol", "b", t0).is_ok());
    }
}
