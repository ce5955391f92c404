//! `roofline vram` on model directories and against a started (simulated) engine's own
//! "GPU KV cache size" line.

use crate::common::*;

#[test]
fn a_started_engine_agrees_with_the_prediction() {
    let (env, _port) = Env::serving_vllm("v", "");
    let out = env.run(&["vram", "--profile", "v", "--gpu-gib", "80", "--json"]);
    let (stdout, stderr) = str(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let observed = v["observed"]["kv_tokens"]
        .as_u64()
        .expect("the engine logged its KV cache size");
    let predicted = v["report"]["kv_tokens"].as_u64().unwrap();
    let err = v["kv_tokens_error_pct"].as_f64().unwrap();
    assert!(err.abs() < 5.0, "predicted {predicted}, engine {observed}: {err:+.1}%");
    assert_eq!(v["weights_source"], "estimated", "the test model has no safetensors");
    // The start calibrated the calculator: the engine's own memory lines are used, and say so.
    assert!(
        v["report"]["path"].as_str().unwrap().starts_with("calibrated"),
        "{}",
        v["report"]["path"]
    );
    assert!(v["report"]["arithmetic"]
        .to_string()
        .contains("calibrated from the start of v"));
    assert!(err.abs() < 1.0, "calibrated: {err:+.2}%");
    // The monitor can see an engine healthy before the serve loop has cached its version (an
    // empty version file); the calibration key must still be the engine's real version, or a
    // start calibrated then is never found again.
    std::fs::write(env.data().join("state/v/version"), "").unwrap();
    let out = env.run(&["vram", "--profile", "v", "--gpu-gib", "80", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&str(&out).0).unwrap();
    assert!(
        v["report"]["path"].as_str().unwrap().starts_with("calibrated"),
        "version asked from the engine: {}",
        v["report"]["path"]
    );
    let text = str(&env.run(&["vram", "--profile", "v", "--gpu-gib", "80"])).0;
    assert!(
        text.contains("prediction error") && text.contains("verdict: fits"),
        "{text}"
    );
}

#[test]
fn model_directories_with_safetensors_and_bad_input() {
    let env = Env::new();
    let dir = env.model();
    // One safetensors file: 8-byte header length, the JSON header, then (absent) data.
    let header =
        br#"{"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[4096,4096],"data_offsets":[0,16106127360]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    std::fs::write(dir.join("model.safetensors"), &bytes).unwrap();
    let model = dir.to_str().unwrap();
    let vram = |extra: &[&str]| {
        let mut args = vec!["vram", "--model", model, "--gpu-gib", "24"];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    let out = vram(&["--ctx", "131072", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a 128k context does not fit next to 15 GiB of weights on 24 GiB"
    );
    let v: serde_json::Value = serde_json::from_str(&str(&out).0).unwrap();
    assert_eq!(v["weights_source"]["headers"]["files"], 1);
    assert_eq!(v["report"]["verdict"], "kv-too-small");
    assert!((v["report"]["weights_per_gpu_gib"].as_f64().unwrap() - 15.0).abs() < 1e-9);
    // fp8 KV and a shorter context fit.
    let ok = vram(&["--ctx", "16384", "--kv-dtype", "fp8"]);
    assert_eq!(ok.status.code(), Some(0), "{:?}", str(&ok));
    // A header that lies about its length is refused with the file named.
    std::fs::write(dir.join("model.safetensors"), [255u8; 16]).unwrap();
    let bad = vram(&[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(str(&bad).1.contains("model.safetensors"), "{:?}", str(&bad));
    let no_tp = env.run(&[
        "vram",
        "--config",
        dir.join("config.json").to_str().unwrap(),
        "--gpu-gib",
        "24",
        "--tp",
        "0",
    ]);
    assert_eq!(no_tp.status.code(), Some(2));
    assert!(str(&no_tp).1.contains("--tp"));
}

/// The engine page's check reads the same lines through the console (the simulator's GPU).
#[tokio::test(flavor = "multi_thread")]
async fn the_engine_page_compares_the_logged_kv_cache_with_the_prediction() {
    let (env, _port) = Env::serving_vllm("v", "ENV_ROOFLINE_SIM_GPU_GIB=96\n");
    env.add_user("vera", "viewer");
    let port = free_port();
    let _console = Console::start(&env, port);
    eventually(std::time::Duration::from_secs(30), async || console_engines(port).await).await;
    let vera = Session::login(&format!("http://127.0.0.1:{port}"), "vera").await;
    let r = vera.post_fn("get_vram_check", "profile=v").send().await.unwrap();
    let v: serde_json::Value = r.json().await.unwrap();
    assert_eq!(v["gpu_source"], "simulator", "{v}");
    assert_eq!(
        v["gpu_gib"], 96.0,
        "the simulator's GPU size, from the profile's environment"
    );
    let err = v["error_pct"].as_f64().expect("an error against the engine's line");
    assert!(err.abs() < 5.0, "{v}");
    assert!(v["observed"]["kv_tokens"].as_u64().unwrap() > 0);
    // The page's GPU section shows this check when first shown (drawn in the browser:
    // end2end engine_control.spec.ts reads it there).

    // The editor's and the calculator page's prediction: the stored profile, calibrated from
    // the start the monitor saw become healthy; an edit is predicted as written.
    let predicted = eventually(std::time::Duration::from_secs(30), async || {
        let r = vera.post_fn("predict_profile_vram", "profile=v").send().await.ok()?;
        let v: serde_json::Value = r.json().await.ok()?;
        v["calibrated_from_ms"].is_i64().then_some(v)
    })
    .await
    .expect("the monitor calibrated the profile from its start");
    assert_eq!(predicted["report"]["verdict"], "fits", "{predicted}");
    assert_eq!(predicted["gpu_gib"], 96.0);
    let logged = v["observed"]["kv_tokens"].as_f64().unwrap();
    let tokens = predicted["report"]["kv_tokens"].as_f64().unwrap();
    assert!(
        (tokens - logged).abs() / logged < 0.01,
        "calibrated {tokens} against {logged}"
    );
    let active = str(&env.run(&["profile", "export", "v"])).0;
    let tight = format!("{active}\nMEM_FRACTION=0.15\n");
    let r = vera
        .post_fn(
            "predict_profile_vram",
            &format!("profile=v&env_text={}", urlencode(&tight)),
        )
        .send()
        .await
        .unwrap();
    let edited: serde_json::Value = r.json().await.unwrap();
    assert_eq!(edited["report"]["verdict"], "weights-do-not-fit", "{edited}");
    // An edit that does not parse names its field.
    let r = vera
        .post_fn(
            "predict_profile_vram",
            &format!("profile=v&env_text={}", urlencode("MEM_FRACTION=7")),
        )
        .send()
        .await
        .unwrap();
    let body = r.text().await.unwrap();
    assert!(body.contains("MEM_FRACTION") || body.contains("MODEL"), "{body}");
}

/// Issue 11: `roofline vram --config` with a large `hidden_size` panicked on a multiply
/// overflow. A config.json is untrusted: the implausible field is named, exit 2.
#[test]
fn an_implausible_config_is_refused_naming_the_field_not_a_panic() {
    let env = Env::new();
    let cfg = env.data().join("big.json");
    std::fs::write(
        &cfg,
        r#"{"num_hidden_layers": 64, "hidden_size": 1000000000000000, "num_attention_heads": 64, "vocab_size": 32000}"#,
    )
    .unwrap();
    let out = env.run(&["vram", "--config", cfg.to_str().unwrap(), "--gpu-gib", "80"]);
    let (stdout, stderr) = str(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("hidden_size") && !stderr.contains("panicked"),
        "{stderr}"
    );
    // Huge but in-bound values never panic either.
    std::fs::write(
        &cfg,
        r#"{"num_hidden_layers": 4096, "hidden_size": 262144, "num_attention_heads": 16384, "head_dim": 16384, "intermediate_size": 2097152, "num_experts": 16384, "vocab_size": 8388608}"#,
    )
    .unwrap();
    let out = env.run(&[
        "vram",
        "--config",
        cfg.to_str().unwrap(),
        "--gpu-gib",
        "80",
        "--ctx",
        "134217728",
    ]);
    assert!(!str(&out).1.contains("panicked"), "{}", str(&out).1);
}
