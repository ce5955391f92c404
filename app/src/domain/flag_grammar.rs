//! What a flag's value is, to the engine that reads it: the launch policy's deny-by-default
//! table. A flag whose value is free text passes only when the console knows how the engine
//! uses that value (a file it opens, an address it binds or connects to, a name it looks up in
//! its own fixed registry, text it only compares or prints, JSON with known keys) and the value
//! fits; every other free-valued flag is refused, whatever the next engine release adds.
//!
//! Each row names the engine source that reads the value (vLLM 0.32/0.33: `vllm/engine/
//! arg_utils.py` `EngineArgs.add_cli_args` and `vllm/entrypoints/openai/cli_args.py`
//! `make_arg_parser`; SGLang 0.5.23: `python/sglang/srt/server_args.py` `ServerArgs.
//! add_cli_args`), so a reviewer can check the grammar against the code, not against examples.

use super::engine::EngineKind;

/// How the engine reads a flag's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grammar {
    /// A file or directory the engine opens, reads or writes: absolute, inside the models root.
    Path,
    /// A path, or one of these words the engine reads as a mode rather than a file.
    PathOr(&'static [&'static str]),
    /// A chat template: a path (absolute, inside the root) or a literal Jinja template. vLLM's
    /// `load_chat_template` (`vllm/entrypoints/chat_utils.py`) opens the value as a file and
    /// only reads it as a template when it holds one of `{`, `}`, a newline.
    TemplateOrLiteral,
    /// A chat template: a path, or the name of one of the engine's built-in templates (SGLang's
    /// `TemplateManager.load_chat_template`, `srt/managers/template_manager.py`: a file when it
    /// exists, else a registered name).
    TemplateOrName,
    /// LoRA adapters: `name=path` or a JSON object `{"name", "path", "base_model_name"}`
    /// (`LoRAParserAction` in `vllm/entrypoints/openai/cli_args.py`).
    LoraModules,
    /// A name the engine compares or looks up in a registry of its own (a quantization method,
    /// a git revision, a log level, a device, a backend's enum name): no path, no spaces.
    Word,
    /// Text the engine only compares or prints (an API key, a URL prefix, CORS lists, a regex).
    Text,
    /// An address the engine binds or connects to (`host:port`, `scheme://host:port/...`):
    /// loopback only.
    Endpoint,
    /// A comma-separated list of [`Grammar::Endpoint`]s (`--tool-server`: `demo`, the built-in
    /// tool server that runs model-written code, is not one).
    Endpoints,
    /// A bare host name or address the engine binds or connects to: loopback only.
    Host,
    /// JSON whose leaves are numbers, booleans, null or [`Grammar::Word`]s, under keys that do
    /// not name code, files or addresses (sampling defaults, per-prompt limits, template kwargs).
    JsonData,
    /// JSON with exactly these keys, each with its own grammar.
    Json(&'static [(&'static str, Grammar)]),
    /// A number or a size.
    Number,
    /// A number or a boolean word.
    Bool,
}

/// vLLM's `KVEventsConfig` (`vllm/config/kv_events.py`): the publisher binds `endpoint` and
/// publishes every prompt's block hashes there.
const KV_EVENTS: &[(&str, Grammar)] = &[
    ("enable_kv_cache_events", Grammar::Bool),
    ("publisher", Grammar::Word),
    ("endpoint", Grammar::Endpoint),
    ("replay_endpoint", Grammar::Endpoint),
    ("buffer_steps", Grammar::Number),
    ("hwm", Grammar::Number),
    ("max_queue_size", Grammar::Number),
    ("topic", Grammar::Word),
];

