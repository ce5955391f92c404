//! The change journal: every serve, stop and restart, profile change (as a diff), incident
//! action and gate result, with who, when, why and the context (engine version, driver).
//! Append-only in SQLite, and hash-chained: each entry's hash covers the previous hash and its
//! own fields, so `roofline journal verify` finds an edited, inserted or deleted row.
//!
//! What the chain alone cannot show: the newest rows deleted, or the whole chain rewritten by
//! someone with the database file. So the chain's head (sequence and hash) is also written
//! outside the database after every append (an anchor file in the data dir, and the log), and
//! with a key from host configuration every entry carries an HMAC of its hash. `verify` then
//! reports truncation (the anchor is ahead of the table) and rewrite (the anchor's hash or a
//! MAC does not match). An entry that cannot be written is retried, then kept in a spool file
//! that the next append writes first, in order: never silently dropped.

use crate::db::Pool;
use sha2::{Digest, Sha256};
use sqlx::Connection;

/// The advisory lock that serialises appends from every console sharing a PostgreSQL: the
/// head read and the row written under it are one step of the chain.
const APPEND_LOCK: i64 = 0x726f_6f66_6a6e_6c00; // "roofjnl"

/// The hash before the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal database: {0}")]
    Db(#[from] sqlx::Error),
    /// The table does not reach the anchor kept outside the database (rows deleted, the
    /// chain rewritten, an older database put in place): appends are refused until a restore
    /// re-anchors, so a cover-up cannot be written over.
    #[error("journal refused: {0}")]
    Rewound(Unanchored),
}

/// How the table fails its anchor (kept outside the database): the banner's, `/readyz`'s and
/// `roofline journal verify`'s words.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Unanchored {
    #[error("the anchor outside the database is missing although the journal has entries (up to #{0})")]
    AnchorMissing(i64),
    #[error("rewritten: entry #{0} differs from the anchor written outside the database")]
    Rewritten(i64),
    #[error("truncated: the anchor outside the database says the journal reached #{0}, the table does not")]
    Truncated(i64),
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

/// A journal row as stored: read by column name.
#[derive(sqlx::FromRow)]
struct Row {
    seq: i64,
    at: String,
    who: String,
    kind: String,
    subject: String,
    reason: String,
    detail: String,
    prev_hash: String,
    hash: String,
}

fn entry(r: Row) -> Entry {
    Entry {
        seq: r.seq,
        at: r.at,
        who: r.who,
        kind: r.kind,
        subject: r.subject,
        reason: r.reason,
        detail: serde_json::from_str(&r.detail).unwrap_or(serde_json::Value::String(r.detail)),
        prev_hash: r.prev_hash,
        hash: r.hash,
    }
}

#[derive(Clone)]
pub struct Journal {
    pool: Pool,
    /// Where the chain's head is mirrored after each append (and spooled entries wait).
    anchor: Option<std::path::PathBuf>,
    /// HMAC key: every entry's hash is authenticated with it.
    key: Option<std::sync::Arc<Vec<u8>>>,
}

/// The chain's head as last written: sequence and hash.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Anchor {
    pub seq: i64,
    pub hash: String,
}

/// A line of the anchor log.
#[derive(serde::Serialize, serde::Deserialize)]
struct AnchorLine {
    seq: i64,
    hash: String,
    /// What a restore put in place (file and hash): the anchor may move back only here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    restore: Option<String>,
}

/// HMAC-SHA256 (RFC 2104) of `msg`, hex.
pub fn hmac_hex(key: &[u8], msg: &str) -> String {
    const BLOCK: usize = 64;
    let mut k = if key.len() > BLOCK {
        Sha256::digest(key).to_vec()
    } else {
        key.to_vec()
    };
    k.resize(BLOCK, 0);
    let pad = |b: u8| k.iter().map(|x| x ^ b).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg.as_bytes())
        .finalize();
    hex::encode(Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize())
}

