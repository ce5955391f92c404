-- Launch profiles. The body is the profile as JSON (the typed model in app::domain::profile);
-- name is duplicated out of it for lookups and uniqueness.
create table profile (
    profile_id integer primary key,
    name text not null unique,
    body text not null,
    created_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
