//! A safetensors header (the JSON at the start of a weights file).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = app::domain::vram::safetensors_bytes(&String::from_utf8_lossy(data));
});
