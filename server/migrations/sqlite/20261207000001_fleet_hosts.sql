-- The consoles sharing this database (issue 16: a fleet of hosts on one PostgreSQL; on SQLite,
-- the one host), each with where its console is reached, its facts (GPUs, engine
-- installations, version) and a heartbeat: a host whose heartbeat is old is unreachable.
create table host (
    name text primary key,
    console_id text not null,
    url text not null,
    facts text not null,
    started_ms integer not null,
    heartbeat_ms integer not null
);

-- Each host's engines as its collector last saw them (an EngineStatus as JSON), written at
-- the scrape interval: every console's fleet page reads the other hosts' rows here.
create table engine_live (
    host text not null,
    profile text not null,
    status text not null,
    at_ms integer not null,
    primary key (host, profile)
);

-- An action on an engine of another host, queued by the requester's console and claimed,
-- performed and completed by the owner's. `claimed_by` is the claiming console's run (a new
-- one each start): a job still running when its host's console starts again failed there.
create table job (
    job_id integer primary key autoincrement,
    host text not null,
    profile text not null,
    action text not null,
    requested_by text not null,
    requested_on text not null,
    reason text not null,
    state text not null check (state in ('queued', 'running', 'done', 'failed')),
    outcome text,
    created_ms integer not null,
    claimed_ms integer,
    claimed_by text,
    finished_ms integer
);
create index job_queue on job (host, state, job_id);

insert into record_version (kind, version) values ('jobs', 0) on conflict (kind) do nothing;
create trigger record_version_job_insert after insert on job
begin update record_version set version = version + 1 where kind = 'jobs'; end;
create trigger record_version_job_update after update on job
begin update record_version set version = version + 1 where kind = 'jobs'; end;
