-- Every start of a profile's engine: when each phase began (seconds from the launch) and how
-- the start ended. The median of past phases is the yardstick for "stalled in <phase>".
create table startup_run (
    startup_run_id integer primary key autoincrement,
    profile text not null,
    started_at_ms integer not null,
    outcome text not null check (outcome in ('ready', 'failed', 'timeout')),
    phases text not null
);
create index startup_run_profile on startup_run (profile, startup_run_id);
