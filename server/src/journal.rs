//! The change journal: every serve, stop and restart, profile change (as a diff), incident
//! action and gate result, with who, when, why and the context (engine version, driver).
//! Append-only in SQLite, and hash-chained: each entry's hash covers the previous hash and its
//! own fields, so `roofline journal verify` finds an edited, inserted or deleted row.

use sha2::{Digest, Sha256};
use sqlx::{Connection, SqlitePool};

/// The hash before the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal database: {0}")]
    Db(#[from] sqlx::Error),
}

/// One journal entry (shared with the UI).
pub use app::api::JournalEntry as Entry;

/// The hash of an entry: SHA-256 over the previous hash and the fields, as a JSON array (a
/// canonical, unambiguous encoding).
pub fn hash_of(prev: &str, at: &str, who: &str, kind: &str, subject: &str, reason: &str, detail: &str) -> String {
    let canonical = serde_json::to_string(&[prev, at, who, kind, subject, reason, detail]).unwrap_or_default();
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

/// What `verify` found (shared with the UI).
pub use app::api::JournalCheck as Verification;

type Row = (i64, String, String, String, String, String, String, String, String);

fn entry((seq, at, who, kind, subject, reason, detail, prev_hash, hash): Row) -> Entry {
    Entry {
        seq,
        at,
        who,
        kind,
        subject,
        reason,
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::String(detail)),
        prev_hash,
        hash,
    }
}

#[derive(Clone)]
pub struct Journal {
    pool: SqlitePool,
}

impl Journal {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Appends an entry. The last hash is read and the row written in one immediate
    /// transaction, so concurrent writers (console and CLI) cannot fork the chain.
    pub async fn append(
        &self,
        who: &str,
        kind: &str,
        subject: &str,
        reason: &str,
        detail: serde_json::Value,
    ) -> Result<Entry, JournalError> {
        let mut conn = self.pool.acquire().await?;
        let detail = detail.to_string();
        let at = time::OffsetDateTime::now_utc();
        let at = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute(),
            at.second()
        );
        sqlx::query("begin immediate").execute(&mut *conn).await?;
        let result = async {
            let prev: Option<String> = sqlx::query_scalar("select hash from journal order by seq desc limit 1")
                .fetch_optional(&mut *conn)
                .await?;
            let prev = prev.unwrap_or_else(|| GENESIS.to_string());
            let hash = hash_of(&prev, &at, who, kind, subject, reason, &detail);
            let seq: i64 = sqlx::query_scalar(
                "insert into journal (at, who, kind, subject, reason, detail, prev_hash, hash) values ($1, $2, $3, $4, $5, $6, $7, $8) returning seq",
            )
            .bind(&at)
            .bind(who)
            .bind(kind)
            .bind(subject)
            .bind(reason)
            .bind(&detail)
            .bind(&prev)
            .bind(&hash)
            .fetch_one(&mut *conn)
            .await?;
            Ok::<_, sqlx::Error>((seq, prev, hash))
        }
        .await;
        match result {
            Ok((seq, prev_hash, hash)) => {
                sqlx::query("commit").execute(&mut *conn).await?;
                Ok(Entry {
                    seq,
                    at,
                    who: who.into(),
                    kind: kind.into(),
                    subject: subject.into(),
                    reason: reason.into(),
                    detail: serde_json::from_str(&detail).unwrap_or_default(),
                    prev_hash,
                    hash,
                })
            }
            Err(e) => {
                let _ = sqlx::query("rollback").execute(&mut *conn).await;
                Err(e.into())
            }
        }
    }

    /// Appends, logging instead of failing: the action it records has already happened.
    pub async fn record(&self, who: &str, kind: &str, subject: &str, reason: &str, detail: serde_json::Value) {
        if let Err(e) = self.append(who, kind, subject, reason, detail).await {
            tracing::error!(error = %e, kind, subject, "could not write the change journal");
        }
    }

    /// Newest first; `query` matches subject, kind, who, reason or detail text.
    pub async fn list(
        &self,
        subject: Option<&str>,
        query: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Entry>, JournalError> {
        let like = query.map(|q| format!("%{}%", q.replace(['%', '_'], "")));
        let rows: Vec<Row> = sqlx::query_as(
            "select seq, at, who, kind, subject, reason, detail, prev_hash, hash from journal
             where ($1 is null or subject = $1)
               and ($2 is null or subject like $2 or kind like $2 or who like $2 or reason like $2 or detail like $2)
             order by seq desc limit $3",
        )
        .bind(subject)
        .bind(like)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(entry).collect())
    }

    /// Walks the whole chain from the start.
    pub async fn verify(&self) -> Result<Verification, JournalError> {
        let mut conn = self.pool.acquire().await?;
        let mut tx = conn.begin().await?;
        let rows: Vec<Row> = sqlx::query_as(
            "select seq, at, who, kind, subject, reason, detail, prev_hash, hash from journal order by seq",
        )
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut prev = GENESIS.to_string();
        let mut last_seq = 0i64;
        for (i, (seq, at, who, kind, subject, reason, detail, prev_hash, hash)) in rows.iter().enumerate() {
            let broken = |why: &str| {
                Ok(Verification {
                    entries: i,
                    broken: Some((*seq, why.to_string())),
                })
            };
            if *seq != last_seq + 1 {
                return broken("an entry before this one is missing");
            }
            if *prev_hash != prev {
                return broken("does not link to the previous entry");
            }
            if hash_of(&prev, at, who, kind, subject, reason, detail) != *hash {
                return broken("its content does not match its hash (edited)");
            }
            prev = hash.clone();
            last_seq = *seq;
        }
        Ok(Verification {
            entries: rows.len(),
            broken: None,
        })
    }
}

pub use app::domain::envfile::env_diff;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_chain_holds_and_an_edit_or_a_deletion_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("j.db")).await.unwrap();
        let j = Journal::new(pool.clone());
        for i in 0..5 {
            j.append(
                "ops@cli",
                "serve",
                "qwen",
                &format!("reason {i}"),
                serde_json::json!({"n": i}),
            )
            .await
            .unwrap();
        }
        assert_eq!(
            j.verify().await.unwrap(),
            Verification {
                entries: 5,
                broken: None
            }
        );
        assert_eq!(j.list(Some("qwen"), Some("reason 3"), 10).await.unwrap().len(), 1);
        // The table refuses edits outright.
        assert!(sqlx::query("update journal set reason = 'x' where seq = 2")
            .execute(&pool)
            .await
            .is_err());
        // Someone with the database file drops the trigger and edits a row: the chain shows it.
        sqlx::query("drop trigger journal_no_update")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("update journal set reason = 'nothing happened' where seq = 3")
            .execute(&pool)
            .await
            .unwrap();
        let v = j.verify().await.unwrap();
        assert_eq!(v.broken.as_ref().map(|(s, _)| *s), Some(3));
        assert!(v.broken.unwrap().1.contains("edited"));
        // A deleted row is found too.
        sqlx::query("update journal set reason = 'reason 2' where seq = 3")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("drop trigger journal_no_delete")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("delete from journal where seq = 4")
            .execute(&pool)
            .await
            .unwrap();
        let v = j.verify().await.unwrap();
        assert_eq!(v.broken.as_ref().map(|(s, _)| *s), Some(5));
        assert!(v.broken.unwrap().1.contains("missing"));
    }

    #[test]
    fn profile_diffs_show_removed_and_added_lines() {
        let d = env_diff("A=1\nB=2\n", "A=1\nB=3\nC=4\n");
        assert_eq!(d, vec!["-B=2", "+B=3", "+C=4"]);
    }
}
