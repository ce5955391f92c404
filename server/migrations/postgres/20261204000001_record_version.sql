-- A version per kind of record a page shows live, bumped by triggers on every write to the
-- tables behind it: a write by any console sharing this database reaches every open page.
create table record_version (
    kind text primary key,
    version bigint not null
);
insert into record_version (kind, version) values ('incidents', 0), ('changes', 0);

create function record_version_bump() returns trigger language plpgsql as $$
begin
    update record_version set version = version + 1 where kind = TG_ARGV[0];
    return null;
end;
$$;
create trigger record_version_incident after insert or update or delete on incident
    for each row execute function record_version_bump('incidents');
create trigger record_version_incident_event_insert after insert on incident_event
    for each row execute function record_version_bump('incidents');
create trigger record_version_change after insert or update or delete on profile_change
    for each row execute function record_version_bump('changes');
create trigger record_version_change_event_insert after insert on change_event
    for each row execute function record_version_bump('changes');
