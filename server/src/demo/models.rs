//! The demo's model directories: complete for the model check (config, tokenizer, tokenizer
//! config with a chat template, generation config, a `SHA256SUMS` manifest), so the demo
//! engines' logs open clean, as a real transfer should. Only the weights are absent: the
//! simulator loads none, and the check says "simulated" for a simulated installation (never
//! for a real one, whatever the directory holds).

use std::path::Path;

/// One demo model: its directory name, `config.json`, chat template and special tokens.
pub struct DemoModel {
    pub dir: &'static str,
    config: &'static str,
    chat_template: &'static str,
    bos: &'static str,
    eos: &'static str,
    /// Every special token of the family's template (in the tokenizer's added tokens).
    specials: &'static [&'static str],
    generation: &'static str,
}

/// A Llama-3.1-8B-shaped model (GQA, 32 layers, 8 KV heads) with Llama 3's header template.
pub const LLAMA: DemoModel = DemoModel {
    dir: "llama-3.1-8b-instruct",
    config: r#"{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "vocab_size": 128256, "torch_dtype": "bfloat16", "bos_token_id": 0, "eos_token_id": 1}"#,
    chat_template: "{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}",
    bos: "<|begin_of_text|>",
    eos: "<|eot_id|>",
    specials: &["<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>"],
    generation: r#"{"bos_token_id": 0, "eos_token_id": [1], "do_sample": true, "temperature": 0.6, "top_p": 0.9}"#,
};

/// A Qwen3-8B-shaped model with the ChatML template.
pub const QWEN: DemoModel = DemoModel {
    dir: "qwen3-8b",
    config: r#"{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096, "intermediate_size": 12288, "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960, "vocab_size": 151936, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "bos_token_id": 0, "eos_token_id": 1}"#,
    chat_template: "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
    bos: "<|endoftext|>",
    eos: "<|im_end|>",
    specials: &["<|endoftext|>", "<|im_end|>", "<|im_start|>"],
    generation: r#"{"bos_token_id": 0, "eos_token_id": [1], "do_sample": true, "temperature": 0.6, "top_p": 0.95, "top_k": 20}"#,
};

/// The words of the demo tokenizer's vocabulary (a word-level stand-in for the family's BPE:
/// the bench sizes prompts with it, the demo load writes prompts from it).
pub const WORDS: &[&str] = &[
    "the",
    "engine",
    "serves",
    "requests",
    "from",
    "a",
    "queue",
    "of",
    "tokens",
    "and",
    "cache",
    "blocks",
    "when",
    "memory",
    "is",
    "full",
    "scheduler",
    "preempts",
    "running",
    "sequences",
    "prefix",
    "hits",
    "save",
    "prefill",
    "decode",
    "steps",
    "batch",
    "latency",
    "throughput",
    "model",
    "weights",
    "load",
    "into",
    "gpu",
    "kv",
    "context",
    "length",
    "tensor",
    "parallel",
    "ranks",
    "share",
    "work",
    "operator",
    "reads",
    "metrics",
    "every",
    "second",
    "chart",
    "shows",
    "waiting",
    "time",
    "to",
    "first",
    "token",
    "inter",
    "profile",
    "sets",
    "flags",
    "review",
    "approves",
    "change",
    "journal",
    "records",
    "who",
    "why",
    "incident",
    "triage",
    "runbook",
    "says",
    "check",
    "health",
    "probe",
    "answers",
    "restart",
    "stop",
    "start",
    "logs",
    "tell",
    "what",
    "happened",
    "please",
    "summarize",
    "explain",
    "write",
    "short",
    "report",
    "about",
    "this",
    "in",
    "two",
    "sentences",
    "list",
    "three",
    "causes",
    "for",
    "slow",
    "answers",
    "under",
    "load",
    "with",
    "long",
    "prompts",
    "how",
    "many",
    "fit",
    "on",
    "one",
    "card",
    "at",
    "utilisation",
    "ninety",
    "percent",
];

impl DemoModel {
    /// Writes the directory's files and its manifest under `models_root`.
    pub fn write(&self, models_root: &Path) -> anyhow::Result<()> {
        let d = models_root.join(self.dir);
        std::fs::create_dir_all(&d)?;
        let files = [
            ("config.json", self.config.to_string()),
            ("generation_config.json", self.generation.to_string()),
            ("tokenizer.json", self.tokenizer_json()),
            ("tokenizer_config.json", self.tokenizer_config()),
            (
                "special_tokens_map.json",
                serde_json::json!({"bos_token": self.bos, "eos_token": self.eos}).to_string(),
            ),
            (
                "README.roofline",
                "Demo model directory for the Roofline engine simulator: the configuration, tokenizer and chat\n\
                 template of the model family, no weights (the simulator loads none). SHA256SUMS lists every file.\n"
                    .to_string(),
            ),
        ];
        for (name, text) in files {
            std::fs::write(d.join(name), text)?;
        }
        crate::models::manifest::write(&d, &|_| {})
            .map_err(|e| anyhow::anyhow!("demo manifest for {}: {e}", self.dir))?;
        Ok(())
    }

    /// A word-level `tokenizer.json` the `tokenizers` library reads: the family's special tokens
    /// and `<unk>` first (added, special), then [`WORDS`], split on whitespace.
    fn tokenizer_json(&self) -> String {
        let mut vocab = serde_json::Map::new();
        let mut added = Vec::new();
        // `<unk>` is special too: drawn as an ordinary token, it would decode to text that
        // re-encodes as three unknown pieces.
        for (id, t) in self.specials.iter().chain(&["<unk>"]).enumerate() {
            vocab.insert((*t).into(), id.into());
            added.push(serde_json::json!({
                "id": id, "content": t, "single_word": false, "lstrip": false, "rstrip": false,
                "normalized": false, "special": true,
            }));
        }
        for w in WORDS {
            let next = vocab.len();
            vocab.entry(*w).or_insert(next.into());
        }
        serde_json::json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": null,
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null,
            "decoder": null,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
        })
        .to_string()
    }

    fn tokenizer_config(&self) -> String {
        serde_json::json!({
            "bos_token": self.bos,
            "eos_token": self.eos,
            "model_max_length": 131072,
            "tokenizer_class": "PreTrainedTokenizerFast",
            "chat_template": self.chat_template,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{verify, HashMode};
    use app::domain::modelcheck::Level;

    /// Every demo directory passes the check a real transfer must pass, except the weights,
    /// which a simulated installation reports as simulated; its tokenizer sizes prompts.
    #[tokio::test]
    async fn demo_model_directories_pass_the_model_check() {
        let root = tempfile::tempdir().unwrap();
        for m in [LLAMA, QWEN] {
            m.write(root.path()).unwrap();
            let dir = root.path().join(m.dir);
            let mut report = verify(None, &dir, root.path(), HashMode::Full, std::sync::Arc::new(|_| {}))
                .await
                .unwrap();
            assert!(report.manifest, "{}: manifest checked", m.dir);
            let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
            assert_eq!(codes, ["no-safetensors"], "{}: {:?}", m.dir, report.findings);
            report.weights_simulated();
            assert!(report.ok(), "{}: {:?}", m.dir, report.findings);
            assert_eq!(report.findings[0].level, Level::Simulated);
            let tok = crate::runs::tokens::PromptTokenizer::from_model_dir(&dir).unwrap();
            assert_eq!(tok.count("the engine serves requests"), Some(4));
            let (text, n) = tok.prompt(50, 7, 0);
            assert_eq!(n, 50, "{text}");
        }
    }
}
