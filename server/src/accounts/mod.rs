//! Local accounts, sessions and the first-run setup secret, in SQLite.
//!
//! Passwords are stored as argon2id PHC strings; session and setup tokens only as SHA-256
//! digests, so reading the database signs nobody in. A session carries its own CSRF token,
//! which every mutating request must echo in a header.

pub mod ratelimit;

use crate::db::Pool;
use app::domain::auth::{check_name, check_password, CredentialError, Role};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::RngCore;
use std::time::{SystemTime, UNIX_EPOCH};

/// A session ends after this long without a request.
pub const IDLE_S: i64 = 12 * 3600;
/// ... and after this long in any case.
pub const ABSOLUTE_S: i64 = 7 * 24 * 3600;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("database: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("{0}")]
    Credential(#[from] CredentialError),
    #[error("user name or password is wrong")]
    BadLogin,
    #[error("an account named {0} already exists")]
    Exists(String),
    #[error("no account named {0}")]
    NoSuchAccount(String),
    #[error("the setup secret is wrong or already used")]
    BadSecret,
    #[error("accounts exist already: sign in, or ask an admin for an account")]
    AlreadySetUp,
    #[error("{name} is the last admin who can sign in; make another admin first")]
    LastAdmin { name: String },
    #[error("hashing the password: {0}")]
    Hash(String),
    /// Every hashing slot stayed busy past the deadline (a flood of sign-ins).
    #[error("the console is busy checking passwords; try again in a few seconds")]
    Busy,
}

/// Password hashes that were started (each is ~19 MiB and tens of milliseconds of a core).
pub static HASHES_STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How long a sign-in waits for a hashing slot before it is told to come back.
const HASH_QUEUE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// At most one argon2 hash per core at a time: a flood queues (bounded by the deadline)
/// instead of taking the console's memory, and the rest of the console keeps its cores.
fn hashing_slots() -> &'static tokio::sync::Semaphore {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    SLOTS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        tokio::sync::Semaphore::new(cores)
    })
}

/// Runs a hash (or a verify) in a slot, off the async workers.
async fn in_hashing_slot<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, AuthError> {
    let _slot = tokio::time::timeout(HASH_QUEUE_DEADLINE, hashing_slots().acquire())
        .await
        .map_err(|_| AuthError::Busy)?
        .map_err(|_| AuthError::Busy)?;
    HASHES_STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| AuthError::Hash(e.to_string()))
}

/// A new password's PHC string, hashed in a slot.
async fn hash_new(password: &str) -> Result<String, AuthError> {
    let pw = password.to_string();
    in_hashing_slot(move || hash_password(&pw)).await?
}

/// An account as listed for admins (never the hash).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AccountRow {
    pub name: String,
    pub role: Role,
    pub disabled: bool,
    pub created_at: String,
}

/// A signed-in session as the request guard sees it.
#[derive(Clone, Debug)]
pub struct SessionInfo {
    pub name: String,
    pub role: Role,
    pub csrf: String,
}

/// A fresh session: the cookie's token and the CSRF token.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub token: String,
    pub csrf: String,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// 32 random bytes, hex: tokens and secrets.
pub fn random_token() -> String {
    let mut b = [0u8; 32];
    rand::rng().fill_bytes(&mut b);
    hex::encode(b)
}

/// The SHA-256 of a token, hex: how sessions and setup secrets are stored and keyed.
pub fn digest(token: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

fn hash_password(password: &str) -> Result<String, AuthError> {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| AuthError::Hash(e.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| AuthError::Hash(e.to_string()))
}

fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc)
        .map(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
        .unwrap_or(false)
}

/// A hash to verify against when the user does not exist, so a wrong name takes as long as
/// a wrong password and does not tell which names exist.
fn dummy_hash() -> &'static str {
    static H: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    H.get_or_init(|| hash_password("not a password of anybody").unwrap_or_default())
}