/// An entry waiting in the spool because the database refused it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spooled {
    /// When the action happened (absent in spools written before this field).
    #[serde(default)]
    at: Option<String>,
    who: String,
    kind: String,
    subject: String,
    reason: String,
    detail: serde_json::Value,
}

impl Journal {
    pub fn new(pool: Pool) -> Self {
        Self {
            pool,
            anchor: None,
            key: None,
        }
    }

    /// Mirrors the head to `path` after every append (and spools there beside it).
    pub fn with_anchor(mut self, path: std::path::PathBuf) -> Self {
        self.anchor = Some(path);
        self
    }

    /// Authenticates every entry with this key.
    pub fn with_key(mut self, key: Option<Vec<u8>>) -> Self {
        self.key = key.filter(|k| !k.is_empty()).map(std::sync::Arc::new);
        self
    }

    /// The append-only anchor log beside the head file: one line per head the chain
    /// reached, and a marked line for each restore.
    pub fn anchor_log(&self) -> Option<std::path::PathBuf> {
        self.anchor.as_ref().map(|a| a.with_extension("anchors.jsonl"))
    }

    /// The head last anchored outside the database: the furthest head in the anchor log since
    /// its last restore line (lines of concurrent writers may land out of order), or the
    /// single head file of a console from before the log.
    pub fn read_anchor(&self) -> Option<Anchor> {
        use std::io::{Read, Seek, SeekFrom};
        // Every line after the last restore line is a valid head, so any tail holding a few
        // whole lines answers: read on every append and every page's header, it stays small.
        const TAIL: u64 = 4 << 10;
        let from_log = self.anchor_log().and_then(|path| {
            let mut f = std::fs::File::open(path).ok()?;
            let len = f.metadata().ok()?.len();
            f.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
            let mut text = String::new();
            f.take(TAIL).read_to_string(&mut text).ok()?;
            let lines: Vec<AnchorLine> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
            let since = lines.iter().rposition(|l| l.restore.is_some()).unwrap_or(0);
            lines[since..].iter().max_by_key(|l| l.seq).map(|l| Anchor {
                seq: l.seq,
                hash: l.hash.clone(),
            })
        });
        from_log.or_else(|| {
            let text = std::fs::read_to_string(self.anchor.as_ref()?).ok()?;
            serde_json::from_str(&text).ok()
        })
    }

    /// Moves the anchor forward to this head (never back: a head at or behind the anchor
    /// is not written), in the log, the head file and the console's log.
    fn write_anchor(&self, seq: i64, hash: &str) {
        tracing::info!(seq, hash, "journal head");
        if self.read_anchor().is_some_and(|a| a.seq >= seq) {
            return;
        }
        self.append_anchor_line(&AnchorLine {
            seq,
            hash: hash.to_string(),
            restore: None,
        });
    }

