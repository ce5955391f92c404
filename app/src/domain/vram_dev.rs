//! The calculator against 23 real vLLM startups (`testdata/reference/vram-dev`, from public
//! issues and the llm-d benchmark): each row's inputs as its log or source gives them, the
//! prediction, and the error against what vLLM logged ("Available KV cache memory", "GPU KV
//! cache size"). Every failed start must be "does not fit". The table prints with
//! `cargo test -p app vram_dev -- --nocapture` and is copied into BENCHMARKS.md.
//!
//! Weights are the logged "Model loading took" (the console reads them from the safetensors
//! headers, which is what vLLM loads), so the error measures the engine arithmetic: profile
//! activation, non-torch memory, graphs, the token convention.

use super::vram::*;

const GIB: f64 = (1u64 << 30) as f64;

/// Published config.json shapes of the models in the startups (see model-shapes.csv).
fn shape(model: &str) -> ModelShape {
    let json = match model {
        "llama-8b" => {
            r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"max_position_embeddings":131072,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"torch_dtype":"bfloat16","vocab_size":128256}"#
        }
        "llama-70b" => {
            r#"{"architectures":["LlamaForCausalLM"],"hidden_size":8192,"intermediate_size":28672,"max_position_embeddings":131072,"num_attention_heads":64,"num_hidden_layers":80,"num_key_value_heads":8,"torch_dtype":"bfloat16","vocab_size":128256}"#
        }
        "qwen3-0.6b" => {
            r#"{"architectures":["Qwen3ForCausalLM"],"hidden_size":1024,"head_dim":128,"intermediate_size":3072,"max_position_embeddings":40960,"num_attention_heads":16,"num_hidden_layers":28,"num_key_value_heads":8,"torch_dtype":"bfloat16","vocab_size":151936,"use_sliding_window":false,"sliding_window":null}"#
        }
        "qwen3-32b" => {
            r#"{"architectures":["Qwen3ForCausalLM"],"hidden_size":5120,"head_dim":128,"intermediate_size":25600,"max_position_embeddings":40960,"num_attention_heads":64,"num_hidden_layers":64,"num_key_value_heads":8,"torch_dtype":"bfloat16","vocab_size":151936,"use_sliding_window":false,"sliding_window":null}"#
        }
        "gpt-oss-20b" => {
            r#"{"architectures":["GptOssForCausalLM"],"hidden_size":2880,"head_dim":64,"intermediate_size":2880,"max_position_embeddings":131072,"num_attention_heads":64,"num_hidden_layers":24,"num_key_value_heads":8,"num_local_experts":32,"num_experts_per_tok":4,"sliding_window":128,"layer_types":["sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention"],"torch_dtype":"bfloat16","vocab_size":201088}"#
        }
        "gpt-oss-120b" => {
            r#"{"architectures":["GptOssForCausalLM"],"hidden_size":2880,"head_dim":64,"intermediate_size":2880,"max_position_embeddings":131072,"num_attention_heads":64,"num_hidden_layers":36,"num_key_value_heads":8,"num_local_experts":128,"num_experts_per_tok":4,"sliding_window":128,"layer_types":["sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention","full_attention"],"torch_dtype":"bfloat16","vocab_size":201088}"#
        }
        "mistral-small-24b" => {
            r#"{"architectures":["Mistral3ForConditionalGeneration"],"text_config":{"hidden_size":5120,"head_dim":128,"intermediate_size":32768,"max_position_embeddings":131072,"num_attention_heads":32,"num_hidden_layers":40,"num_key_value_heads":8,"vocab_size":131072},"torch_dtype":"bfloat16"}"#
        }
        "deepseek-r1" => {
            r#"{"architectures":["DeepseekV3ForCausalLM"],"hidden_size":7168,"intermediate_size":18432,"moe_intermediate_size":2048,"kv_lora_rank":512,"qk_rope_head_dim":64,"max_position_embeddings":163840,"n_routed_experts":256,"num_experts_per_tok":8,"num_attention_heads":128,"num_hidden_layers":61,"num_key_value_heads":128,"torch_dtype":"bfloat16","vocab_size":129280}"#
        }
        "deepseek-v2-lite" => {
            r#"{"architectures":["DeepseekV2ForCausalLM"],"hidden_size":2048,"intermediate_size":10944,"kv_lora_rank":512,"max_position_embeddings":163840,"moe_intermediate_size":1408,"n_routed_experts":64,"num_experts_per_tok":6,"num_attention_heads":16,"num_hidden_layers":27,"num_key_value_heads":16,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"torch_dtype":"bfloat16","vocab_size":102400}"#
        }
        other => panic!("no shape for {other}"),
    };
    parse_config(json).unwrap()
}

