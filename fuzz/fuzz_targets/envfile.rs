//! A profile file (`KEY=VALUE`, shell-like quoting): parse, validate, the launch policy, and
//! the canonical form reads back to an equal profile.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = app::domain::envfile::parse(&text);
    if let Ok((p, _)) = app::domain::profile::Profile::from_env("fuzz", &text) {
        let again = app::domain::profile::Profile::from_env("fuzz", &p.to_env()).map(|(q, _)| q);
        assert_eq!(again.ok().as_ref(), Some(&p), "canonical form does not read back");
    }
});
