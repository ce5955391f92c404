//! The registry of hosts: one row per console sharing the database, its facts, and a
//! heartbeat written every scrape interval. A host name belongs to one console (its data
//! directory's id) while that console's heartbeat is fresh: a second console configured with
//! the same name is refused, rather than the two overwriting each other's rows and jobs.

use super::Identity;
use crate::db::Pool;
use app::api::HostRow;
use serde::{Deserialize, Serialize};

/// What a host tells the fleet about itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    #[serde(default)]
    pub gpus: Vec<String>,
    #[serde(default)]
    pub installations: Vec<String>,
    #[serde(default)]
    pub version: String,
}

/// A console's address as another host registered it, only when it is an http(s) URL: it
/// becomes a link on the pages, and a row written behind the consoles' backs could hold
/// `javascript:` or anything else.
pub fn safe_url(url: &str) -> Option<&str> {
    let ok = (url.starts_with("http://") || url.starts_with("https://"))
        && url.len() <= 512
        && !url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '<' || c == '>');
    ok.then_some(url)
}

/// A registry row as stored.
#[derive(sqlx::FromRow)]
pub struct Registered {
    pub name: String,
    pub url: String,
    pub facts: String,
    pub heartbeat_ms: i64,
}

impl Registered {
    pub fn row(self, now_ms: i64, stale_ms: i64, me: &str) -> HostRow {
        // Another host's facts are its own: bounded and read leniently.
        let facts: Facts = if self.facts.len() <= 64 << 10 {
            serde_json::from_str(&self.facts).unwrap_or_default()
        } else {
            Facts::default()
        };
        let age_ms = now_ms.saturating_sub(self.heartbeat_ms).max(0);
        HostRow {
            this: self.name == me,
            name: self.name,
            url: safe_url(&self.url).unwrap_or_default().to_string(),
            reachable: age_ms <= stale_ms,
            heartbeat_age_s: age_ms / 1000,
            gpus: facts.gpus,
            installations: facts.installations,
            version: facts.version,
        }
    }
}

/// Why this console could not take its place in the registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(
        "host name {name} is held by another console (last heard {age_s} s ago): give each host its own host_name in roofline.toml"
    )]
    NameTaken { name: String, age_s: i64 },
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Takes (or takes back) this host's row: refused while another console holds the name
/// with a fresh heartbeat.
pub async fn register(
    pool: &Pool,
    me: &Identity,
    facts: &Facts,
    now_ms: i64,
    stale_ms: i64,
) -> Result<(), RegistryError> {
    let facts = serde_json::to_string(facts).unwrap_or_else(|_| "{}".into());
    let done = sqlx::query(
        "insert into host (name, console_id, url, facts, started_ms, heartbeat_ms) values ($1, $2, $3, $4, $5, $5)
         on conflict (name) do update set console_id = excluded.console_id, url = excluded.url, facts = excluded.facts,
             started_ms = excluded.started_ms, heartbeat_ms = excluded.heartbeat_ms
         where host.console_id = excluded.console_id or host.heartbeat_ms < $6",
    )
    .bind(&me.name)
    .bind(&me.console_id)
    .bind(&me.url)
    .bind(facts)
    .bind(now_ms)
    .bind(now_ms - stale_ms)
    .execute(pool)
    .await?;
    if done.rows_affected() == 1 {
        return Ok(());
    }
    let heard: Option<i64> = sqlx::query_scalar("select heartbeat_ms from host where name = $1")
        .bind(&me.name)
        .fetch_optional(pool)
        .await?;
    Err(RegistryError::NameTaken {
        name: me.name.clone(),
        age_s: heard.map_or(0, |h| (now_ms - h).max(0) / 1000),
    })
}

/// The heartbeat; false when another console has taken the name since (this one's row is
/// then left alone).
pub async fn heartbeat(pool: &Pool, me: &Identity, now_ms: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("update host set heartbeat_ms = $3 where name = $1 and console_id = $2")
        .bind(&me.name)
        .bind(&me.console_id)
        .bind(now_ms)
        .execute(pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn exists(pool: &Pool, name: &str) -> Result<bool, sqlx::Error> {
    let n: i64 = sqlx::query_scalar("select count(*) from host where name = $1")
        .bind(name)
        .fetch_one(pool)
        .await?;
    Ok(n > 0)
}

pub async fn list(pool: &Pool) -> Result<Vec<Registered>, sqlx::Error> {
    sqlx::query_as("select name, url, facts, heartbeat_ms from host order by name limit 10000")
        .fetch_all(pool)
        .await
}
