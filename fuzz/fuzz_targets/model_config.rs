//! A model's `config.json` and a safetensors index: read, then the calculator on what was read.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = app::domain::vram::index_total_size(&text);
    if let Ok(shape) = app::domain::vram::parse_config(&text) {
        let inputs = app::domain::vram::Inputs {
            weights_bytes: 1 << 34,
            gpu_gib: 80.0,
            tp: 1,
            util: 0.9,
            ctx: 32768,
            kv_dtype: Default::default(),
            concurrency: Some(8),
            activation_gib: None,
            non_torch_gib: 1.0,
        };
        let _ = app::domain::vram::calculate(&shape, &inputs);
    }
});
