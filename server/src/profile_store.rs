//! The profile repository: launch profiles stored as JSON in the `profile` table.

use crate::db::Pool;
use app::domain::profile::Profile;

/// Errors of the profile store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("stored profile {name} is unreadable: {source}")]
    Corrupt { name: String, source: serde_json::Error },
}

/// A stored profile with its timestamps.
#[derive(Clone, Debug)]
pub struct StoredProfile {
    pub profile: Profile,
    pub created_at: String,
    /// Moves only when the profile's content changes (a re-import of the same file does not).
    pub updated_at: String,
}

/// The launch profiles in the console's database.
#[derive(Clone)]
pub struct ProfileStore {
    pool: Pool,
    /// The profiles as last read, by name: what this host's engines are stopped, restarted
    /// and listed with while a shared database is away (the degraded mode), never written
    /// back.
    last_read: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, StoredProfile>>>,
}

impl ProfileStore {
    pub fn new(pool: Pool) -> Self {
        Self {
            pool,
            last_read: Default::default(),
        }
    }

    fn remember(&self, p: &StoredProfile) {
        if let Ok(mut m) = self.last_read.lock() {
            m.insert(p.profile.name.clone(), p.clone());
        }
    }

    /// The last read copy, when the database cannot be reached (not when it answers that a
    /// profile is gone or unreadable).
    fn fallback<T>(
        &self,
        e: StoreError,
        pick: impl FnOnce(&std::collections::BTreeMap<String, StoredProfile>) -> Option<T>,
    ) -> Result<T, StoreError> {
        let unreachable = matches!(&e, StoreError::Sqlx(e) if crate::db::unreachable(e)) || crate::db::away();
        match self
            .last_read
            .lock()
            .ok()
            .filter(|_| unreachable)
            .and_then(|m| pick(&m))
        {
            Some(v) => {
                tracing::debug!(error = %e, "profiles read from memory: the database is away");
                Ok(v)
            }
            None => Err(e),
        }
    }

    /// The pool, for the other stores of the same database.
    pub fn pool(&self) -> Pool {
        self.pool.clone()
    }

    /// Inserts or replaces a profile by name; returns true when it was new.
    pub async fn upsert(&self, profile: &Profile) -> Result<bool, StoreError> {
        let mut conn = self.pool.acquire().await?;
        upsert_on(&mut conn, profile).await
    }

    pub async fn get(&self, name: &str) -> Result<Option<StoredProfile>, StoreError> {
        if crate::db::away() {
            if let Some(p) = self.last_read.lock().ok().and_then(|m| m.get(name).cloned()) {
                return Ok(Some(p));
            }
        }
        let read = async {
            let mut conn = self.pool.acquire().await?;
            get_on(&mut conn, name).await
        };
        match read.await {
            Ok(p) => {
                if let Some(p) = &p {
                    self.remember(p);
                }
                Ok(p)
            }
            Err(e) => self.fallback(e, |m| m.get(name).cloned().map(Some)),
        }
    }

    pub async fn list(&self) -> Result<Vec<StoredProfile>, StoreError> {
        if crate::db::away() {
            if let Some(all) = self
                .last_read
                .lock()
                .ok()
                .filter(|m| !m.is_empty())
                .map(|m| m.values().cloned().collect())
            {
                return Ok(all);
            }
        }
        let read = async {
            let rows: Vec<(String, String, String, String)> =
                sqlx::query_as("select name, body, created_at, updated_at from profile order by name")
                    .fetch_all(&self.pool)
                    .await?;
            rows.into_iter().map(decode).collect::<Result<Vec<_>, _>>()
        };
        match read.await {
            Ok(all) => {
                if let Ok(mut m) = self.last_read.lock() {
                    *m = all.iter().map(|p| (p.profile.name.clone(), p.clone())).collect();
                }
                Ok(all)
            }
            Err(e) => self.fallback(e, |m| Some(m.values().cloned().collect())),
        }
    }
}

/// Stores a profile on a given connection (inside another store's transaction: a change's
/// activation writes the profile and the change's state at once). True when it is new.
pub async fn upsert_on(conn: &mut crate::db::Conn, profile: &Profile) -> Result<bool, StoreError> {
    let body = serde_json::to_string(profile).map_err(|source| StoreError::Corrupt {
        name: profile.name.clone(),
        source,
    })?;
    let existed: Option<i64> = sqlx::query_scalar("select profile_id from profile where name = $1")
        .bind(&profile.name)
        .fetch_optional(&mut *conn)
        .await?;
    sqlx::query(
        "insert into profile (name, body) values ($1, $2)
         on conflict (name) do update set body = excluded.body,
             updated_at = $3
         where profile.body != excluded.body",
    )
    .bind(&profile.name)
    .bind(body)
    .bind(crate::clock::now_text())
    .execute(&mut *conn)
    .await?;
    Ok(existed.is_none())
}

/// Reads a profile on a given connection.
pub async fn get_on(conn: &mut crate::db::Conn, name: &str) -> Result<Option<StoredProfile>, StoreError> {
    let row: Option<(String, String, String, String)> =
        sqlx::query_as("select name, body, created_at, updated_at from profile where name = $1")
            .bind(name)
            .fetch_optional(&mut *conn)
            .await?;
    row.map(decode).transpose()
}

fn decode((name, body, created_at, updated_at): (String, String, String, String)) -> Result<StoredProfile, StoreError> {
    let profile = serde_json::from_str(&body).map_err(|source| StoreError::Corrupt { name, source })?;
    Ok(StoredProfile {
        profile,
        created_at,
        updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn concurrent_first_opens_migrate_once() {
        // Each open also writes, as the console does right after opening, so a WAL switch on a
        // fresh file races with a writer (the failure CI once met: "database is locked").
        for round in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("race.db");
            let opens = (0..12).map(|i| {
                let path = path.clone();
                tokio::spawn(async move {
                    let store = ProfileStore::new(crate::db::open(&path).await?);
                    let text = format!("ENGINE=sim-vllm\nMODEL=/models/m\nPORT={}\n", 8100 + i);
                    let (p, _) = Profile::from_env(&format!("p{round}-{i}"), &text).unwrap();
                    store.upsert(&p).await?;
                    anyhow::Ok(())
                })
            });
            for r in futures::future::join_all(opens).await {
                r.unwrap().unwrap();
            }
        }
    }

    #[tokio::test]
    async fn env_to_db_to_env_is_identical() {
        for db in crate::db::testing::both().await {
            env_round_trip(ProfileStore::new(db.pool)).await;
        }
    }

    async fn env_round_trip(store: ProfileStore) {
        let text = "ENGINE=sim-vllm\nMODEL=/models/m\nSERVED_MODEL_NAME=m\nTENSOR_PARALLEL=1\nMEM_FRACTION=0.9\nSPECULATIVE_CONFIG='{\"method\":\"ngram\"}'\nHOST=127.0.0.1\nPORT=8100\nEXTRA_ARGS='--a \"b c\"'\nENV_X=1\n";
        let (p, _) = Profile::from_env("demo", text).unwrap();
        assert!(store.upsert(&p).await.unwrap());
        assert!(!store.upsert(&p).await.unwrap());
        let back = store.get("demo").await.unwrap().unwrap();
        assert_eq!(back.profile.to_env(), text);
        assert_eq!(store.list().await.unwrap().len(), 1);
        assert!(store.get("nope").await.unwrap().is_none());
    }
}