/// The grammar of a free-valued flag the console knows, by the canonical name the installed
/// help prints. `None`: the console does not know what the value is, and it is refused.
pub fn grammar(kind: EngineKind, flag: &str) -> Option<Grammar> {
    use Grammar::*;
    let common = match flag {
        "--chat-template" => Some(match kind {
            EngineKind::Vllm => TemplateOrLiteral,
            EngineKind::Sglang => TemplateOrName,
        }),
        "--download-dir" => Some(Path),
        "--revision" | "--tokenizer-revision" => Some(Word),
        "--api-key" => Some(Text),
        "--ssl-keyfile" | "--ssl-certfile" | "--ssl-ca-certs" => Some(Path),
        "--ssl-keyfile-password" | "--ssl-ciphers" => Some(Text),
        "--otlp-traces-endpoint" => Some(Endpoint),
        "--kv-events-config" => Some(Json(KV_EVENTS)),
        "--tool-server" => Some(Endpoints),
        "--default-chat-template-kwargs" => Some(JsonData),
        "--allowed-media-domains" => Some(Word),
        _ => None,
    };
    if common.is_some() {
        return common;
    }
    match kind {
        // `vllm/engine/arg_utils.py` `EngineArgs.add_cli_args` (ModelConfig, LoadConfig,
        // ParallelConfig, CacheConfig, LoRAConfig, ObservabilityConfig fields) and
        // `vllm/entrypoints/openai/cli_args.py` `FrontendArgs`.
        EngineKind::Vllm => match flag {
            // `ModelConfig.tokenizer` / `hf_config_path`: a directory opened with Transformers.
            "--tokenizer" | "--hf-config-path" => Some(Path),
            // `ModelConfig.generation_config`: "auto", "vllm" or a folder.
            "--generation-config" => Some(PathOr(&["auto", "vllm"])),
            "--allowed-local-media-path" | "--mm-encoder-fp8-scale-path" => Some(Path),
            "--lora-modules" => Some(LoraModules),
            // Looked up in `QUANTIZATION_METHODS`, the attention backend enum, the reasoning
            // parser registry (its plugin flag is what loads code), the revision in git.
            "--quantization"
            | "--code-revision"
            | "--attention-backend"
            | "--mamba-backend"
            | "--mm-encoder-attn-backend"
            | "--reasoning-parser"
            | "--response-role"
            | "--show-hidden-metrics-for-version"
            | "--kv-cache-dtype-skip-layers"
            | "--lora-target-modules"
            | "--device-ids"
            | "--numa-bind-cpus"
            | "--numa-bind-nodes"
            | "--optimization-level" => Some(Word),
            "--root-path"
            | "--allowed-origins"
            | "--allowed-methods"
            | "--allowed-headers"
            | "--ignore-patterns"
            | "--disable-access-log-for-endpoints" => Some(Text),
            "--data-parallel-address" | "--master-addr" => Some(Host),
            "--limit-mm-per-prompt" | "--override-generation-config" => Some(JsonData),
            _ => None,
        },
        // `python/sglang/srt/server_args.py` `ServerArgs.add_cli_args`.
        EngineKind::Sglang => match flag {
            "--tokenizer-path" | "--quantization-param-path" | "--speculative-token-map" => Some(Path),
            "--crash-dump-folder" | "--file-storage-path" | "--export-metrics-to-file-dir" => Some(Path),
            "--completion-template" => Some(TemplateOrName),
            // `RequestLogger`: "stdout" or a directory it writes request logs to.
            "--log-requests-target" => Some(PathOr(&["stdout"])),
            "--init-expert-location" => Some(PathOr(&["trivial"])),
            "--lora-paths" => Some(LoraModules),
            "--device"
            | "--model-impl"
            | "--log-level"
            | "--log-level-http"
            | "--hf-chat-template-name"
            | "--weight-version"
            | "--eplb-algorithm"
            | "--mooncake-ib-device"
            | "--disaggregation-ib-device"
            | "--tokenizer-metrics-custom-labels-header"
            | "--tokenizer-metrics-allowed-custom-labels"
            | "--numa-node" => Some(Word),
            "--admin-api-key" | "--fastapi-root-path" | "--constrained-json-whitespace-pattern" => Some(Text),
            "--dist-init-addr" => Some(Endpoint),
            "--preferred-sampling-params" | "--limit-mm-data-per-request" => Some(JsonData),
            _ => None,
        },
    }
}

/// Why a value does not fit its flag's grammar: a reason code (the Fluent selector of
/// `profile-issue-flag-not-allowed`) and what to name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misfit {
    pub reason: &'static str,
    pub detail: String,
}

fn misfit(reason: &'static str, detail: impl Into<String>) -> Misfit {
    Misfit {
        reason,
        detail: detail.into(),
    }
}

/// Where values may lead on this host: the models root paths must lie in, and the addresses
/// beyond loopback its configuration lets engines bind or reach (`[launch] allow_endpoints`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Places<'a> {
    pub root: Option<&'a str>,
    pub hosts: &'a [String],
}

/// What a checked value reaches, for the server's second look (symlinks resolved on disk).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reaches {
    /// Paths, absolute and lexically inside the root.
    pub paths: Vec<String>,
}

