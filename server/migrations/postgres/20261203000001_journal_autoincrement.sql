-- SQLite needed AUTOINCREMENT so sequence numbers are never reused; a PostgreSQL identity
-- never hands a number out twice. Both gain the MAC column here.
alter table journal add column mac text;
