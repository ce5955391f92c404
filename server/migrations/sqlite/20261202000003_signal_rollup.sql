-- One-minute rollups of each engine's signals (a JSON `Point`), kept for 24 hours so the
-- charts' 1 h and 24 h ranges survive a console restart. Pruned by the console.
CREATE TABLE signal_rollup (
    profile TEXT NOT NULL,
    minute INTEGER NOT NULL,
    point TEXT NOT NULL,
    PRIMARY KEY (profile, minute)
) WITHOUT ROWID;