/// A number argparse's `int`/`float` would take, or a size vLLM's `human_readable_int` takes
/// (`1G`, `4GiB`, `32k`): data whatever the flag is (never a module, class, address or JSON
/// object; as a file name it would be relative to the engine's own empty working directory).
pub fn is_number(v: &str) -> bool {
    let v = v.trim_start_matches(['+', '-']);
    let digits_end = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let (num, rest) = v.split_at(digits_end);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 || !num.chars().any(|c| c.is_ascii_digit()) {
        return false;
    }
    let rest = match rest.strip_prefix(['e', 'E']) {
        Some(exp) => {
            let exp = exp.trim_start_matches(['+', '-']);
            return !exp.is_empty() && exp.chars().all(|c| c.is_ascii_digit());
        }
        None => rest,
    };
    matches!(
        rest,
        "" | "k"
            | "K"
            | "m"
            | "M"
            | "g"
            | "G"
            | "t"
            | "T"
            | "KB"
            | "MB"
            | "GB"
            | "TB"
            | "KiB"
            | "MiB"
            | "GiB"
            | "TiB"
            | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
    )
}

/// A JSON array of numbers (`[1,2,4]`, capture sizes): data like a number.
pub fn is_number_list(v: &str) -> bool {
    matches!(serde_json::from_str::<serde_json::Value>(v),
        Ok(serde_json::Value::Array(items)) if items.iter().all(serde_json::Value::is_number))
}

/// A name: letters, digits and `_-.:+,@`, never a path and never shaped like a Python dotted
/// name (`os.system`, `my_pkg.Cls`), which an engine that imports what it is handed would take
/// for a module or class. Registry names, git revisions (`v1.0`) and versions keep their dots.
fn is_word(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 256
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '+' | ',' | '@'))
        && !is_dotted_name(v)
        && !is_address(v)
}

/// `10.0.0.1:80`, `[::1]:1`, `host.example:443`: an address, never a name.
fn is_address(v: &str) -> bool {
    if v.parse::<std::net::SocketAddr>().is_ok() || v.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    v.rsplit_once(':')
        .is_some_and(|(host, port)| host.contains('.') && !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
}

/// `a.b` where every part is a Python identifier: what `importlib` and `resolve_obj_by_qualname`
/// read as a module or class.
pub fn is_dotted_name(v: &str) -> bool {
    let ident = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    v.contains('.') && v.split(['.', ':']).all(ident)
}

fn is_text(v: &str) -> bool {
    v.len() <= 4096 && !v.chars().any(char::is_control)
}

/// Whether `host` is a loopback name or address (`localhost`, `127.0.0.0/8`, `::1`).
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.to_canonical().is_loopback())
}

/// The host of an endpoint: `tcp://127.0.0.1:5557`, `http://localhost:4317/v1`, `[::1]:80`,
/// `127.0.0.1:8000`. `None` when it names no host the console can read (`ipc://…`, `*:5557`).
fn endpoint_host(v: &str) -> Option<&str> {
    let rest = v.split_once("://").map_or(v, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if let Some(inner) = authority.strip_prefix('[') {
        return inner.split_once(']').map(|(h, _)| h);
    }
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    (!host.is_empty()).then_some(host)
}

/// Whether a path, lexically, is absolute, free of `..` and inside `root`.
pub fn inside_root(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    path.starts_with('/')
        && !path.split('/').any(|c| c == "..")
        && (path == root || path.starts_with(&format!("{root}/")))
}

fn check_path(v: &str, root: Option<&str>, reaches: &mut Reaches) -> Result<(), Misfit> {
    if !v.starts_with('/') {
        return Err(misfit("relative-path", v));
    }
    if let Some(root) = root {
        if !inside_root(v, root) {
            return Err(misfit("outside-root", v));
        }
    }
    reaches.paths.push(v.to_string());
    Ok(())
}

fn check_endpoint(v: &str, hosts: &[String]) -> Result<(), Misfit> {
    match endpoint_host(v) {
        Some(h) if is_loopback_host(h) || allowed_host(h, hosts) => Ok(()),
        _ => Err(misfit("endpoint", v)),
    }
}

/// A host the configuration names exactly (an address or a name; never a wildcard).
fn allowed_host(h: &str, hosts: &[String]) -> bool {
    let h = h.trim_start_matches('[').trim_end_matches(']');
    hosts.iter().any(|a| a.eq_ignore_ascii_case(h))
}

/// Keys of a JSON value that name code, files or addresses: never data, whatever the flag.
/// The flags read as [`Grammar::JsonData`] hand their objects to sampling defaults
/// (`SamplingParams` via `ModelConfig.override_generation_config`, SGLang's
/// `preferred_sampling_params`), per-prompt limits (`MultiModalConfig.limit_per_prompt`) and the
/// chat template's keyword arguments: none of them takes such a key, so refusing it costs
/// nothing and keeps a key a later release adds (a processor's `cache_dir`, a remote-code
/// switch passed through) from being read as data.
fn code_or_place_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "trust_remote_code",
        "module",
        "class",
        "cls",
        "plugin",
        "hook",
        "path",
        "dir",
        "file",
        "url",
        "endpoint",
        "addr",
        "host",
        "socket",
    ]
    .iter()
    .any(|w| k.contains(w))
}

