-- The sets each profile started well on (the launch procedure's step 6): engine version,
-- torch, the CUDA it was built with, the NVIDIA driver, the image digest of a container
-- installation, and the gate's bench once one ran on it. The newest row is the pinned set.
create table known_good (
    id integer primary key autoincrement,
    profile text not null,
    install text not null,
    at_ms integer not null,
    facts text not null,
    image_digest text,
    bench text
);
create index known_good_profile on known_good (profile, id);
