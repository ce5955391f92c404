-- A version per kind of record a page shows live (incidents, profile changes with their gates),
-- bumped by triggers on every write to the tables behind it. The console's event stream
-- watches this one small table, so a write by any process (the console, the CLI, a gate
-- runner) reaches every open page without each page polling its own query.
create table record_version (
    kind text primary key,
    version integer not null
);
insert into record_version (kind, version) values ('incidents', 0), ('changes', 0);

create trigger record_version_incident_insert after insert on incident
begin update record_version set version = version + 1 where kind = 'incidents'; end;
create trigger record_version_incident_update after update on incident
begin update record_version set version = version + 1 where kind = 'incidents'; end;
create trigger record_version_incident_delete after delete on incident
begin update record_version set version = version + 1 where kind = 'incidents'; end;
create trigger record_version_incident_event_insert after insert on incident_event
begin update record_version set version = version + 1 where kind = 'incidents'; end;

create trigger record_version_change_insert after insert on profile_change
begin update record_version set version = version + 1 where kind = 'changes'; end;
create trigger record_version_change_update after update on profile_change
begin update record_version set version = version + 1 where kind = 'changes'; end;
create trigger record_version_change_delete after delete on profile_change
begin update record_version set version = version + 1 where kind = 'changes'; end;
create trigger record_version_change_event_insert after insert on change_event
begin update record_version set version = version + 1 where kind = 'changes'; end;
