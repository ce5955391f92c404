-- The SHA-256 of model files already hashed, by canonical path, valid while the file's size,
-- modification time and inode are unchanged: a second verification of a 140 GB model reads
-- no weights again.
create table model_hashes (
    path text primary key,
    size integer not null,
    mtime_ns integer not null,
    inode integer not null,
    sha256 text not null,
    at_ms integer not null
);
