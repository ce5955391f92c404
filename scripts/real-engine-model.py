"""Writes a tiny random-weight Llama with a locally trained tokenizer, for the real-engine tests.

Nothing is fetched: the tokenizer is a byte-level BPE trained on Python's own standard library
sources, the weights are random. Its answers are noise, which the tests rely on (a tool-call
smoke test must fail, and explain why). Sizes follow ../shared/reference/real-engine.md.
"""

import json
import os
import sys
import sysconfig
from pathlib import Path

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

SPECIALS = ["<|begin|>", "<|end|>", "<|pad|>", "<|system|>", "<|user|>", "<|assistant|>",
            "<|tool|>", "<tool_call>", "</tool_call>"]
VOCAB = 2048

stdlib = Path(sysconfig.get_paths()["stdlib"])
files = sorted(str(p) for p in stdlib.glob("*.py"))[:200]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIALS,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train(files, trainer)
vocab_size = tok.get_vocab_size()

TEMPLATE = (
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}<|system|>{{ m['content'] }}<|end|>"
    "{% elif m['role'] == 'user' %}<|user|>{{ m['content'] }}<|end|>"
    "{% elif m['role'] == 'tool' %}<|tool|>{{ m['content'] }}<|end|>"
    "{% else %}<|assistant|>{{ m['content'] or '' }}"
    "{% if m.get('tool_calls') %}{% for c in m['tool_calls'] %}<tool_call>"
    "{{ {'name': c['function']['name'], 'arguments': c['function']['arguments']} | tojson }}"
    "</tool_call>{% endfor %}{% endif %}<|end|>{% endif %}"
    "{% endfor %}"
    "{% if tools %}<|system|>Tools: {{ tools | tojson }}<|end|>{% endif %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

from transformers import PreTrainedTokenizerFast  # noqa: E402

fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|begin|>", eos_token="<|end|>",
                               pad_token="<|pad|>",
                               additional_special_tokens=["<tool_call>", "</tool_call>"])
fast.chat_template = TEMPLATE
fast.save_pretrained(out)
# transformers 5 names its own backend class and keeps the template in a separate file; vLLM and
# the console read tokenizer_config.json, so both are set there too.
cfg_path = out / "tokenizer_config.json"
cfg = json.loads(cfg_path.read_text())
cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
cfg["chat_template"] = TEMPLATE
cfg["model_max_length"] = 4096
cfg_path.write_text(json.dumps(cfg, indent=2))

import torch  # noqa: E402
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM  # noqa: E402

torch.manual_seed(0)
config = LlamaConfig(vocab_size=vocab_size, hidden_size=256, intermediate_size=512,
                     num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                     max_position_embeddings=4096, torch_dtype="bfloat16",
                     bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                     pad_token_id=fast.pad_token_id, tie_word_embeddings=False)
model = LlamaForCausalLM(config).to(torch.bfloat16)
model.save_pretrained(out, safe_serialization=True)
GenerationConfig(bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                 pad_token_id=fast.pad_token_id, max_new_tokens=64).save_pretrained(out)
print(f"model written to {out}: vocab {vocab_size}, files {sorted(os.listdir(out))}")
