create table model_hashes (
    path text primary key,
    size bigint not null,
    mtime_ns bigint not null,
    inode bigint not null,
    ctime_ns bigint not null,
    sha256 text not null,
    at_ms bigint not null
);
