//! An Alertmanager webhook payload (what `/api/alerts/alertmanager` receives).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        let alerts = app::domain::incident::alerts_of(&v);
        assert!(alerts.len() <= 100);
    }
});
