//! Profiles cannot choose what runs or load code (issue 11): refused on import with the field
//! named, refused at serve even when such a profile is already stored, allowed where the host
//! configuration allows it for an installation.

use crate::common::*;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `roofline profile import` of a profile `name` for `engine` on the test model with these
/// extra lines.
fn import_profile(env: &Env, name: &str, engine: &str, extra: &str) -> std::process::Output {
    let path = env.data().join(format!("{name}.env"));
    std::fs::write(
        &path,
        format!(
            "ENGINE={engine}\nMODEL={}\nPORT={}\n{extra}\n",
            env.model().display(),
            free_port()
        ),
    )
    .unwrap();
    env.run(&["profile", "import", path.to_str().unwrap()])
}

#[test]
fn an_import_that_loads_code_or_moves_the_listener_is_refused_field_by_field() {
    let env = Env::new();
    let path = env.data().join("evil.env");
    std::fs::write(
        &path,
        format!(
            "ENGINE=sim-vllm\nMODEL={}\nPORT={}\nENV_LD_PRELOAD=/tmp/x.so\nENV_PATH=/tmp\n\
             EXTRA_ARGS='--tool-parser-plugin /tmp/p.py --trust-remote-code --host 0.0.0.0'\n\
             SPECULATIVE_CONFIG='{{\"method\":\"eagle3\",\"model\":\"/tmp/draft\"}}'\n",
            env.model().display(),
            free_port()
        ),
    )
    .unwrap();
    let out = env.run(&["profile", "import", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    for want in [
        "ENV_LD_PRELOAD",
        "ENV_PATH",
        "--tool-parser-plugin",
        "--trust-remote-code",
        "--host 0.0.0.0",
        "SPECULATIVE_CONFIG",
        "/tmp/draft",
    ] {
        assert!(err.contains(want), "{want} not named in:\n{err}");
    }
    // Each message names the file and line, as a compiler would.
    assert!(err.contains("evil.env:4: error: ENV_LD_PRELOAD"), "{err}");
    assert!(env.run(&["profile", "show", "evil"]).status.code() == Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stored_profile_that_loads_code_does_not_start() {
    let env = Env::new();
    let port = free_port();
    // Stored behind the import's back (an older console, a hand-edited database).
    {
        let data = server::config::DataDir::open(env.data()).unwrap();
        let store = server::profile_store::ProfileStore::new(server::db::open(&data.db_path()).await.unwrap());
        let text = format!(
            "ENGINE=sim-vllm\nMODEL={}\nPORT={port}\nEXTRA_ARGS='--port 1 --trust-remote-code'\n",
            env.model().display()
        );
        let (p, _) = app::domain::profile::Profile::from_env("stale", &text).unwrap();
        store.upsert(&p).await.unwrap();
    }
    let out = env.run(&["serve", "--profile", "stale"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("refused"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--trust-remote-code"), "{}", stderr(&out));
    assert_eq!(env.status("stale")["state"], "stopped");
}

#[test]
fn the_host_can_allow_a_code_flag_for_an_installation_and_more_environment() {
    let env = Env::new();
    let config = env.data().join("roofline.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[launch]\nallow_env = [\"MY_KNOB\"]\n\n[engines.sim-trusting]\nkind = \"vllm\"\nsimulator = true\nallow_flags = [\"--trust-remote-code\"]\n");
    std::fs::write(&config, text).unwrap();
    let port = free_port();
    env.profile(
        "trusted",
        &format!(
            "ENGINE=sim-trusting\nMODEL={}\nPORT={port}\nENV_MY_KNOB=1\nEXTRA_ARGS=--trust-remote-code\n",
            env.model().display()
        ),
    );
    // The same flag on an installation that does not allow it is refused.
    let path = env.data().join("untrusted.env");
    std::fs::write(
        &path,
        format!(
            "ENGINE=sim-vllm\nMODEL={}\nPORT={port}\nEXTRA_ARGS=--trust-remote-code\n",
            env.model().display()
        ),
    )
    .unwrap();
    assert_eq!(
        env.run(&["profile", "import", path.to_str().unwrap()]).status.code(),
        Some(2)
    );
}

/// Issue 29, item 1: the engines' argparse takes any unambiguous prefix of a flag, so a
/// shortened code-loading flag is that flag. Each is refused on import, naming the word as
/// written and the flag argparse would read it as; so is a flag the installed engine does not
/// know, and an environment variable outside the engine's explicit list (no `VLLM_*` wildcard).
#[test]
fn a_shortened_flag_or_a_wildcard_environment_name_cannot_load_code() {
    let env = Env::new();
    let import = |name: &str, engine: &str, extra: &str| import_profile(&env, name, engine, extra);
    for (i, (engine, extra, named)) in [
        ("sim-vllm", "EXTRA_ARGS=--trust-remote", "--trust-remote-code"),
        ("sim-vllm", "EXTRA_ARGS=--trust_remote_cod", "--trust-remote-code"),
        (
            "sim-vllm",
            "EXTRA_ARGS='--worker-extension a.B'",
            "--worker-extension-cls",
        ),
        ("sim-vllm", "EXTRA_ARGS='--logits-proc a.b'", "--logits-processors"),
        (
            "sim-vllm",
            "EXTRA_ARGS='--enable-prefix-cach'",
            "--enable-prefix-caching",
        ),
        (
            "sim-vllm",
            "EXTRA_ARGS='--no-such-flag-at-all 1'",
            "--no-such-flag-at-all",
        ),
        (
            "sim-sglang",
            "EXTRA_ARGS=--enable-custom-logit",
            "--enable-custom-logit-processor",
        ),
        ("sim-vllm", "ENV_VLLM_SERVER_DEV_MODE=1", "ENV_VLLM_SERVER_DEV_MODE"),
        (
            "sim-vllm",
            "ENV_VLLM_ALLOW_INSECURE_SERIALIZATION=1",
            "ENV_VLLM_ALLOW_INSECURE_SERIALIZATION",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let out = import(&format!("short{i}"), engine, extra);
        assert_eq!(out.status.code(), Some(2), "{extra} was accepted: {}", stderr(&out));
        assert!(
            stderr(&out).contains(named),
            "{extra}: {named} not named in {}",
            stderr(&out)
        );
    }
    // Full names that load nothing, an alias the engine lists, a negation, and a size whose
    // name has CACHE in it are fine.
    let out = import(
        "fine",
        "sim-vllm",
        "EXTRA_ARGS='--enable-prefix-caching -O3 --no-trust-remote-code --seed 1'\nENV_VLLM_CPU_KVCACHE_SPACE=4",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The host lists more environment names by their exact names; a wildcard in host
/// configuration is refused when the console starts, naming the entry.
#[test]
fn host_environment_additions_are_exact_names() {
    let env = Env::new();
    let config = env.data().join("roofline.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[launch]\nallow_env = [\"NCCL_*\"]\n");
    std::fs::write(&config, text).unwrap();
    let out = env.run(&["profile", "list"]);
    assert_ne!(out.status.code(), Some(0), "a wildcard was accepted");
    assert!(stderr(&out).contains("NCCL_*"), "{}", stderr(&out));
}

/// Issue 29, item 7: `MODEL` was checked as a path (inside the models root) but passed to the
/// engine as written, so a symbolic link swapped after the check pointed the engine out of
/// the root. The engine gets the resolved path; clients keep the name they knew.
#[tokio::test(flavor = "multi_thread")]
async fn the_engine_gets_the_model_path_as_resolved_when_checked() {
    let env = Env::new();
    let link = env.model().parent().unwrap().join("current");
    std::os::unix::fs::symlink(env.model(), &link).unwrap();
    let port = free_port();
    env.profile(
        "linked",
        &format!(
            "ENGINE=sim-vllm\nMODEL={}\nPORT={port}\nENV_ROOFLINE_SIM_STARTUP_S=0.2\n",
            link.display()
        ),
    );
    let served = env.serve_ok("linked");
    let pid = served["pid"].as_i64().unwrap();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let real = env.model().canonicalize().unwrap().display().to_string();
    assert!(argv.contains(&real), "the resolved path {real} in {argv:?}");
    let named = argv
        .iter()
        .position(|a| a == "--served-model-name")
        .map(|i| argv[i + 1].clone());
    assert_eq!(named, Some(link.display().to_string()), "{argv:?}");
    let models: serde_json::Value = client()
        .get(format!("http://127.0.0.1:{port}/v1/models"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], link.display().to_string(), "{models}");
    let _ = env.run(&["stop", "--profile", "linked"]);
}

/// Deny by default (issue 42): flags nobody listed, relative paths, and paths and addresses
/// inside JSON values are refused on import, each naming the flag; the engine runs in a
/// working directory of its own, so a relative path would not reach the console's files.
#[test]
fn a_flag_the_console_cannot_check_is_refused_and_relative_paths_reach_nothing() {
    let env = Env::new();
    let import =
        |name: &str, engine: &str, extra: &str| import_profile(&env, name, engine, &format!("EXTRA_ARGS='{extra}'"));
    for (i, (engine, extra, named)) in [
        ("sim-sglang", "--sidecar mymod", "--sidecar"),
        (
            "sim-vllm",
            "--logging-config.pylogging_config_file=/x.json",
            "--logging-config",
        ),
        ("sim-vllm", "--tool-server demo", "--tool-server"),
        ("sim-vllm", "--chat-template roofline.toml", "roofline.toml"),
        ("sim-vllm", "--lora-modules a=lora", "--lora-modules"),
        ("sim-vllm", "--kv-events-config.endpoint=tcp://*:5557", "tcp://*:5557"),
        ("sim-sglang", "--lmcache-config-file /x.yaml", "--lmcache-config-file"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = import(&format!("deny{i}"), engine, extra);
        assert_eq!(out.status.code(), Some(2), "{extra} was accepted: {}", stderr(&out));
        assert!(
            stderr(&out).contains(named),
            "{extra}: {named} not named in {}",
            stderr(&out)
        );
    }
    let out = import("unknown", "sim-vllm", "--logging-config {}");
    assert!(
        stderr(&out).contains("does not know what the engine does with this flag"),
        "the refusal says why and who can allow it: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("allow_flags"), "{}", stderr(&out));
    let template = env.model().join("t.jinja");
    std::fs::write(&template, "{{ messages }}").unwrap();
    let fine = format!(
        "--chat-template {} --kv-cache-memory-bytes 1G --otlp-traces-endpoint http://127.0.0.1:4317",
        template.display()
    );
    let out = import("fine", "sim-vllm", &fine);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_runs_in_a_working_directory_of_its_own() {
    let env = Env::new();
    let port = free_port();
    env.profile(
        "cwd",
        &format!(
            "ENGINE=sim-vllm\nMODEL={}\nPORT={port}\nENV_ROOFLINE_SIM_STARTUP_S=0.2\n",
            env.model().display()
        ),
    );
    let served = env.serve_ok("cwd");
    let pid = served["pid"].as_i64().unwrap();
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap();
    let _ = env.run(&["stop", "--profile", "cwd"]);
    let data = env.data().canonicalize().unwrap();
    assert_ne!(cwd, data, "not the console's data directory");
    assert!(cwd.ends_with("cwd/work"), "{}", cwd.display());
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0, "empty");
}

/// A path inside the models root that is a symlink out of it is refused at import: the
/// server resolves what each value reaches on disk.
#[test]
fn a_symlink_inside_the_root_does_not_carry_a_flag_out_of_it() {
    let env = Env::new();
    let link = env.model().join("tmpl.jinja");
    std::os::unix::fs::symlink(env.data().join("roofline.toml"), &link).unwrap();
    let extra = format!("EXTRA_ARGS='--chat-template {}'", link.display());
    let out = import_profile(&env, "link", "sim-vllm", &extra);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("tmpl.jinja"), "{}", stderr(&out));
}

/// An address beyond loopback passes only where the host configuration names it exactly; the
/// configuration refuses a wildcard or an any-address when the console starts.
#[test]
fn the_host_names_the_addresses_beyond_loopback_an_engine_may_reach() {
    let import = |env: &Env| {
        let extra = "EXTRA_ARGS='--otlp-traces-endpoint http://collector.internal:4317'";
        import_profile(env, "otlp", "sim-vllm", extra)
    };
    let env = Env::new();
    let out = import(&env);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("collector.internal"), "{}", stderr(&out));
    let env = Env::with_extra_config("");
    let config = env.data().join("roofline.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{text}\n[launch]\nallow_endpoints = [\"collector.internal\"]\n"),
    )
    .unwrap();
    let out = import(&env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::write(&config, format!("{text}\n[launch]\nallow_endpoints = [\"0.0.0.0\"]\n")).unwrap();
    let out = env.run(&["profile", "list"]);
    assert_ne!(out.status.code(), Some(0), "an any-address was accepted");
    assert!(stderr(&out).contains("allow_endpoints"), "{}", stderr(&out));
}
