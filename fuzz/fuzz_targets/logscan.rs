//! An engine log: the startup-failure table and the investigator.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = app::domain::logscan::investigate(&text, false);
    let _ = app::domain::startup_failure::classify(text.lines());
    let _ = app::domain::vram::observed(&text);
});