/// One startup row, as its source states it.
struct Row {
    /// 1-based data row of vllm-startups.csv.
    n: usize,
    model: &'static str,
    version: Option<&'static str>,
    gpu_gib: Option<f64>,
    tp: u64,
    util: f64,
    ctx: u64,
    weights_gib: Option<f64>,
    block: u64,
    batched: Option<u64>,
    draft_layers: u64,
    /// "Available KV cache memory" logged (negative: the start failed).
    available_gib: Option<f64>,
    kv_tokens: Option<u64>,
    failed: bool,
    /// Why the row is not in the error statistics, when it is not.
    only: Option<&'static str>,
}

const H100: f64 = 79.18;

#[rustfmt::skip]
fn rows() -> Vec<Row> {
    let r = |n, model, version, gpu_gib, tp, util, ctx, weights_gib, available_gib| Row {
        n, model, version, gpu_gib, tp, util, ctx, weights_gib, block: 16, batched: None, draft_layers: 0,
        available_gib, kv_tokens: None, failed: false, only: None,
    };
    // llm-d's runs: image vllm/vllm-openai:latest of Oct 2025 (the same document's Mistral
    // row states 0.11.0), block size 128.
    let llmd = |n, model, tp, ctx, w, avail| Row { block: 128, ..r(n, model, Some("0.11.0"), Some(H100), tp, 0.9, ctx, Some(w), avail) };
    vec![
        llmd(1, "gpt-oss-20b", 1, 16000, 13.47, Some(50.28)),
        llmd(2, "gpt-oss-120b", 1, 16000, 64.38, Some(3.33)),
        llmd(3, "llama-70b", 2, 16000, 33.88, Some(32.0)),
        Row { failed: true, ..llmd(4, "llama-70b", 1, 16000, 67.72, Some(-1.44)) },
        llmd(5, "llama-8b", 1, 16000, 14.99, Some(51.38)),
        llmd(6, "qwen3-0.6b", 1, 16000, 1.12, Some(64.45)),
        llmd(7, "qwen3-0.6b", 1, 32000, 1.12, Some(64.45)),
        llmd(8, "qwen3-32b", 1, 16000, 61.03, Some(4.45)),
        Row { failed: true, ..llmd(9, "qwen3-32b", 1, 32000, 61.03, None) },
        llmd(10, "qwen3-32b", 2, 16000, 30.59, Some(34.49)),
        Row { gpu_gib: Some(79.19), util: 0.95, kv_tokens: Some(184_832), ..llmd(11, "mistral-small-24b", 1, 16000, 44.76, Some(28.20)) },
        // 671B parameters in fp8 (one byte each) on one GPU.
        Row { failed: true, weights_gib: Some(671e9 / GIB), only: Some("weights from the parameter count"), ..llmd(12, "deepseek-r1", 1, 16000, 0.0, None) },
        Row { kv_tokens: Some(31_232), ..r(13, "llama-8b", Some("0.6.4"), Some(23.58), 1, 0.9, 20000, Some(14.9888), Some(3.81)) },
        Row { kv_tokens: Some(23_648), failed: true, ..r(14, "llama-8b", Some("0.6.4"), Some(23.58), 1, 0.9, 29000, Some(14.9888), Some(2.89)) },
        Row { only: Some("GPU memory not in the log"), kv_tokens: Some(22_096), ..r(15, "llama-70b", Some("0.7.0"), None, 1, 0.98, 2048, Some(67.7229), None) },
        Row { draft_layers: 1, kv_tokens: Some(410_128), only: Some("weights not logged: tokens from the logged memory"), ..r(16, "llama-8b", Some("0.9.1"), Some(H100), 1, 0.9, 131_072, None, Some(51.63)) },
        Row { failed: true, only: Some("CPU offload: tokens from the logged memory"), ..r(17, "deepseek-v2-lite", Some("0.8.3"), None, 2, 0.9, 32768, None, Some(0.93)) },
        Row { only: Some("DeepSeek V3.2's indexer cache is not modelled; no memory figure"), ..r(18, "deepseek-r1", None, None, 8, 0.9, 163_840, None, None) },
        Row { failed: true, ..r(19, "gpt-oss-120b", Some("0.10.1"), Some(H100), 1, 0.9, 131_072, Some(65.9651), Some(-2.14)) },
        // Same model and GPU as row 19 a release later; its weights are not logged, row 19's are used.
        Row { failed: true, batched: Some(1024), only: Some("weights taken from row 19"), ..r(20, "gpt-oss-120b", Some("0.11.0"), Some(H100), 1, 0.95, 131_072, Some(65.9651), Some(1.71)) },
        Row { only: Some("weights-per-GPU data point only"), ..r(21, "deepseek-r1", Some("0.5.3"), None, 8, 0.9, 8192, None, None) },
        Row { only: Some("GPU memory not in the log"), ..r(22, "qwen3-0.6b", Some("0.8.5"), None, 4, 0.9, 8192, None, None) },
        Row { only: Some("hybrid linear attention (KDA) is not modelled"), ..r(23, "deepseek-v2-lite", None, None, 2, 0.95, 120_000, None, None) },
    ]
}

