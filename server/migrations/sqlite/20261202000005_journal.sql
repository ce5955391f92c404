-- The change journal: append-only, hash-chained. Each row's hash covers the previous row's
-- hash and its own fields, so an edited or deleted row breaks the chain (`roofline journal
-- verify`). The triggers stop accidental edits; the chain makes deliberate ones evident.
create table journal (
    seq integer primary key,
    at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    who text not null,
    kind text not null,
    subject text not null,
    reason text not null,
    detail text not null,
    prev_hash text not null,
    hash text not null
);
create index journal_subject on journal (subject, seq);
create trigger journal_no_update before update on journal
begin
    select raise(abort, 'the journal is append-only');
end;
create trigger journal_no_delete before delete on journal
begin
    select raise(abort, 'the journal is append-only');
end;
