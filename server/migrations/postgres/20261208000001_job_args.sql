-- What some job actions need besides the engine (a bench's parameters, the change whose gate
-- runs), as JSON, and what the job made (the incident of an evidence job, a stored run).
alter table job add column args text not null default '{}';
alter table job add column result_id bigint;
