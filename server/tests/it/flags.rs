//! `roofline flags` against the installed engine's own `--help` (the simulator installation).

use crate::common::*;

#[test]
fn unknown_profile_flags_are_reported_with_the_closest_name() {
    let env = Env::new();
    // A flag the installed engine does not know is refused on import (the launch policy); a
    // profile stored before the engine changed under it is what `flags` finds.
    let text = format!(
        "ENGINE=sim-vllm\nMODEL={}\nPORT={}\nEXTRA_ARGS='--max-model-length 10 --enable-prefix-caching'\n",
        env.model().display(),
        free_port()
    );
    let path = env.data().join("f.env");
    std::fs::write(&path, &text).unwrap();
    let refused = env.run(&["profile", "import", path.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("closest: --max-model-len"),
        "{:?}",
        str(&refused)
    );
    env.store_unchecked("f", &text);
    let out = env.run(&["flags", "--profile", "f", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", str(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "0.33.0");
    assert_eq!(
        v["unknown"],
        serde_json::json!([{"flag": "--max-model-length", "suggestion": "--max-model-len"}])
    );
    // The parsed help is cached per installation and version.
    assert!(env.data().join("cache/flags/sim-vllm-0.33.0.json").exists());

    let q = env.run(&["flags", "--profile", "f", "--query", "max-model-len"]);
    assert!(q.status.success());
    let (text, _) = str(&q);
    assert!(
        text.contains("--max-model-len MAX_MODEL_LEN: supported by sim-vllm 0.33.0"),
        "{text}"
    );
    assert!(text.contains("group: ModelConfig"));
    let q = env.run(&["flags", "--profile", "f", "--query", "--context-length"]);
    assert_eq!(q.status.code(), Some(1));

    env.sglang_profile("g", free_port(), "KV_CACHE_DTYPE=fp8\n");
    let out = env.run(&["flags", "--profile", "g", "--json"]);
    assert!(
        out.status.success(),
        "fp8 is rendered as SGLang's fp8_e4m3: {:?}",
        str(&out)
    );

    // A parser name the installed engine does not list is a bad value, with the closest one.
    env.vllm_profile("typo", free_port(), "REASONING_PARSER=qwen3\n");
    let p = env.data().join("typo.env");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("TOOL_CALL_PARSER=hermes", "TOOL_CALL_PARSER=hermess");
    std::fs::write(&p, text).unwrap();
    assert!(env.run(&["profile", "import", p.to_str().unwrap()]).status.success());
    let out = env.run(&["flags", "--profile", "typo"]);
    assert_eq!(out.status.code(), Some(1));
    let (text, _) = str(&out);
    assert!(
        text.contains("BAD VALUE --tool-call-parser hermess (closest: hermes"),
        "{text}"
    );
}