fn inputs(row: &Row, gpu_gib: f64, weights_gib: f64) -> Inputs {
    Inputs {
        weights_bytes: (weights_gib * GIB * row.tp as f64) as u64,
        gpu_gib,
        tp: row.tp,
        util: row.util,
        ctx: row.ctx,
        kv_dtype: KvDtype::Auto,
        concurrency: None,
        activation_gib: None,
        non_torch_gib: None,
        engine: EngineSetup {
            version: row.version.map(str::to_string),
            v1: row.version.and_then(version_of).map(|v| v >= (0, 8)),
            block_size: Some(row.block),
            max_num_batched_tokens: row.batched,
            draft_layers: row.draft_layers,
            gpu_name: (gpu_gib > 70.0).then(|| "NVIDIA H100 80GB HBM3".to_string()),
            ..Default::default()
        },
        calibration: None,
    }
}

fn pct(p: f64, o: f64) -> f64 {
    (p - o) / o.abs() * 100.0
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

#[test]
fn vram_dev_startups() {
    let csv = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/reference/vram-dev/vllm-startups.csv"),
    )
    .unwrap();
    // Every data row starts with its source URL.
    let data_rows = csv.lines().filter(|l| l.starts_with("https://")).count();
    let rows = rows();
    assert_eq!(rows.len(), data_rows, "one case per startup row");
    let mut mem_err = Vec::new();
    let mut tok_err = Vec::new();
    let mut failures = Vec::new();
    println!("| row | model | vLLM | TP | ctx | KV GiB logged | predicted (range) | error | KV tokens logged | predicted | error | verdict |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        let m = shape(row.model);
        let Some(gpu) = row
            .gpu_gib
            .or(row.available_gib.filter(|_| row.only.is_some()).map(|a| a + 1.0))
        else {
            println!(
                "| {} | {} | {} | {} | {} | – | – | – | – | – | – | skipped: {} |",
                row.n,
                row.model,
                row.version.unwrap_or("?"),
                row.tp,
                row.ctx,
                row.only.unwrap_or("")
            );
            continue;
        };
        let (i, r) = match (row.weights_gib, row.gpu_gib) {
            (Some(w), Some(_)) => {
                let i = inputs(row, gpu, w);
                let r = calculate(&m, &i).unwrap();
                (i, r)
            }
            _ => {
                // Only the logged pool is known: give the calculator exactly that budget.
                let avail = row.available_gib.unwrap_or(0.0);
                let mut i = inputs(row, avail.max(0.001) + 1.0, 0.0);
                i.util = 1.0;
                i.activation_gib = Some(1.0);
                i.non_torch_gib = Some(0.0);
                i.engine.version = Some("0.9.0".into());
                let r = calculate(&m, &i).unwrap();
                (i, r)
            }
        };
        let mem = row
            .available_gib
            .filter(|a| *a > 0.0 && !row.failed)
            .map(|a| pct(r.kv_budget_gib, a));
        if let (Some(e), None) = (mem, row.only) {
            mem_err.push(e.abs());
        }
        let tok = row
            .kv_tokens
            .filter(|_| !row.failed)
            .map(|t| pct(r.kv_tokens as f64, t as f64));
        if let Some(e) = tok {
            tok_err.push(e.abs());
        }
        let says_fail = !r.verdict.fits();
        if row.failed && !says_fail {
            failures.push(format!(
                "row {}: the start failed, the calculator says {}",
                row.n,
                r.verdict.id()
            ));
        }
        if !row.failed && says_fail && row.only.is_none() {
            failures.push(format!(
                "row {}: the start worked, the calculator says {}",
                row.n,
                r.verdict.id()
            ));
        }
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.2} ({:.2}…{:.2}) | {} | {} | {} | {} | {}{} |",
            row.n,
            row.model,
            i.engine.version.as_deref().unwrap_or("?"),
            row.tp,
            row.ctx,
            row.available_gib.map(|a| format!("{a:.2}")).unwrap_or("–".into()),
            r.kv_budget_gib,
            r.kv_budget_range_gib.0,
            r.kv_budget_range_gib.1,
            mem.map(|e| format!("{e:+.1}%")).unwrap_or("–".into()),
            row.kv_tokens.map(|t| t.to_string()).unwrap_or("–".into()),
            r.kv_tokens,
            tok.map(|e| format!("{e:+.1}%")).unwrap_or("–".into()),
            r.verdict.id(),
            row.only.map(|o| format!(" ({o})")).unwrap_or_default(),
        );
    }
    let (m50, m90) = (quantile(mem_err.clone(), 0.5), quantile(mem_err.clone(), 0.9));
    let (t50, t90) = (quantile(tok_err.clone(), 0.5), quantile(tok_err.clone(), 0.9));
    println!(
        "\nKV memory |error| over {} rows: median {m50:.1}%, p90 {m90:.1}%",
        mem_err.len()
    );
    println!(
        "KV tokens |error| over {} rows: median {t50:.1}%, p90 {t90:.1}%",
        tok_err.len()
    );
    for f in &failures {
        println!("MISS {f}");
    }
    // Every failed start is "does not fit"; the medians meet the issue's 2%.
    assert!(failures.iter().all(|f| !f.contains("start failed")), "{failures:?}");
    assert!(m50 <= 2.0, "KV memory median {m50:.1}%");
    assert!(t50 <= 2.0, "KV tokens median {t50:.1}%");
}

