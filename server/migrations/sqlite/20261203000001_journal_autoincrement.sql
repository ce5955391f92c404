-- Sequence numbers are never reused: with a plain rowid key SQLite hands the largest deleted
-- number out again, so deleting the newest rows and appending would hide the deletion. Each
-- row also gets room for a MAC (HMAC-SHA256 of its hash under a key from host configuration),
-- which a rewrite of the whole chain without the key cannot forge.
create table journal_v2 (
    seq integer primary key autoincrement,
    at text not null default (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    who text not null,
    kind text not null,
    subject text not null,
    reason text not null,
    detail text not null,
    prev_hash text not null,
    hash text not null,
    mac text
);
insert into journal_v2 (seq, at, who, kind, subject, reason, detail, prev_hash, hash)
    select seq, at, who, kind, subject, reason, detail, prev_hash, hash from journal order by seq;
drop table journal;
alter table journal_v2 rename to journal;
create index journal_subject on journal (subject, seq);
create trigger journal_no_update before update on journal
begin
    select raise(abort, 'the journal is append-only');
end;
create trigger journal_no_delete before delete on journal
begin
    select raise(abort, 'the journal is append-only');
end;
