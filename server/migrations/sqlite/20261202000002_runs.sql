-- Results of gate steps, kept so runs can be compared across profiles and versions.
create table bench_run (
    bench_run_id integer primary key,
    profile text,
    url text not null,
    model text not null,
    engine_version text,
    params text not null,
    summary text not null,
    created_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
create index bench_run_profile on bench_run (profile, created_at);

create table smoke_run (
    smoke_run_id integer primary key,
    profile text,
    url text not null,
    model text not null,
    passed integer not null,
    report text not null,
    created_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
create index smoke_run_profile on smoke_run (profile, created_at);