/// vLLM's hybrid allocator groups as its logs show them (model-shapes.csv): Gemma 3 1B's 22
/// sliding and 4 full layers in 7 groups of 4; gpt-oss-120b's 18 and 18 in 2 groups of 18.
#[test]
fn hybrid_groups_match_the_logs() {
    let m = shape("gpt-oss-120b");
    assert_eq!(m.sliding, Some((128, 18)));
    let mut i = inputs(&rows()[18], H100, 17.22);
    i.tp = 4;
    i.weights_bytes = (17.22 * 4.0 * GIB) as u64;
    let r = calculate(&m, &i).unwrap();
    // 2 KV heads per GPU × 64 × 2 (K, V) × 2 B = 512 B per layer; 2 groups × 18 layers.
    assert_eq!(r.kv_bytes_per_token_reported, 512 * 36);
    // 2,640,144 tokens logged at TP 4: that pool over 18,432 B per token.
    assert_eq!(
        tokens_in(2_640_144.0 * 18_432.0 / GIB, r.kv_bytes_per_token_reported, 16),
        2_640_144
    );
    let gemma = parse_config(r#"{"architectures":["Gemma3ForCausalLM"],"hidden_size":1152,"head_dim":256,"intermediate_size":6912,"max_position_embeddings":32768,"num_attention_heads":4,"num_hidden_layers":26,"num_key_value_heads":1,"sliding_window":512,"sliding_window_pattern":6,"torch_dtype":"bfloat16","vocab_size":262144}"#).unwrap();
    assert_eq!(gemma.sliding, Some((512, 22)));
    let mut g = inputs(&rows()[4], H100, 1.9);
    g.tp = 1;
    let r = calculate(&gemma, &g).unwrap();
    assert_eq!(r.kv_bytes_per_token_reported, 1024 * 4 * 7);
    assert!(
        r.arithmetic.iter().any(|l| l.contains("7 groups of 4")),
        "{:?}",
        r.arithmetic
    );
    // V0 gives every layer a slot per token.
    g.engine.version = Some("0.6.4".into());
    g.engine.v1 = Some(false);
    assert_eq!(calculate(&gemma, &g).unwrap().kv_bytes_per_token_reported, 1024 * 26);
}

/// The budget follows the engine: V0's activation grows with the context it profiles at, V1's
/// does not; CUDA graphs come inside the budget from 0.14; `--enforce-eager` drops them.
#[test]
fn the_budget_follows_the_engine() {
    let m = shape("llama-8b");
    let at = |version: &str, ctx: u64| {
        let row = &rows()[12];
        let mut i = inputs(row, 23.58, 14.9888);
        i.ctx = ctx;
        i.engine.version = Some(version.into());
        i.engine.v1 = None;
        calculate(&m, &i).unwrap()
    };
    assert!(at("0.6.4", 29000).activation_gib > at("0.6.4", 20000).activation_gib + 0.5);
    assert_eq!(at("0.11.0", 29000).activation_gib, at("0.11.0", 20000).activation_gib);
    let late = at("0.14.0", 20000);
    assert!(late.graphs_gib > 0.0 && at("0.13.0", 20000).graphs_gib == 0.0);
    let mut eager = inputs(&rows()[12], 23.58, 14.9888);
    eager.engine.version = Some("0.14.0".into());
    eager.engine.enforce_eager = true;
    assert_eq!(calculate(&m, &eager).unwrap().graphs_gib, 0.0);
    // The answer is a value and a range; an unknown version widens it.
    let mut unknown = inputs(&rows()[12], 23.58, 14.9888);
    unknown.engine.version = None;
    unknown.engine.v1 = None;
    let u = calculate(&m, &unknown).unwrap();
    assert!(u.kv_budget_range_gib.0 < u.kv_budget_gib && u.kv_budget_gib < u.kv_budget_range_gib.1);
    assert!(u.path.contains("assumed"));
}

/// SGLang's own arithmetic: pool = mem-fraction-static × total − weights − context, one token
/// per slot (its log's "#tokens").
#[test]
fn sglang_pool() {
    let m = shape("llama-8b");
    let mut i = inputs(&rows()[4], H100, 14.99);
    i.util = 0.88;
    i.engine.family = EngineFamily::Sglang;
    let r = calculate(&m, &i).unwrap();
    let pool = 0.88 * H100 - 14.99 - 0.5;
    assert!((r.kv_budget_gib - pool).abs() < 1e-9);
    assert_eq!(r.kv_tokens, (pool * GIB) as u64 / 131_072);
    assert_eq!(r.activation_gib, 0.0);
}

/// Self-calibration on a real V0 start (#10517, in logs-dev): the engine's own lines at 29,000
/// tokens of context calibrate the 20,000-token start of the same model and GPU, whose logged
/// pool is 3.81 GiB.
#[test]
fn a_real_start_calibrates_the_next_prediction() {
    let log = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/fixtures/logs-dev/oom-start-kv--vllm-v0-0.6-max-seq-len-exceeds-kv.log"),
    )
    .unwrap();
    let o = observed(&log);
    assert_eq!(o.weights_gib, Some(14.9888));
    assert_eq!(o.kv_gib, Some(2.89));
    assert!((o.activation_gib.unwrap() - (17.98 - 14.9888)).abs() < 1e-9);
    let m = shape("llama-8b");
    let rows = rows();
    let at_29k = inputs(&rows[13], 23.58, 14.9888);
    let c = Calibration::from_start(
        &o,
        &m,
        &at_29k,
        1_764_763_200_000,
        "llama",
        "RTX 3090",
        "0.6.4",
        "/models/llama",
    )
    .unwrap();
    // Reproduces its own start exactly …
    let mut again = at_29k.clone();
    again.calibration = Some(c.clone());
    let r = calculate(&m, &again).unwrap();
    assert!((r.kv_budget_gib - 2.89).abs() < 0.011, "{}", r.kv_budget_gib);
    assert!(
        r.arithmetic
            .iter()
            .any(|l| l.contains("calibrated from the start of llama at 2025-12-03 12:00 UTC")),
        "{:?}",
        r.arithmetic
    );
    // … and predicts the 20k start: V0 profiles at the context, so the activation is
    // re-estimated, the measured overhead kept.
    let mut edit = inputs(&rows[12], 23.58, 14.9888);
    edit.calibration = Some(c);
    let r = calculate(&m, &edit).unwrap();
    let err = (r.kv_budget_gib - 3.81) / 3.81 * 100.0;
    assert!(
        err.abs() < 2.0,
        "calibrated prediction {:.2} GiB vs 3.81 logged ({err:+.1}%)",
        r.kv_budget_gib
    );
    assert!(r.arithmetic.iter().any(|l| l.contains("profile run changed")));
}
