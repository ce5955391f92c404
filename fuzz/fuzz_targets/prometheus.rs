//! Prometheus text from an engine's `/metrics`: parse and normalise, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parsed = app::domain::prometheus::parse(&text);
    let _ = app::domain::signals::normalise(&parsed.samples);
});
