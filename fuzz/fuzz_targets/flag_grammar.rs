//! Any flag value against every grammar of the launch policy (`app::domain::flag_grammar`):
//! never panics, and a value that passes reaches only paths inside the root.
#![no_main]
use app::domain::flag_grammar::{check, inside_root, Places, Reaches, EVERY};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let v = String::from_utf8_lossy(data);
    let places = Places { root: Some("/models"), hosts: &[] };
    for g in EVERY {
        let mut reaches = Reaches::default();
        if check(*g, &v, &places, &mut reaches).is_ok() {
            for p in &reaches.paths {
                assert!(inside_root(p, "/models"), "{g:?} {v:?} reached {p}");
            }
        }
    }
});