/// How deep a JSON value may nest before the console stops reading it as data.
const JSON_DEPTH: usize = 8;

fn check_json_data(v: &serde_json::Value, at: &str, depth: usize) -> Result<(), Misfit> {
    use serde_json::Value;
    if depth > JSON_DEPTH {
        return Err(misfit("json-key", at));
    }
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        Value::String(s) if is_word(s) && !s.contains("..") => Ok(()),
        Value::String(_) => Err(misfit("json-key", at)),
        Value::Array(items) => items.iter().try_for_each(|x| check_json_data(x, at, depth + 1)),
        Value::Object(map) => map.iter().try_for_each(|(k, x)| {
            let here = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
            if code_or_place_key(k) {
                return Err(misfit("json-key", here));
            }
            check_json_data(x, &here, depth + 1)
        }),
    }
}

fn parse_json(v: &str) -> Result<serde_json::Value, Misfit> {
    if v.len() > 64 * 1024 {
        return Err(misfit("not-json", "over 64 KiB"));
    }
    serde_json::from_str(v).map_err(|e| misfit("not-json", e.to_string()))
}

fn check_json_keys(
    v: &serde_json::Value,
    keys: &[(&str, Grammar)],
    places: &Places<'_>,
    reaches: &mut Reaches,
) -> Result<(), Misfit> {
    let serde_json::Value::Object(map) = v else {
        return Err(misfit("not-json", "not a JSON object"));
    };
    for (k, x) in map {
        let Some((_, g)) = keys.iter().find(|(name, _)| name == k) else {
            return Err(misfit("json-key", k.clone()));
        };
        let text = match x {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => continue,
            other => other.to_string(),
        };
        check(*g, &text, places, reaches).map_err(|m| misfit(m.reason, format!("{k}: {}", m.detail)))?;
    }
    Ok(())
}

/// One LoRA adapter: `name=path` or a JSON object with a path.
fn check_lora(v: &str, places: &Places<'_>, reaches: &mut Reaches) -> Result<(), Misfit> {
    let root = places.root;
    if v.trim_start().starts_with('{') {
        const LORA: &[(&str, Grammar)] = &[
            ("name", Grammar::Word),
            ("lora_name", Grammar::Word),
            ("path", Grammar::Path),
            ("lora_path", Grammar::Path),
            ("base_model_name", Grammar::Word),
            ("pinned", Grammar::Bool),
        ];
        return check_json_keys(&parse_json(v)?, LORA, places, reaches);
    }
    match v.split_once('=') {
        Some((name, path)) if is_word(name) => check_path(path, root, reaches),
        Some(_) => Err(misfit("word", v)),
        None => check_path(v, root, reaches),
    }
}

/// Checks one value against its flag's grammar; what it reaches on disk goes to `reaches`.
pub fn check(g: Grammar, v: &str, places: &Places<'_>, reaches: &mut Reaches) -> Result<(), Misfit> {
    use Grammar::*;
    let root = places.root;
    match g {
        Path => check_path(v, root, reaches),
        PathOr(words) if words.contains(&v) => Ok(()),
        PathOr(_) => check_path(v, root, reaches),
        // vLLM opens the value as a file first, whatever it holds: a literal never starts
        // like a path, so `/etc/x{` is read as the path it is.
        TemplateOrLiteral if v.contains(['{', '}', '\n']) && !v.starts_with(['/', '~', '.']) => Ok(()),
        TemplateOrLiteral => check_path(v, root, reaches),
        TemplateOrName if is_word(v) => Ok(()),
        TemplateOrName => check_path(v, root, reaches),
        LoraModules => check_lora(v, places, reaches),
        Word if is_word(v) => Ok(()),
        Word => Err(misfit("word", v)),
        Text if is_text(v) => Ok(()),
        Text => Err(misfit("word", v.escape_debug().to_string())),
        Endpoint => check_endpoint(v, places.hosts),
        Endpoints => v
            .split(',')
            .map(str::trim)
            .try_for_each(|e| check_endpoint(e, places.hosts)),
        Host if is_loopback_host(v) || allowed_host(v, places.hosts) => Ok(()),
        Host => Err(misfit("endpoint", v)),
        JsonData => check_json_data(&parse_json(v)?, "", 0),
        Json(keys) => check_json_keys(&parse_json(v)?, keys, places, reaches),
        Number if is_number(v) || is_number_list(v) => Ok(()),
        Number => Err(misfit("word", v)),
        Bool if is_number(v) || matches!(v.to_ascii_lowercase().as_str(), "true" | "false") => Ok(()),
        Bool => Err(misfit("word", v)),
    }
}