/// The write lock account changes hold on a shared PostgreSQL ("roofacc").
const ACCOUNTS_LOCK: i64 = 0x726f_6f66_6163_6300;

/// Accounts and sessions in one database.
#[derive(Clone)]
pub struct Accounts {
    pool: Pool,
    /// Sessions this console checked against the database, kept so that its signed-in users
    /// keep control of this host's engines while a shared database is away (the degraded
    /// mode): only sessions seen live before, only within their own idle and absolute
    /// limits, and only while the database cannot answer. A sign-out or a disable made on
    /// another host meanwhile takes effect when it is back.
    seen: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Seen>>>,
}

/// A session as last found live in the database.
#[derive(Clone)]
struct Seen {
    info: SessionInfo,
    created: i64,
    checked: i64,
}

/// The most sessions remembered for the degraded mode (the oldest checked go first).
const MAX_SEEN: usize = 4096;

impl Accounts {
    pub fn new(pool: Pool) -> Self {
        Self {
            pool,
            seen: Default::default(),
        }
    }

    /// No account exists yet (the first admin is to be made). While the database is away
    /// nobody can be made, and the sign-in page is the one to show.
    pub async fn needs_setup(&self) -> Result<bool, AuthError> {
        if crate::db::away() {
            return Ok(false);
        }
        match self.count().await {
            Ok(n) => Ok(n == 0),
            Err(AuthError::Sqlx(e)) if crate::db::unreachable(&e) && crate::db::away() => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub async fn count(&self) -> Result<i64, AuthError> {
        Ok(sqlx::query_scalar("select count(*) from account")
            .fetch_one(&self.pool)
            .await?)
    }

    /// Creates an account after checking the name and password rules.
    pub async fn create(&self, name: &str, password: &str, role: Role) -> Result<(), AuthError> {
        check_name(name)?;
        check_password(name, password)?;
        let hash = hash_new(password).await?;
        let r = sqlx::query("insert into account (name, password_hash, role) values ($1, $2, $3)")
            .bind(name)
            .bind(hash)
            .bind(role.as_str())
            .execute(&self.pool)
            .await;
        match r {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(AuthError::Exists(name.into())),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn list(&self) -> Result<Vec<AccountRow>, AuthError> {
        let rows: Vec<(String, String, i64, String)> =
            sqlx::query_as("select name, role, disabled, created_at from account order by name")
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .into_iter()
            .map(|(name, role, disabled, created_at)| AccountRow {
                name,
                role: role.parse().unwrap_or(Role::Viewer),
                disabled: disabled != 0,
                created_at,
            })
            .collect())
    }

    /// The role `name` has now, `None` when there is no such account or it is disabled (a
    /// job queued by it on another host is checked again when it is performed).
    pub async fn current_role(&self, name: &str) -> Result<Option<Role>, AuthError> {
        let row: Option<(String, i64)> = sqlx::query_as("select role, disabled from account where name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some((role, 0)) => role.parse().ok(),
            _ => None,
        })
    }

    /// Checks a name and password; a disabled account fails like a wrong password.
    pub async fn verify(&self, name: &str, password: &str) -> Result<(i64, Role), AuthError> {
        let row: Option<(i64, String, String, i64)> =
            sqlx::query_as("select account_id, password_hash, role, disabled from account where name = $1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
        let pw = password.to_string();
        let (hash, found) = match &row {
            Some((_, h, _, _)) => (h.clone(), true),
            None => (dummy_hash().to_string(), false),
        };
        let ok = in_hashing_slot(move || verify_password(&pw, &hash)).await?;
        match row {
            Some((id, _, role, 0)) if ok && found => Ok((id, role.parse().unwrap_or(Role::Viewer))),
            _ => Err(AuthError::BadLogin),
        }
    }

    /// Changes role, disabled flag or password; refuses to leave no admin who can sign in.
    /// A password change or a disable ends the account's sessions.
    pub async fn update(
        &self,
        name: &str,
        role: Option<Role>,
        disabled: Option<bool>,
        password: Option<&str>,
    ) -> Result<(), AuthError> {
        // Hashed before the transaction: a slow hash must not hold the database's write lock.
        let new_hash = match password {
            Some(p) => {
                check_password(name, p)?;
                Some(hash_new(p).await?)
            }
            None => None,
        };
        // The last-admin check and the writes hold the accounts' write lock: two admins
        // disabled at once on two consoles cannot both pass the check.
        let mut tx = crate::db::begin_write(&self.pool, ACCOUNTS_LOCK).await?;
        let done = async {
            let current: Option<(i64, String, i64)> =
                sqlx::query_as("select account_id, role, disabled from account where name = $1")
                    .bind(name)
                    .fetch_optional(&mut *tx)
                    .await?;
            let (id, cur_role, cur_disabled) = current.ok_or_else(|| AuthError::NoSuchAccount(name.into()))?;
            let cur_disabled = cur_disabled != 0;
            let was_admin = cur_role == "admin" && !cur_disabled;
            let stays_admin =
                role.map(|r| r == Role::Admin).unwrap_or(cur_role == "admin") && !disabled.unwrap_or(cur_disabled);
            if was_admin && !stays_admin {
                let admins: i64 =
                    sqlx::query_scalar("select count(*) from account where role = 'admin' and disabled = 0")
                        .fetch_one(&mut *tx)
                        .await?;
                if admins <= 1 {
                    return Err(AuthError::LastAdmin { name: name.into() });
                }
            }
            if let Some(r) = role {
                sqlx::query("update account set role = $1 where account_id = $2")
                    .bind(r.as_str())
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            if let Some(d) = disabled {
                sqlx::query("update account set disabled = $1 where account_id = $2")
                    .bind(i64::from(d))
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            if let Some(hash) = new_hash {
                sqlx::query("update account set password_hash = $1 where account_id = $2")
                    .bind(hash)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            if password.is_some() || disabled == Some(true) {
                sqlx::query("delete from session where account_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            Ok(())
        }
        .await;
        if done.is_ok() {
            tx.commit().await?;
        }
        done
    }

    pub async fn open_session(&self, account_id: i64) -> Result<NewSession, AuthError> {
        let s = NewSession {
            token: random_token(),
            csrf: random_token(),
        };
        let t = now();
        sqlx::query(
            "insert into session (token_hash, account_id, csrf, created_at, last_seen) values ($1, $2, $3, $4, $4)",
        )
        .bind(digest(&s.token))
        .bind(account_id)
        .bind(&s.csrf)
        .bind(t)
        .execute(&self.pool)
        .await?;
        // Expired sessions go when new ones come; no separate sweeper needed.
        sqlx::query("delete from session where last_seen < $1 or created_at < $2")
            .bind(t - IDLE_S)
            .bind(t - ABSOLUTE_S)
            .execute(&self.pool)
            .await?;
        Ok(s)
    }

    /// The session behind a cookie token, if it is live and its account can sign in. While
    /// the database is away, a session this console found live before is taken as it was.
    pub async fn session(&self, token: &str) -> Result<Option<SessionInfo>, AuthError> {
        let key = digest(token);
        if crate::db::away() {
            if let Some(info) = self.seen_live(&key) {
                return Ok(Some(info));
            }
        }
        match self.session_in_db(&key).await {
            Ok(Some((info, created))) => {
                if let Ok(mut seen) = self.seen.lock() {
                    if seen.len() >= MAX_SEEN && !seen.contains_key(&key) {
                        if let Some(oldest) = seen.iter().min_by_key(|(_, s)| s.checked).map(|(k, _)| k.clone()) {
                            seen.remove(&oldest);
                        }
                    }
                    seen.insert(
                        key,
                        Seen {
                            info: info.clone(),
                            created,
                            checked: now(),
                        },
                    );
                }
                Ok(Some(info))
            }
            Ok(None) => {
                if let Ok(mut seen) = self.seen.lock() {
                    seen.remove(&key);
                }
                Ok(None)
            }
            // Only an outage: a pool exhausted by load is not one (the account may have been
            // disabled meanwhile).
            Err(AuthError::Sqlx(e)) if crate::db::outage(&e) => match self.seen_live(&key) {
                Some(info) => Ok(Some(info)),
                None => Err(AuthError::Sqlx(e)),
            },
            Err(e) => Err(e),
        }
    }

    /// A remembered session within its limits (the idle one counted from its last check).
    fn seen_live(&self, key: &str) -> Option<SessionInfo> {
        let t = now();
        let seen = self.seen.lock().ok()?;
        let s = seen.get(key)?;
        (t - s.checked <= IDLE_S && t - s.created <= ABSOLUTE_S).then(|| s.info.clone())
    }

    async fn session_in_db(&self, key: &str) -> Result<Option<(SessionInfo, i64)>, AuthError> {
        let t = now();
        let row: Option<(String, String, String, i64, i64)> = sqlx::query_as(
            "select a.name, a.role, s.csrf, s.created_at, s.last_seen
             from session s join account a using (account_id)
             where s.token_hash = $1 and a.disabled = 0",
        )
        .bind(key)
        .fetch_optional(&self.pool)
        .await?;
        let Some((name, role, csrf, created, last_seen)) = row else {
            return Ok(None);
        };
        if t - last_seen > IDLE_S || t - created > ABSOLUTE_S {
            return Ok(None);
        }
        // Writing last_seen on every request costs a write; once a minute is enough.
        if t - last_seen > 60 {
            sqlx::query("update session set last_seen = $1 where token_hash = $2")
                .bind(t)
                .bind(key)
                .execute(&self.pool)
                .await?;
        }
        Ok(Some((
            SessionInfo {
                name,
                role: role.parse().unwrap_or(Role::Viewer),
                csrf,
            },
            created,
        )))
    }

    pub async fn close_session(&self, token: &str) -> Result<(), AuthError> {
        // Gone from what the degraded mode honours first, whether or not the database answers.
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(&digest(token));
        }
        sqlx::query("delete from session where token_hash = $1")
            .bind(digest(token))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// When no account exists, makes a new one-time setup secret (replacing an unused one)
    /// and returns it for the console log; otherwise `None`.
    /// One per `console` (its data directory's id): on a fleet sharing one database, each
    /// console with no accounts yet prints its own, and any of them makes the first admin.
    pub async fn setup_secret(&self, console: &str) -> Result<Option<String>, AuthError> {
        if self.count().await? > 0 {
            sqlx::query("delete from setup_secret").execute(&self.pool).await?;
            return Ok(None);
        }
        let secret = random_token()[..24].to_string();
        sqlx::query(
            "insert into setup_secret (console, secret_hash, created_at) values ($1, $2, $3)
             on conflict (console) do update set secret_hash = excluded.secret_hash, created_at = excluded.created_at",
        )
        .bind(console)
        .bind(digest(&secret))
        .bind(crate::clock::now_text())
        .execute(&self.pool)
        .await?;
        Ok(Some(secret))
    }

    /// Creates the first admin with the setup secret, which is used up; returns the account id.
    pub async fn setup_admin(&self, secret: &str, name: &str, password: &str) -> Result<i64, AuthError> {
        check_name(name)?;
        check_password(name, password)?;
        let hash = hash_new(password).await?;
        let mut tx = crate::db::begin_write(&self.pool, ACCOUNTS_LOCK).await?;
        let done = async {
            let accounts: i64 = sqlx::query_scalar("select count(*) from account")
                .fetch_one(&mut *tx)
                .await?;
            if accounts > 0 {
                return Err(AuthError::AlreadySetUp);
            }
            let used = sqlx::query("delete from setup_secret where secret_hash = $1")
                .bind(digest(secret.trim()))
                .execute(&mut *tx)
                .await?;
            if used.rows_affected() == 0 {
                return Err(AuthError::BadSecret);
            }
            // The other consoles' secrets are moot once an admin exists.
            sqlx::query("delete from setup_secret").execute(&mut *tx).await?;
            let id: i64 = sqlx::query_scalar(
                "insert into account (name, password_hash, role) values ($1, $2, 'admin') returning account_id",
            )
            .bind(name)
            .bind(hash)
            .fetch_one(&mut *tx)
            .await?;
            Ok(id)
        }
        .await;
        if done.is_ok() {
            tx.commit().await?;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16: each console of a fleet starting with no accounts prints its own setup secret,
    /// and any of them makes the first admin (once: the others are used up with it). One row
    /// for the fleet meant only the last console's printed secret worked.
    #[tokio::test(flavor = "multi_thread")]
    async fn each_console_prints_a_setup_secret_that_works() {
        for db in crate::db::testing::both().await {
            let (a, b) = (
                Accounts::new(db.pool.clone()),
                Accounts::new(db.another_console().await),
            );
            let first = a.setup_secret("console-a").await.unwrap().unwrap();
            let second = b.setup_secret("console-b").await.unwrap().unwrap();
            assert!(matches!(
                a.setup_admin("not-the-secret", "root", "correct horse battery staple")
                    .await,
                Err(AuthError::BadSecret)
            ));
            a.setup_admin(&first, "root", "correct horse battery staple")
                .await
                .unwrap_or_else(|e| panic!("{:?}: the first console's secret: {e}", db.backend));
            assert!(matches!(
                b.setup_admin(&second, "mallory", "correct horse battery staple").await,
                Err(AuthError::AlreadySetUp)
            ));
            assert_eq!(b.setup_secret("console-b").await.unwrap(), None);
        }
    }

    /// Issue 16: one set of accounts for the fleet: a session opened on one console is valid
    /// on every other sharing the database, and a sign-out or a disable on any ends it on all.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_session_is_valid_on_every_console_and_ends_on_all() {
        for db in crate::db::testing::both().await {
            let (a, b) = (
                Accounts::new(db.pool.clone()),
                Accounts::new(db.another_console().await),
            );
            a.create("alice", "correct horse battery staple", Role::Operator)
                .await
                .unwrap();
            assert!(matches!(
                b.create("alice", "another long passphrase", Role::Admin).await,
                Err(AuthError::Exists(_))
            ));
            let (id, role) = b.verify("alice", "correct horse battery staple").await.unwrap();
            assert_eq!(role, Role::Operator);
            let s = a.open_session(id).await.unwrap();
            let seen = b.session(&s.token).await.unwrap().unwrap();
            assert_eq!(
                (seen.name.as_str(), seen.csrf.as_str()),
                ("alice", s.csrf.as_str()),
                "{:?}",
                db.backend
            );
            b.close_session(&s.token).await.unwrap();
            assert!(
                a.session(&s.token).await.unwrap().is_none(),
                "{:?}: signed out everywhere",
                db.backend
            );
            let s = a.open_session(id).await.unwrap();
            a.create("root", "correct horse battery staple", Role::Admin)
                .await
                .unwrap();
            b.update("alice", None, Some(true), None).await.unwrap();
            assert!(
                a.session(&s.token).await.unwrap().is_none(),
                "{:?}: a disable ends it everywhere",
                db.backend
            );
            assert!(matches!(
                a.verify("alice", "correct horse battery staple").await,
                Err(AuthError::BadLogin)
            ));
            assert_eq!(a.list().await.unwrap().iter().filter(|r| r.disabled).count(), 1);
        }
    }

    #[test]
    fn passwords_verify_and_hashes_are_salted() {
        let a = hash_password("correct horse battery").unwrap();
        let b = hash_password("correct horse battery").unwrap();
        assert!(a.starts_with("$argon2id$"));
        assert_ne!(a, b, "salted");
        assert!(verify_password("correct horse battery", &a));
        assert!(!verify_password("correct horse batterY", &a));
        assert!(!verify_password("x", "not a phc string"));
    }
}
