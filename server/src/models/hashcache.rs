//! Hashes already computed, in SQLite, keyed by canonical path and valid while size, mtime,
//! inode and ctime match: a file replaced or rewritten in place is hashed again, even when
//! its mtime was set back (writing a file or setting its mtime moves its ctime).

use std::path::Path;

/// A file's identity for the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileId {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub inode: u64,
    pub ctime_ns: i64,
}

impl FileId {
    /// Reads the identity of a regular file (following a link, as reading it does).
    pub fn of(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok(Self {
            path: path.canonicalize()?.to_string_lossy().into_owned(),
            size: m.len(),
            mtime_ns: m.mtime().saturating_mul(1_000_000_000).saturating_add(m.mtime_nsec()),
            inode: m.ino(),
            ctime_ns: m.ctime().saturating_mul(1_000_000_000).saturating_add(m.ctime_nsec()),
        })
    }
}

#[derive(Clone)]
pub struct HashCache {
    pool: crate::db::Pool,
}

impl HashCache {
    pub fn new(pool: crate::db::Pool) -> Self {
        Self { pool }
    }

    /// The cached hash if the file is unchanged since it was hashed.
    pub async fn get(&self, id: &FileId) -> Option<String> {
        if crate::db::away() {
            return None;
        }
        sqlx::query_scalar::<_, String>(
            "select sha256 from model_hashes where path = $1 and size = $2 and mtime_ns = $3 and inode = $4 and ctime_ns = $5",
        )
        .bind(&id.path)
        .bind(id.size as i64)
        .bind(id.mtime_ns)
        .bind(id.inode as i64)
        .bind(id.ctime_ns)
        .fetch_optional(&self.pool)
        .await
        .ok()
        .flatten()
    }

    pub async fn put(&self, id: &FileId, sha256: &str) -> Result<(), sqlx::Error> {
        if crate::db::away() {
            return Ok(());
        }
        let now = crate::clock::now_ms();
        sqlx::query(
            "insert into model_hashes (path, size, mtime_ns, inode, ctime_ns, sha256, at_ms) values ($1, $2, $3, $4, $5, $6, $7)
             on conflict (path) do update set size = excluded.size, mtime_ns = excluded.mtime_ns,
             inode = excluded.inode, ctime_ns = excluded.ctime_ns, sha256 = excluded.sha256, at_ms = excluded.at_ms",
        )
        .bind(&id.path)
        .bind(id.size as i64)
        .bind(id.mtime_ns)
        .bind(id.inode as i64)
        .bind(id.ctime_ns)
        .bind(sha256)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
