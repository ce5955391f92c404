//! Bench prompts of exact token counts, built with the model's own `tokenizer.json` the way
//! `vllm bench serve`'s random dataset builds them: seeded random token ids, decoded to text,
//! re-encoded, and trimmed or topped up until the text is exactly the asked count of tokens
//! (special tokens excluded, as the dataset counts them). A bench that claims vLLM's
//! definitions has to send what `--input-len` says, not "about 4 characters a token".

use app::domain::bench::SplitMix;
use std::path::Path;

/// The largest tokenizer.json read (large vocabularies are a few tens of MB).
const MAX_TOKENIZER_BYTES: u64 = 64 << 20;
/// Decode/re-encode rounds before the closest prompt is taken.
const ROUNDS: usize = 12;

/// A model's tokenizer, ready to size prompts.
pub struct PromptTokenizer {
    tok: tokenizers::Tokenizer,
    /// Ordinary (non-special) token ids to draw from.
    ids: Vec<u32>,
    /// Where it was read from, for the report.
    pub source: String,
}

/// Why a model's tokenizer cannot size prompts: the file and what was wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {detail}")]
pub struct TokenizerError {
    pub path: String,
    pub detail: String,
}

impl PromptTokenizer {
    /// Reads `DIR/tokenizer.json`; an error says what is missing or wrong (the bench then
    /// falls back to character-sized prompts and says so).
    pub fn from_model_dir(dir: &Path) -> Result<Self, TokenizerError> {
        let path = dir.join("tokenizer.json");
        let bad = |detail: String| TokenizerError {
            path: path.display().to_string(),
            detail,
        };
        let meta = std::fs::metadata(&path).map_err(|e| bad(e.to_string()))?;
        if meta.len() > MAX_TOKENIZER_BYTES {
            return Err(bad(format!(
                "{} bytes, more than the {MAX_TOKENIZER_BYTES} read",
                meta.len()
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| bad(e.to_string()))?;
        let tok = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| bad(e.to_string()))?;
        let specials: std::collections::HashSet<u32> = tok
            .get_added_tokens_decoder()
            .iter()
            .filter(|(_, t)| t.special)
            .map(|(id, _)| *id)
            .collect();
        let mut ids: Vec<u32> = tok
            .get_vocab(false)
            .values()
            .copied()
            .filter(|id| !specials.contains(id))
            .collect();
        ids.sort_unstable();
        if ids.is_empty() {
            return Err(bad("no ordinary tokens in its vocabulary".into()));
        }
        Ok(Self {
            tok,
            ids,
            source: path.display().to_string(),
        })
    }

    /// Tokens in `text`, special tokens excluded.
    pub fn count(&self, text: &str) -> Option<usize> {
        self.tok.encode(text, false).ok().map(|e| e.get_ids().len())
    }

    /// A prompt of `tokens` tokens for request `i`, distinct per request (the prefix cache must
    /// not flatter the engine), the same for the same seed. Returns the text and its count
    /// (which is `tokens` unless the tokenizer cannot reach it: then the closest).
    pub fn prompt(&self, tokens: usize, seed: u64, i: usize) -> (String, usize) {
        let mut rng = SplitMix::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut draw = |n: usize| -> Vec<u32> {
            (0..n)
                .map(|_| self.ids[(rng.next_u64() % self.ids.len() as u64) as usize])
                .collect()
        };
        let mut ids = draw(tokens);
        let mut best: Option<(String, usize)> = None;
        for _ in 0..ROUNDS {
            let Ok(text) = self.tok.decode(&ids, true) else { break };
            let Ok(enc) = self.tok.encode(text.as_str(), false) else {
                break;
            };
            let got = enc.get_ids().to_vec();
            if best
                .as_ref()
                .is_none_or(|(_, n)| n.abs_diff(tokens) > got.len().abs_diff(tokens))
            {
                best = Some((text.clone(), got.len()));
            }
            if got.len() == tokens {
                return (text, tokens);
            }
            ids = if got.len() > tokens {
                got[..tokens].to_vec()
            } else {
                let mut more = got;
                more.extend(draw(tokens - more.len()));
                more
            };
        }
        best.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte-level BPE like the real-engine tier's, written by hand: merges make decoded
    /// text re-encode to a different count, which the rounds must absorb.
    fn tiny() -> PromptTokenizer {
        let dir = tempfile::tempdir().unwrap();
        let mut vocab = serde_json::Map::new();
        let alphabet: Vec<char> = "abcdefghijklmnopqrstuvwxyz Ġ".chars().collect();
        for (i, c) in alphabet.iter().enumerate() {
            vocab.insert(c.to_string(), i.into());
        }
        let merges = ["a b", "ab c", "Ġ a", "d e", "de f"];
        let mut next = alphabet.len();
        for m in merges {
            vocab.insert(m.replace(' ', ""), next.into());
            next += 1;
        }
        vocab.insert("<|end|>".into(), next.into());
        let json = serde_json::json!({
            "version": "1.0",
            "added_tokens": [{"id": next, "content": "<|end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
            "normalizer": null,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
            "post_processor": null,
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
            "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "vocab": vocab, "merges": merges},
        });
        std::fs::write(dir.path().join("tokenizer.json"), json.to_string()).unwrap();
        PromptTokenizer::from_model_dir(dir.path()).unwrap()
    }

    #[test]
    fn prompts_have_the_asked_count_of_tokens() {
        let t = tiny();
        for n in [1, 7, 64, 300] {
            for i in 0..5 {
                let (text, count) = t.prompt(n, 42, i);
                assert_eq!(count, n, "{text:?}");
                assert_eq!(t.count(&text), Some(n), "{text:?}");
            }
        }
        // Distinct per request, the same per seed.
        assert_ne!(t.prompt(64, 42, 0).0, t.prompt(64, 42, 1).0);
        assert_eq!(t.prompt(64, 42, 3).0, t.prompt(64, 42, 3).0);
        // Special tokens are never drawn.
        assert!(!t.prompt(300, 1, 0).0.contains("<|end|>"));
    }

    #[test]
    fn a_missing_or_hostile_tokenizer_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = PromptTokenizer::from_model_dir(dir.path()).err().unwrap().to_string();
        assert!(e.contains("tokenizer.json"), "{e}");
        std::fs::write(dir.path().join("tokenizer.json"), b"{\"model\": 3}").unwrap();
        let e = PromptTokenizer::from_model_dir(dir.path()).err().unwrap().to_string();
        assert!(e.contains("tokenizer.json"), "{e}");
    }
}
