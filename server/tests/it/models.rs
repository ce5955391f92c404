//! Model directories against the runtime runbook's air-gap rules: `roofline model manifest`
//! on the sending side (checked by the real `sha256sum -c`), `roofline model verify` with its
//! progress and its cache, each defect named by file, `verify = "require"` refusing to serve,
//! and the Models page's verification over HTTP.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

const CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "vocab_size": 128256}"#;
const SHARD1: &str = "model-00001-of-00002.safetensors";
const SHARD2: &str = "model-00002-of-00002.safetensors";

/// A safetensors file: 8-byte header length, the header, then the tensors' bytes.
fn shard(path: &Path, tensors: &[(&str, u64)]) {
    let mut header = serde_json::Map::new();
    header.insert("__metadata__".into(), serde_json::json!({"format": "pt"}));
    let mut at = 0u64;
    for (name, bytes) in tensors {
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": "BF16", "shape": [bytes / 2], "data_offsets": [at, at + bytes]}),
        );
        at += bytes;
    }
    let h = serde_json::Value::Object(header).to_string();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(h.as_bytes());
    out.extend((0..at).map(|i| (i % 251) as u8));
    std::fs::write(path, out).unwrap();
}

/// A complete model directory as a Hugging Face download has it.
fn good_model(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("config.json"), CONFIG).unwrap();
    std::fs::write(dir.join("tokenizer.json"), r#"{"version": "1.0"}"#).unwrap();
    std::fs::write(
        dir.join("tokenizer_config.json"),
        r#"{"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}"#,
    )
    .unwrap();
    std::fs::write(dir.join("generation_config.json"), r#"{"temperature": 0.6}"#).unwrap();
    shard(&dir.join(SHARD1), &[("a", 4096), ("b", 4096)]);
    shard(&dir.join(SHARD2), &[("c", 3 << 20)]);
    std::fs::write(
        dir.join("model.safetensors.index.json"),
        format!(r#"{{"metadata": {{"total_size": {}}}, "weight_map": {{"a": "{SHARD1}", "b": "{SHARD1}", "c": "{SHARD2}"}}}}"#, 8192 + (3 << 20)),
    )
    .unwrap();
    dir.to_path_buf()
}

fn verify_json(env: &Env, dir: &Path) -> (Option<i32>, serde_json::Value, String) {
    let out = env.run(&["model", "verify", dir.to_str().unwrap(), "--json"]);
    let (stdout, stderr) = str(&out);
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (out.status.code(), v, stderr)
}

fn codes(v: &serde_json::Value) -> Vec<(String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["file"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_manifest_written_here_checks_with_sha256sum_and_a_second_verify_is_cached() {
    let env = Env::new();
    let dir = good_model(&env.data().join("models/good"));
    let out = env.run(&["model", "manifest", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{:?}", str(&out));
    // The format is sha256sum's own: the coreutils tool checks it.
    let check = std::process::Command::new("sha256sum")
        .args(["-c", "--quiet", "SHA256SUMS"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(check.status.success(), "{:?}", String::from_utf8_lossy(&check.stdout));

    let (code, v, stderr) = verify_json(&env, &dir);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["manifest"], true);
    assert_eq!(codes(&v), vec![], "a complete directory has nothing to say");
    assert_eq!(v["hashed_files"], 7, "{v}");
    assert!(
        stderr.contains("hashing: 100%"),
        "the progress reaches the terminal: {stderr}"
    );
    // Unchanged files are answered from the cache: nothing is read again.
    let (code, v, _) = verify_json(&env, &dir);
    assert_eq!(code, Some(0));
    assert_eq!(
        (v["hashed_files"].as_u64(), v["cached_files"].as_u64()),
        (Some(0), Some(7)),
        "{v}"
    );
    // A file rewritten in place (same size, new mtime) is hashed again and caught.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(dir.join("config.json"), CONFIG.replace("4096", "4097")).unwrap();
    let (code, v, _) = verify_json(&env, &dir);
    assert_eq!(code, Some(1));
    assert!(
        codes(&v).contains(&("hash-mismatch".into(), "config.json".into())),
        "{v}"
    );
    assert_eq!(v["hashed_files"], 1, "{v}");
}

#[test]
fn each_defect_is_named_by_its_file() {
    let env = Env::new();
    let root = env.data().join("models");
    type Defect = fn(&Path);
    let cases: [(&str, Defect, &str, &str); 7] = [
        (
            "no-tokenizer",
            |d| std::fs::remove_file(d.join("tokenizer.json")).unwrap(),
            "missing",
            "tokenizer.json",
        ),
        (
            "pickle",
            |d| std::fs::write(d.join("pytorch_model.bin"), b"\x80\x02}q\x00.").unwrap(),
            "pickle",
            "pytorch_model.bin",
        ),
        (
            "truncated",
            |d| {
                let f = std::fs::OpenOptions::new().write(true).open(d.join(SHARD2)).unwrap();
                let len = f.metadata().unwrap().len();
                f.set_len(len - 100).unwrap();
            },
            "shard-size",
            SHARD2,
        ),
        (
            "wrong-hash",
            |d| std::fs::write(d.join("generation_config.json"), r#"{"temperature": 0.7}"#).unwrap(),
            "hash-mismatch",
            "generation_config.json",
        ),
        (
            "escape",
            |d| std::os::unix::fs::symlink("/etc/hostname", d.join("extra.json")).unwrap(),
            "link-outside",
            "extra.json",
        ),
        (
            "no-template",
            |d| std::fs::write(d.join("tokenizer_config.json"), r#"{"model_max_length": 8192}"#).unwrap(),
            "no-chat-template",
            "tokenizer_config.json",
        ),
        (
            "lost-shard",
            |d| std::fs::remove_file(d.join(SHARD1)).unwrap(),
            "shard-missing",
            SHARD1,
        ),
    ];
    for (name, defect, code, file) in cases {
        let dir = good_model(&root.join(name));
        let out = env.run(&["model", "manifest", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {:?}", str(&out));
        defect(&dir);
        let (exit, v, _) = verify_json(&env, &dir);
        assert_eq!(exit, Some(1), "{name}: {v}");
        assert!(
            codes(&v).contains(&(code.to_string(), file.to_string())),
            "{name}: expected {code} on {file}: {v}"
        );
    }
    // A directory that is not there is a usage error, not a report.
    let out = env.run(&["model", "verify", root.join("nowhere").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{:?}", str(&out));
    // A manifest that lists a path out of the directory is refused at its line.
    let dir = good_model(&root.join("bad-manifest"));
    std::fs::write(
        dir.join("SHA256SUMS"),
        format!("{}  ../../roofline.toml\n", "0".repeat(64)),
    )
    .unwrap();
    let (_, v, _) = verify_json(&env, &dir);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "manifest")
        .cloned()
        .unwrap();
    assert!(f["detail"].as_str().unwrap().contains("line 1"), "{f}");
}

#[test]
fn a_host_that_requires_verified_models_refuses_to_serve_an_unverified_one() {
    let env = Env::with_extra_config("verify = \"require\"\n");
    // The test model has a config.json only.
    env.vllm_profile("raw", free_port(), "");
    let out = env.run(&["serve", "--profile", "raw"]);
    let (stdout, stderr) = str(&out);
    assert_ne!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stderr.contains("not verified") && stderr.contains("tokenizer.json"),
        "{stderr}"
    );
    assert_eq!(env.status("raw")["state"], "stopped");
    // Complete, but no manifest yet: still refused; with one, it serves.
    let good = good_model(&env.data().join("models/good"));
    let text = str(&env.run(&["profile", "export", "raw"]))
        .0
        .replace(env.model().to_str().unwrap(), good.to_str().unwrap());
    env.profile("good", &text);
    let out = env.run(&["serve", "--profile", "good"]);
    assert!(str(&out).1.contains("SHA256SUMS"), "{:?}", str(&out));
    assert_eq!(
        env.run(&["model", "manifest", good.to_str().unwrap()]).status.code(),
        Some(0)
    );
    env.serve_ok("good");
    let _ = env.run(&["stop", "--profile", "good"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_models_page_verifies_with_progress_and_journals_it() {
    let env = Env::new();
    for (n, r) in [("alice", "operator"), ("vera", "viewer")] {
        env.add_user(n, r);
    }
    let dir = good_model(&env.data().join("models/good"));
    assert_eq!(
        env.run(&["model", "manifest", dir.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let port = free_port();
    let _console = Console::start(&env, port);
    let base = format!("http://127.0.0.1:{port}");
    eventually(Duration::from_secs(30), async || {
        reqwest::get(format!("{base}/login")).await.ok().map(|_| ())
    })
    .await;
    let alice = Session::login(&base, "alice").await;
    let vera = Session::login(&base, "vera").await;
    let (status, _) = vera.call("start_model_verify", "name=good").await;
    assert_eq!(status, 403, "viewers read results, they do not start checks");
    for bad in ["..", "good%2F..%2F..", ""] {
        let (status, body) = alice.call("start_model_verify", &format!("name={bad}")).await;
        assert!(status >= 400, "{bad}: {body}");
    }
    let (status, body) = alice.call("start_model_verify", "name=good").await;
    assert_eq!(status, 200, "{body}");
    let done = eventually(Duration::from_secs(60), async || {
        let r = vera.post_fn("get_model_verify", "name=good").send().await.ok()?;
        let v: serde_json::Value = r.json().await.ok()?;
        (v["running"] == false && !v["report"].is_null()).then_some(v)
    })
    .await
    .expect("the verification finishes");
    assert_eq!(done["report"]["manifest"], true, "{done}");
    assert_eq!(
        done["progress"]["done_bytes"], done["progress"]["total_bytes"],
        "{done}"
    );
    assert!(done["progress"]["total_bytes"].as_u64().unwrap() > 3 << 20);
    let journal = text(alice.get("/api/journal.json?query=model-verified")).await;
    assert!(journal.contains("\"alice\"") && journal.contains("good"), "{journal}");
    let html = text(vera.get("/models")).await;
    assert!(html.contains("data-testid=\"model\""), "the page lists the directory");
}

/// Under `verify = "require"` a change that points a running profile at an unverified model
/// directory fails its gate at the model step, before the active engine is touched.
#[tokio::test(flavor = "multi_thread")]
async fn a_gate_refuses_an_unverified_model_before_touching_the_engine() {
    let env = Env::with_extra_config("verify = \"require\"\n");
    for (n, r) in [("alice", "operator"), ("bob", "approver")] {
        env.add_user(n, r);
    }
    let good = good_model(&env.data().join("models/good"));
    assert_eq!(
        env.run(&["model", "manifest", good.to_str().unwrap()]).status.code(),
        Some(0)
    );
    env.vllm_profile("ed", free_port(), "");
    let active = str(&env.run(&["profile", "export", "ed"]))
        .0
        .replace(env.model().to_str().unwrap(), good.to_str().unwrap());
    env.profile("ed", &active);
    env.serve_ok("ed");
    let pid = env.status("ed")["pid"].clone();
    let port = free_port();
    let _console = Console::start(&env, port);
    eventually(Duration::from_secs(30), async || console_engines(port).await).await;
    let base = format!("http://127.0.0.1:{port}");
    let alice = Session::login(&base, "alice").await;
    let bob = Session::login(&base, "bob").await;
    let raw = active.replace(good.to_str().unwrap(), env.model().to_str().unwrap());
    let (status, body) = alice
        .call(
            "propose_change",
            &format!(
                "profile=ed&env_text={}&reason=the+new+weights&submit=true",
                urlencode(&raw)
            ),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id: i64 = body.trim().parse().unwrap();
    let (status, body) = review(&bob, id, true, "").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = alice.call("start_change_gate", &format!("id={id}")).await;
    assert_eq!(status, 200, "{body}");
    let done = settle(&alice, id).await;
    assert_eq!(done["summary"]["state"], "gate-failed", "{done}");
    let steps = done["gate"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{done}");
    assert_eq!(steps[0]["name"], "model");
    assert_eq!(steps[0]["pass"], false);
    assert_eq!(steps[0]["key"], "change-gate-model-failed");
    assert!(steps[0]["detail"].to_string().contains("findings"), "{done}");
    assert!(
        done["gate"]["steps"][0]["args"].to_string().contains("tokenizer.json"),
        "{done}"
    );
    assert_eq!(env.status("ed")["pid"], pid, "the active engine was not touched");
    let _ = env.run(&["stop", "--profile", "ed"]);
}