/// One grammar of each kind (a JSON one with a key of each sort): what the hostile-input
/// property and the fuzz target run every value through.
pub const EVERY: &[Grammar] = &[
    Grammar::Path,
    Grammar::PathOr(&["auto"]),
    Grammar::TemplateOrLiteral,
    Grammar::TemplateOrName,
    Grammar::LoraModules,
    Grammar::Word,
    Grammar::Text,
    Grammar::Endpoint,
    Grammar::Endpoints,
    Grammar::Host,
    Grammar::JsonData,
    Grammar::Json(&[
        ("endpoint", Grammar::Endpoint),
        ("path", Grammar::Path),
        ("n", Grammar::Number),
    ]),
    Grammar::Number,
    Grammar::Bool,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(g: Grammar, v: &str) -> Result<Vec<String>, &'static str> {
        let mut r = Reaches::default();
        let places = Places {
            root: Some("/models"),
            hosts: &[],
        };
        check(g, v, &places, &mut r).map(|()| r.paths).map_err(|m| m.reason)
    }

    #[test]
    fn numbers_and_sizes_are_data_and_nothing_else_is() {
        for n in ["1", "-1", "0.9", ".5", "1e-3", "32k", "1G", "4GiB", "+3", "1.5M"] {
            assert!(is_number(n), "{n}");
        }
        for s in [
            "",
            ".",
            "1.2.3",
            "os.system",
            "1x",
            "e5",
            "roofline.toml",
            "1e",
            "--1a",
            "0x10",
            "1 2",
        ] {
            assert!(!is_number(s), "{s}");
        }
        // A name is never a Python dotted name, a path or an address.
        for w in [
            "fp8",
            "main",
            "v1.0",
            "FLASH_ATTN",
            "0.32",
            "compressed-tensors",
            "cuda:0",
            "0-15",
        ] {
            assert!(fits(Grammar::Word, w).is_ok(), "{w}");
        }
        for w in [
            "os.system",
            "my_pkg.mod:Cls",
            "roofline.toml",
            "a/b",
            "x y",
            "tcp://h:1",
            "",
            "10.0.0.1:80",
            "10.0.0.1",
            "h.example:443",
        ] {
            assert_eq!(fits(Grammar::Word, w), Err("word"), "{w}");
        }
        assert!(is_number_list("[1, 2, 4]"));
        assert!(!is_number_list("[1, \"a\"]") && !is_number_list("{\"a\": 1}"));
    }

    #[test]
    fn a_path_is_absolute_inside_the_root() {
        assert_eq!(
            fits(Grammar::Path, "/models/t.jinja"),
            Ok(vec!["/models/t.jinja".into()])
        );
        assert_eq!(fits(Grammar::Path, "roofline.toml"), Err("relative-path"));
        assert_eq!(fits(Grammar::Path, "./x"), Err("relative-path"));
        assert_eq!(fits(Grammar::Path, "/etc/passwd"), Err("outside-root"));
        assert_eq!(fits(Grammar::Path, "/models/../etc"), Err("outside-root"));
        // A chat template: a path or a literal template; a bare word is a relative path to vLLM.
        assert!(fits(Grammar::TemplateOrLiteral, "{{ messages }}").is_ok());
        assert_eq!(fits(Grammar::TemplateOrLiteral, "roofline.toml"), Err("relative-path"));
        // vLLM opens it as a file first: a brace does not make an absolute path a template.
        assert_eq!(fits(Grammar::TemplateOrLiteral, "/etc/x{"), Err("outside-root"));
        // SGLang reads a bare word as a built-in template's name.
        assert!(fits(Grammar::TemplateOrName, "chatml").is_ok());
        assert_eq!(fits(Grammar::TemplateOrName, "../roofline.toml"), Err("relative-path"));
        assert!(fits(Grammar::PathOr(&["auto", "vllm"]), "auto").is_ok());
        assert_eq!(fits(Grammar::PathOr(&["auto", "vllm"]), "cfg"), Err("relative-path"));
    }

    #[test]
    fn lora_modules_in_both_forms() {
        assert_eq!(fits(Grammar::LoraModules, "a=/models/l"), Ok(vec!["/models/l".into()]));
        assert_eq!(fits(Grammar::LoraModules, "a=lora"), Err("relative-path"));
        assert_eq!(fits(Grammar::LoraModules, "a=/tmp/l"), Err("outside-root"));
        assert!(fits(
            Grammar::LoraModules,
            r#"{"name":"a","path":"/models/l","base_model_name":"m"}"#
        )
        .is_ok());
        assert_eq!(
            fits(Grammar::LoraModules, r#"{"name":"a","path":"../x"}"#),
            Err("relative-path")
        );
        assert_eq!(
            fits(Grammar::LoraModules, r#"{"name":"a","path":"/models/l","x":1}"#),
            Err("json-key")
        );
    }

    #[test]
    fn endpoints_stay_on_loopback() {
        for ok in [
            "tcp://127.0.0.1:5557",
            "http://localhost:4317/v1",
            "[::1]:80",
            "127.0.0.2:9",
            "grpc://[::1]:1",
        ] {
            assert!(fits(Grammar::Endpoint, ok).is_ok(), "{ok}");
        }
        for bad in [
            "tcp://*:5557",
            "tcp://0.0.0.0:5557",
            "http://collector.example:4317",
            "ipc:///tmp/x",
            "http://u@10.0.0.1/",
            "demo",
        ] {
            assert_eq!(fits(Grammar::Endpoint, bad), Err("endpoint"), "{bad}");
        }
        assert!(fits(Grammar::Endpoints, "127.0.0.1:8000,localhost:1234").is_ok());
        assert_eq!(fits(Grammar::Endpoints, "demo"), Err("endpoint"));
        assert_eq!(fits(Grammar::Host, "0.0.0.0"), Err("endpoint"));
        // An address the host configuration names, exactly; never a wildcard.
        let hosts = ["10.0.0.5".to_string(), "collector.internal".to_string()];
        let places = Places {
            root: Some("/models"),
            hosts: &hosts,
        };
        let mut r = Reaches::default();
        assert!(check(Grammar::Endpoint, "http://collector.internal:4317", &places, &mut r).is_ok());
        assert!(check(Grammar::Host, "10.0.0.5", &places, &mut r).is_ok());
        assert!(check(Grammar::Endpoint, "tcp://*:5557", &places, &mut r).is_err());
        assert!(check(Grammar::Endpoint, "http://10.0.0.6:1", &places, &mut r).is_err());
    }

    #[test]
    fn json_is_walked_key_by_key() {
        let kv = Grammar::Json(KV_EVENTS);
        assert!(fits(
            kv,
            r#"{"enable_kv_cache_events":true,"publisher":"zmq","endpoint":"tcp://127.0.0.1:5557"}"#
        )
        .is_ok());
        assert_eq!(
            fits(kv, r#"{"publisher":"zmq","endpoint":"tcp://*:5557"}"#),
            Err("endpoint")
        );
        assert_eq!(fits(kv, r#"{"publisher_cls":"a.B"}"#), Err("json-key"));
        assert_eq!(fits(kv, "not json"), Err("not-json"));
        assert!(fits(Grammar::JsonData, r#"{"temperature":0.6,"top_p":0.9,"image":2}"#).is_ok());
        for bad in [
            r#"{"trust_remote_code":true}"#,
            r#"{"a":{"cache_dir":"/tmp"}}"#,
            r#"{"a":"/etc/passwd"}"#,
            r#"{"a":"x y"}"#,
            r#"{"processor_class":"a.B"}"#,
        ] {
            assert_eq!(fits(Grammar::JsonData, bad), Err("json-key"), "{bad}");
        }
        let deep = format!("{}1{}", "[".repeat(20), "]".repeat(20));
        assert_eq!(fits(Grammar::JsonData, &deep), Err("json-key"));
    }
}
