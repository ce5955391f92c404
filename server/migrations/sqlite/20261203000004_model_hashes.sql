-- The SHA-256 of model files already hashed, by canonical path, valid while the file's size,
-- modification time, inode and status-change time are unchanged: a second verification of a
-- 140 GB model reads no weights again. The ctime is in the key because anyone who can write
-- the file can also set its mtime back (`touch -d`); nobody sets the ctime.
create table model_hashes (
    path text primary key,
    size integer not null,
    mtime_ns integer not null,
    inode integer not null,
    ctime_ns integer not null,
    sha256 text not null,
    at_ms integer not null
);
