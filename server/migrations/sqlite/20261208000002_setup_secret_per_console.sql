-- The first-admin secret, one per console: on a fleet sharing one database each console that
-- starts with no accounts prints its own, and any of them creates the first admin (one table
-- row for the whole fleet meant only the last console's printed secret worked).
drop table if exists setup_secret;
create table setup_secret (
    console text primary key,
    secret_hash text not null,
    created_at text not null
);
