create table signal_rollup (
    profile text not null,
    minute bigint not null,
    point text not null,
    primary key (profile, minute)
);