    fn append_anchor_line(&self, line: &AnchorLine) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let (Some(path), Some(log)) = (&self.anchor, self.anchor_log()) else {
            return;
        };
        let text = serde_json::to_string(line).unwrap_or_default();
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&log)
            .and_then(|mut f| writeln!(f, "{text}").and_then(|()| f.sync_data()));
        let tmp = path.with_extension("tmp");
        let body = serde_json::json!({"seq": line.seq, "hash": line.hash}).to_string();
        if let Err(e) = written
            .and_then(|()| std::fs::write(&tmp, body))
            .and_then(|()| std::fs::rename(&tmp, path))
        {
            tracing::error!(error = %e, path = %log.display(), "could not write the journal anchor");
        }
    }

    /// After a restore: anchors the restored table's head explicitly, with a line naming what
    /// was restored, so the anchor may move back to it. The caller journals the restore.
    pub async fn reanchor(&self, restored: &str) -> Result<Anchor, JournalError> {
        let head: Option<(i64, String)> = sqlx::query_as("select seq, hash from journal order by seq desc limit 1")
            .fetch_optional(&self.pool)
            .await?;
        let (seq, hash) = head.unwrap_or((0, GENESIS.to_string()));
        tracing::warn!(seq, hash, restored, "journal re-anchored after a restore");
        self.append_anchor_line(&AnchorLine {
            seq,
            hash: hash.clone(),
            restore: Some(restored.to_string()),
        });
        Ok(Anchor { seq, hash })
    }

    /// Whether the table reaches the anchor: the entry at the anchor's sequence exists with
    /// the anchor's hash (a head further on is a writer that has not anchored yet). `Err`
    /// says what is wrong. Without an anchor path (tests, tools) there is nothing to check.
    async fn check_head<'c>(
        &self,
        conn: impl sqlx::Executor<'c, Database = sqlx::Any>,
    ) -> Result<Result<(), Unanchored>, sqlx::Error> {
        if self.anchor.is_none() {
            return Ok(Ok(()));
        }
        let Some(anchor) = self.read_anchor() else {
            // A journal shared by the fleet's consoles (PostgreSQL) has entries from the other
            // hosts before this one first writes: its anchor starts at the head it finds. The
            // other hosts' anchors still hold the chain up to theirs.
            if crate::db::Backend::of(&self.pool) == crate::db::Backend::Postgres {
                return Ok(Ok(()));
            }
            let any: Option<i64> = sqlx::query_scalar("select max(seq) from journal")
                .fetch_one(conn)
                .await?;
            return Ok(match any {
                Some(n) => Err(Unanchored::AnchorMissing(n)),
                // Anchored at the start before the first entry is written (under the append's
                // write lock): another process that appends before this one has written its
                // anchor then finds the start, not "missing".
                None => {
                    self.write_anchor(0, GENESIS);
                    Ok(())
                }
            });
        };
        if anchor.seq == 0 {
            return Ok(Ok(()));
        }
        let at: Option<String> = sqlx::query_scalar("select hash from journal where seq = $1")
            .bind(anchor.seq)
            .fetch_optional(conn)
            .await?;
        Ok(match at {
            Some(h) if h == anchor.hash => Ok(()),
            Some(_) => Err(Unanchored::Rewritten(anchor.seq)),
            None => Err(Unanchored::Truncated(anchor.seq)),
        })
    }

    /// What the console shows in its banner and `/readyz` while appends are refused.
    /// Not checked while the database is away (the header says that instead).
    pub async fn alarm(&self) -> Option<String> {
        if crate::db::away() {
            return None;
        }
        match self.check_head(&self.pool).await {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(why.to_string()),
            Err(e) => {
                tracing::warn!(error = %e, "journal head could not be checked");
                None
            }
        }
    }

    fn spool_path(&self) -> Option<std::path::PathBuf> {
        self.anchor.as_ref().map(|a| a.with_extension("pending.jsonl"))
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
        self.drain_spool().await?;
        self.append_now(who, kind, subject, reason, detail).await
    }

    /// Writes the spooled entries now (the console calls it when the database is back);
    /// returns how many.
    pub async fn flush(&self) -> Result<usize, JournalError> {
        self.drain_spool().await
    }

    /// Writes spooled entries (oldest first) before anything newer; returns how many.
    async fn drain_spool(&self) -> Result<usize, JournalError> {
        let Some(path) = self.spool_path() else { return Ok(0) };
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(0);
        };
        // Taken out of the way first, so a concurrent drain does not write them twice.
        let claimed = path.with_extension("draining");
        if std::fs::rename(&path, &claimed).is_err() {
            return Ok(0);
        }
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        for (i, line) in lines.iter().enumerate() {
            let Ok(e) = serde_json::from_str::<Spooled>(line) else {
                continue;
            };
            // When it happened, besides when it could be written.
            let mut detail = match e.detail {
                serde_json::Value::Object(mut m) => {
                    m.insert("spooled".into(), true.into());
                    serde_json::Value::Object(m)
                }
                other => serde_json::json!({"spooled": true, "detail": other}),
            };
            if let (Some(at), Some(m)) = (e.at, detail.as_object_mut()) {
                m.insert("happened_at".into(), at.into());
            }
            if let Err(err) = self.append_now(&e.who, &e.kind, &e.subject, &e.reason, detail).await {
                // The rest go back to the spool ahead of anything spooled meanwhile: nothing
                // is lost and the order holds.
                let later = std::fs::read_to_string(&path).unwrap_or_default();
                let back = format!("{}\n{later}", lines[i..].join("\n"));
                if std::fs::write(&claimed, back)
                    .and_then(|()| std::fs::rename(&claimed, &path))
                    .is_err()
                {
                    tracing::error!(path = %claimed.display(), "spooled journal entries could not be put back");
                }
                return Err(err);
            }
        }
        let _ = std::fs::remove_file(&claimed);
        Ok(lines.len())
    }

    async fn append_now(
        &self,
        who: &str,
        kind: &str,
        subject: &str,
        reason: &str,
        detail: serde_json::Value,
    ) -> Result<Entry, JournalError> {
        let detail = detail.to_string();
        let at = crate::clock::now_text();
        let mut tx = crate::db::begin_write(&self.pool, APPEND_LOCK).await?;
        if let Err(why) = self.check_head(&mut *tx).await? {
            tracing::error!(%why, who, kind, subject, "journal append refused: the table does not reach its anchor");
            return Err(JournalError::Rewound(why));
        }
        let head: Option<(i64, String)> = sqlx::query_as("select seq, hash from journal order by seq desc limit 1")
            .fetch_optional(&mut *tx)
            .await?;
        let (head_seq, prev) = head.unwrap_or_else(|| (0, GENESIS.to_string()));
        let hash = hash_of(&prev, &at, who, kind, subject, reason, &detail);
        let mac = self.key.as_ref().map(|k| hmac_hex(k, &hash));
        // SQLite numbers a row given NULL by AUTOINCREMENT, inside the transaction (and never
        // hands a deleted number out again). A PostgreSQL sequence is not transactional: an
        // append rolled back would leave a gap that `verify` reads as a deleted entry. There
        // the number is the head's plus one, taken under the append lock.
        let explicit = (crate::db::Backend::of(&self.pool) == crate::db::Backend::Postgres).then_some(head_seq + 1);
        let seq: i64 = sqlx::query_scalar(
            "insert into journal (seq, at, who, kind, subject, reason, detail, prev_hash, hash, mac)
             values ($10, $1, $2, $3, $4, $5, $6, $7, $8, $9) returning seq",
        )
        .bind(&at)
        .bind(who)
        .bind(kind)
        .bind(subject)
        .bind(reason)
        .bind(&detail)
        .bind(&prev)
        .bind(&hash)
        .bind(mac)
        .bind(explicit)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        self.write_anchor(seq, &hash);
        Ok(Entry {
            seq,
            at,
            who: who.into(),
            kind: kind.into(),
            subject: subject.into(),
            reason: reason.into(),
            detail: serde_json::from_str(&detail).unwrap_or_default(),
            prev_hash: prev,
            hash,
        })
    }

    /// Appends an entry for an action that has already happened: retried while the database
    /// is busy, and if it still cannot be written, kept in the spool file (written first by
    /// the next append) rather than lost.
    pub async fn record(&self, who: &str, kind: &str, subject: &str, reason: &str, detail: serde_json::Value) {
        let mut wait = std::time::Duration::from_millis(50);
        // With the database known to be away, retrying only delays the action's answer.
        let attempts = if crate::db::away() { 0 } else { 5 };
        for attempt in 0..attempts {
            match self.append(who, kind, subject, reason, detail.clone()).await {
                Ok(_) => return,
                // Retrying cannot help: the entry waits in the spool until a restore.
                Err(JournalError::Rewound(_)) => break,
                Err(e) if attempt < 4 => {
                    tracing::warn!(error = %e, kind, subject, attempt, "journal write failed; retrying");
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                Err(e) => tracing::error!(error = %e, kind, subject, "journal write failed; spooling the entry"),
            }
        }
        let spooled = Spooled {
            at: Some(crate::clock::now_text()),
            who: who.into(),
            kind: kind.into(),
            subject: subject.into(),
            reason: reason.into(),
            detail,
        };
        let written = self.spool_path().and_then(|path| {
            use std::io::Write;
            let line = serde_json::to_string(&spooled).ok()?;
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).ok()?;
            writeln!(f, "{line}").ok()?;
            f.sync_data().ok()
        });
        if written.is_none() {
            tracing::error!(who, kind, subject, reason, detail = %spooled.detail, "journal entry could not be written or spooled");
        }
    }

    /// Newest first; `query` matches subject, kind, who, reason or detail text.
    pub async fn list(
        &self,
        subject: Option<&str>,
        query: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Entry>, JournalError> {
        self.select(subject, query, None, limit).await
    }

    /// One page of entries, newest first, older than `before` (a sequence number) when given:
    /// how an export walks the whole journal without holding it.
    pub async fn page(&self, query: Option<&str>, before: Option<i64>, limit: i64) -> Result<Vec<Entry>, JournalError> {
        self.select(None, query, before, limit).await
    }

    async fn select(
        &self,
        subject: Option<&str>,
        query: Option<&str>,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Entry>, JournalError> {
        let like = query.map(|q| format!("%{}%", q.replace(['%', '_'], "")));
        let rows: Vec<Row> = sqlx::query_as(
            "select seq, at, who, kind, subject, reason, detail, prev_hash, hash from journal
             where ($1 is null or subject = $1)
               and ($2 is null or seq < $2)
               and ($3 is null or subject like $3 or kind like $3 or who like $3 or reason like $3 or detail like $3)
             order by seq desc limit $4",
        )
        .bind(subject)
        .bind(before)
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
        // One pass over the table, MACs with their rows.
        type Checked = (
            i64,
            String,
            String,
            String,
            String,
            String,
            String,
            String,
            String,
            Option<String>,
        );
        let rows: Vec<Checked> = sqlx::query_as(
            "select seq, at, who, kind, subject, reason, detail, prev_hash, hash, mac from journal order by seq",
        )
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut keyed = false;
        let mut prev = GENESIS.to_string();
        let mut last_seq = 0i64;
        for (i, (seq, at, who, kind, subject, reason, detail, prev_hash, hash, mac)) in rows.iter().enumerate() {
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
            if let Some(key) = &self.key {
                match mac {
                    Some(mac) if *mac == hmac_hex(key, hash) => keyed = true,
                    Some(_) => return broken("its MAC does not match the key (the chain was rewritten)"),
                    // Entries from before the key was configured carry none; after the first
                    // authenticated entry every one must.
                    None if keyed => return broken("has no MAC although earlier entries do (rewritten)"),
                    None => {}
                }
            }
            prev = hash.clone();
            last_seq = *seq;
        }
        if let Err(why) = self.check_head(&self.pool).await? {
            return Ok(Verification {
                entries: rows.len(),
                broken: Some((self.read_anchor().map_or(last_seq, |a| a.seq), why.to_string())),
            });
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

    /// Issue 16: several consoles (hosts, on PostgreSQL; processes, on SQLite) append at once
    /// to one journal: every entry lands once, numbered without a gap, in one chain that
    /// verifies, each console's anchor on it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn appends_from_several_consoles_at_once_make_one_chain() {
        for db in crate::db::testing::both().await {
            let dir = tempfile::tempdir().unwrap();
            let mut consoles = Vec::new();
            for host in 0..3 {
                let pool = if host == 0 {
                    db.pool.clone()
                } else {
                    db.another_console().await
                };
                // Processes on one host share the data directory's anchor; hosts keep their own.
                let anchor = match db.backend {
                    crate::db::Backend::Sqlite => dir.path().join("anchor.json"),
                    crate::db::Backend::Postgres => dir.path().join(format!("anchor-{host}.json")),
                };
                consoles.push(Journal::new(pool).with_anchor(anchor));
            }
            let mut tasks = tokio::task::JoinSet::new();
            for (host, j) in consoles.iter().enumerate() {
                for n in 0..15 {
                    let j = j.clone();
                    tasks.spawn(async move {
                        j.append(
                            &format!("ops@host{host}"),
                            "serve",
                            "qwen",
                            &format!("{host}/{n}"),
                            serde_json::json!({ "n": n }),
                        )
                        .await
                        .unwrap()
                    });
                }
            }
            let mut seqs: Vec<i64> = tasks.join_all().await.iter().map(|e| e.seq).collect();
            seqs.sort_unstable();
            assert_eq!(seqs, (1..=45).collect::<Vec<_>>(), "{:?}", db.backend);
            for j in &consoles {
                assert_eq!(
                    j.verify().await.unwrap(),
                    Verification {
                        entries: 45,
                        broken: None
                    },
                    "{:?}",
                    db.backend
                );
            }
            let reasons: std::collections::BTreeSet<String> = consoles[1]
                .list(None, None, 100)
                .await
                .unwrap()
                .into_iter()
                .map(|e| e.reason)
                .collect();
            assert_eq!(reasons.len(), 45, "{:?}: an entry lost or doubled", db.backend);
        }
    }

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

    /// Issue 11: deleting the newest rows was undetectable and their sequence numbers were
    /// handed out again; a whole-chain rewrite verified. The anchor and the key catch both.
    #[tokio::test]
    async fn truncation_and_a_rewritten_chain_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("j.db")).await.unwrap();
        let key = Some(b"a key kept away from the database".to_vec());
        let j = Journal::new(pool.clone())
            .with_anchor(dir.path().join("journal.head"))
            .with_key(key.clone());
        for i in 0..4 {
            j.append("ops", "serve", "qwen", &format!("r{i}"), serde_json::json!({}))
                .await
                .unwrap();
        }
        assert_eq!(j.verify().await.unwrap().broken, None);
        assert_eq!(j.read_anchor().map(|a| a.seq), Some(4));
        // Someone with the file drops the newest two rows.
        sqlx::query("drop trigger journal_no_delete")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("delete from journal where seq > 2")
            .execute(&pool)
            .await
            .unwrap();
        let v = j.verify().await.unwrap();
        assert!(
            v.broken.as_ref().is_some_and(|(_, why)| why.contains("truncated")),
            "{v:?}"
        );
        // ... and the numbers are not handed out again.
        let unanchored = Journal::new(pool.clone());
        let e = unanchored
            .append("x", "serve", "qwen", "", serde_json::json!({}))
            .await
            .unwrap();
        assert_eq!(e.seq, 5, "AUTOINCREMENT: deleted numbers are not reused");

        // A whole-chain rewrite (every hash recomputed) without the key.
        sqlx::query("drop trigger journal_no_update")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("delete from journal").execute(&pool).await.unwrap();
        // A careful forger also resets the sequence, so no gap gives the rewrite away.
        sqlx::query("delete from sqlite_sequence where name = 'journal'")
            .execute(&pool)
            .await
            .unwrap();
        let forger = Journal::new(pool.clone());
        forger
            .append("ops", "serve", "qwen", "nothing to see", serde_json::json!({}))
            .await
            .unwrap();
        let keyed = Journal::new(pool.clone()).with_key(key);
        let v = keyed.verify().await.unwrap();
        assert_eq!(
            v.broken.as_ref().map(|b| b.0),
            None,
            "unkeyed entries alone: nothing to compare"
        );
        sqlx::query("update journal set mac = 'forged'")
            .execute(&pool)
            .await
            .unwrap();
        let v = keyed.verify().await.unwrap();
        assert!(v.broken.as_ref().is_some_and(|(_, why)| why.contains("MAC")), "{v:?}");
    }

    /// Issue 29: deleting the newest rows and resetting the sequence was reported as
    /// "truncated" only until the next append moved the anchor back, then "intact". Now the
    /// anchor only moves forward, an append refuses while the table does not reach it, and a
    /// missing anchor with entries present is an error; only a restore re-anchors, in the log.
    #[tokio::test]
    async fn the_journal_cannot_be_rewound() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("j.db")).await.unwrap();
        let head = dir.path().join("journal.head");
        let j = Journal::new(pool.clone()).with_anchor(head.clone());
        for i in 0..4 {
            j.append("ops", "serve", "qwen", &format!("r{i}"), serde_json::json!({}))
                .await
                .unwrap();
        }
        for stmt in [
            "drop trigger journal_no_delete",
            "delete from journal where seq > 2",
            "delete from sqlite_sequence where name = 'journal'",
            "insert into sqlite_sequence (name, seq) values ('journal', 2)",
        ] {
            sqlx::query(stmt).execute(&pool).await.unwrap();
        }
        let refused = j
            .append("ops", "serve", "qwen", "cover-up", serde_json::json!({}))
            .await;
        assert!(matches!(refused, Err(JournalError::Rewound(_))), "{refused:?}");
        assert!(j.alarm().await.is_some(), "the console raises it");
        let v = j.verify().await.unwrap();
        assert!(
            v.broken.as_ref().is_some_and(|(_, why)| why.contains("truncated")),
            "still truncated after an append: {v:?}"
        );
        // A writer that went back in time cannot move the anchor back either.
        j.write_anchor(2, "x");
        assert_eq!(j.read_anchor().map(|a| a.seq), Some(4));

        // With the anchor files gone, entries present are an error, not "no check".
        std::fs::remove_file(j.anchor_log().unwrap()).unwrap();
        let _ = std::fs::remove_file(&head);
        let v = j.verify().await.unwrap();
        assert!(
            v.broken.as_ref().is_some_and(|(_, why)| why.contains("anchor")),
            "{v:?}"
        );
        assert!(j
            .append("ops", "serve", "qwen", "", serde_json::json!({}))
            .await
            .is_err());

        // A restore re-anchors explicitly (logged with the file), and appends go on.
        j.reanchor("backup.db sha256:abc").await.unwrap();
        j.append("ops", "restore", "database", "", serde_json::json!({}))
            .await
            .unwrap();
        assert_eq!(j.verify().await.unwrap().broken, None);
        assert!(j.alarm().await.is_none());
        let log = std::fs::read_to_string(j.anchor_log().unwrap()).unwrap();
        assert!(log.contains("backup.db sha256:abc"), "{log}");
    }

    /// Issue 11: a journal write that failed was only logged. Now it is retried, then spooled,
    /// and the next append writes it first.
    #[tokio::test]
    async fn an_entry_the_database_refuses_is_spooled_and_written_later() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.db");
        let pool = crate::db::open(&path).await.unwrap();
        let anchor = dir.path().join("journal.head");
        pool.close().await;
        Journal::new(pool)
            .with_anchor(anchor.clone())
            .record(
                "ops",
                "stop",
                "qwen",
                "while the database was down",
                serde_json::json!({"ok": true}),
            )
            .await;
        assert!(anchor.with_extension("pending.jsonl").exists());
        let j = Journal::new(crate::db::open(&path).await.unwrap()).with_anchor(anchor.clone());
        j.append("ops", "serve", "qwen", "later", serde_json::json!({}))
            .await
            .unwrap();
        let all = j.list(None, None, 10).await.unwrap();
        let kinds: Vec<&str> = all.iter().rev().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["stop", "serve"], "in order, the spooled one first");
        assert_eq!(all[1].detail["spooled"], true);
        assert!(!anchor.with_extension("pending.jsonl").exists());
        assert_eq!(j.verify().await.unwrap().broken, None);
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        assert_eq!(
            hmac_hex(b"Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn profile_diffs_show_removed_and_added_lines() {
        let d = env_diff("A=1\nB=2\n", "A=1\nB=3\nC=4\n");
        assert_eq!(d, vec!["-B=2", "+B=3", "+C=4"]);
    }
}
