-- Each state an engine was seen to enter (the monitor's tick found it different from the last
-- one): the engine page's state timeline. Kept 7 days (pruned by the monitor).
create table engine_state_change (
    engine_state_change_id integer primary key autoincrement,
    profile text not null,
    at_ms integer not null,
    state text not null
);
create index engine_state_change_by_profile on engine_state_change (profile, at_ms);
