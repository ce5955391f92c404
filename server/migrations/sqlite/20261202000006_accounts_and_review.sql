-- Accounts: argon2id PHC strings, never plain passwords.
create table account (
    account_id integer primary key,
    name text not null unique,
    password_hash text not null,
    role text not null check (role in ('viewer', 'operator', 'approver', 'admin')),
    disabled integer not null default 0,
    created_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- Sessions: only the SHA-256 of the cookie's token is stored, so a copy of the database
-- does not sign anybody in. csrf is the token mutating requests must echo in a header.
create table session (
    token_hash text primary key,
    account_id integer not null references account (account_id) on delete cascade,
    csrf text not null,
    created_at integer not null,
    last_seen integer not null
);
create index session_account on session (account_id);

-- The first-run secret that lets one person create the first admin (its hash only).
create table setup_secret (
    id integer primary key check (id = 1),
    secret_hash text not null,
    created_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- Proposed profile changes and their review. base_env is the active profile the change was
-- written against (to detect stale proposals and to roll back to); env is the candidate.
create table profile_change (
    change_id integer primary key,
    profile text not null,
    author text not null,
    state text not null,
    reason text not null,
    base_env text not null,
    env text not null,
    gate_report text,
    created_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    activated_at text
);
create index profile_change_profile on profile_change (profile, change_id);

-- Review comments and state changes, in order.
create table change_event (
    event_id integer primary key,
    change_id integer not null references profile_change (change_id),
    who text not null,
    kind text not null,
    text text not null,
    at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
create index change_event_change on change_event (change_id, event_id);
