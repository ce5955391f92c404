-- Self-calibration of the VRAM calculator: what each start of an engine measured (activation,
-- the rest of the engine's overhead, weights, KV pool), per GPU model, engine version, model
-- and TP. Predictions for the same four use the latest start before them.
create table vram_calibration (
    vram_calibration_id integer primary key autoincrement,
    gpu_name text not null,
    engine_version text not null,
    model text not null,
    tp integer not null,
    at_ms integer not null,
    profile text not null,
    calibration text not null
);
create index vram_calibration_key on vram_calibration (gpu_name, engine_version, model, tp, at_ms);
