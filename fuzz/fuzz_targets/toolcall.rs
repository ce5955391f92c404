//! An engine's tool-call answer: a JSON body or an SSE stream.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = app::domain::toolcall::from_sse(&text);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        if let Ok(answer) = app::domain::toolcall::from_json(&v) {
            let _ = app::domain::toolcall::parsed_args(&answer);
        }
        let _ = app::domain::toolcall::validate(&v, &v);
    }
});
