-- Incidents: the evidence captured before anything was touched, the diagnosis, the evidence
-- after the last action, and the postmortem. The timeline is append-only.
create table incident (
    incident_id integer primary key,
    profile text not null,
    opened_by text not null,
    opened_at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    resolved integer not null default 0,
    evidence text not null,
    diagnosis text not null,
    latest text,
    postmortem text not null default '{}'
);
create index incident_profile on incident (profile, resolved);

create table incident_event (
    incident_event_id integer primary key,
    incident_id integer not null references incident (incident_id),
    at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    who text not null,
    entry text not null
);
create index incident_event_incident on incident_event (incident_id, incident_event_id);
