//! An installed engine's `--help` output.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let set = app::domain::help_flags::parse_help(&String::from_utf8_lossy(data));
    let _ = set.bad_values(&["--tool-call-parser".to_string(), "x".to_string()]);
});
