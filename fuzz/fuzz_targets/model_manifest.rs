//! A model directory's SHA256SUMS and safetensors index (files copied in from elsewhere).
#![no_main]
use app::domain::modelcheck;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(entries) = modelcheck::parse_manifest(&text) {
        for (path, hash) in &entries {
            assert!(modelcheck::check_relative(path).is_ok());
            assert_eq!(hash.len(), 64);
        }
    }
    if let Ok(shards) = modelcheck::index_shards(&text) {
        assert!(shards.keys().all(|k| modelcheck::check_relative(k).is_ok()));
    }
});
