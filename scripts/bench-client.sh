#!/usr/bin/env bash
# Measures the bench client itself against an instant simulated engine (fixed latencies, no
# load model): the highest open-loop request rate it keeps up with, and how close its TTFT is
# to a TTFT the simulator injects at 1,000 concurrent streams. With VLLM=/path/to/vllm (and
# TOKENIZER=DIR, a local tokenizer: vllm's random dataset needs one) the same rates are run
# through `vllm bench serve` for comparison. Loopback only; every run is bounded.
# Figures: scripts/bench.sh runs this in full and writes them to benchmarks/results/.
#   scripts/bench-client.sh --short   two small rates on the debug build (what scripts/test.sh
#                                     runs): exits 1 unless every run produced its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
short=0
[ "${1:-}" = "--short" ] && short=1
if [ "$short" = 1 ]; then
  bin=$PWD/target/debug/roofline
  [ -x "$bin" ] || cargo build -p server -q
  RATES="${RATES:-50 100}"
else
  cargo build --release -p server -q
  bin=$PWD/target/release/roofline
fi
produced=0
data=$(mktemp -d)
trap 'for p in inst ttft; do "$bin" --data "$data" stop --profile $p >/dev/null 2>&1 || true; done; rm -rf "$data"' EXIT
mkdir -p "$data/models/m"
echo '{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"head_dim":128,"max_position_embeddings":32768,"vocab_size":32000}' >"$data/models/m/config.json"
printf '[engines.sim]\nkind = "vllm"\nsimulator = true\n' >"$data/roofline.toml"
port=${PORT:-18900}
printf 'ENGINE=sim\nMODEL=%s/models/m\nSERVED_MODEL_NAME=m\nPORT=%s\nENV_ROOFLINE_SIM_STARTUP_S=0.2\nENV_ROOFLINE_SIM_INSTANT=1\n' "$data" "$port" >"$data/inst.env"
printf 'ENGINE=sim\nMODEL=%s/models/m\nSERVED_MODEL_NAME=m\nPORT=%s\nENV_ROOFLINE_SIM_STARTUP_S=0.2\nENV_ROOFLINE_SIM_INSTANT=1\nENV_ROOFLINE_SIM_TTFT_MS=50\nENV_ROOFLINE_SIM_ITL_MS=10\n' "$data" "$((port + 1))" >"$data/ttft.env"
"$bin" --data "$data" profile import "$data/inst.env" >/dev/null
"$bin" --data "$data" profile import "$data/ttft.env" >/dev/null
"$bin" --data "$data" serve --profile inst >/dev/null
"$bin" --data "$data" serve --profile ttft >/dev/null

echo "client,rate,requests,duration_s,achieved_rps,dispatch_lag_p99_ms,ttft_p50_ms,ttft_p99_ms"
for rate in ${RATES:-250 500 1000 2000 4000}; do
  n=$((rate * 4)); [ "$n" -gt 16000 ] && n=16000
  [ "$short" = 1 ] && n=$rate
  out=$("$bin" --data "$data" bench --url "http://127.0.0.1:$port" --model m --rate "$rate" --requests "$n" --input-len 16 --output-len 4 --seed 1 --json 2>/dev/null || true)
  python3 - "$rate" "$n" <<PY "$out"
import json, sys
rate, n = sys.argv[1], sys.argv[2]
v = json.loads(sys.argv[3])["summary"]
print(f"roofline,{rate},{n},{v['duration_s']:.2f},{v['request_throughput']:.0f},{v['dispatch_lag_ms']['p99']:.3f},{v['ttft_ms']['p50']:.2f},{v['ttft_ms']['p99']:.2f}")
PY
  produced=$((produced + 1))
  if [ -n "${VLLM:-}" ]; then
    res=$(HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_TARGET_DEVICE=cpu "$VLLM" bench serve --backend vllm --base-url "http://127.0.0.1:$port" \
      --model m --tokenizer "${TOKENIZER:?TOKENIZER=DIR with a local tokenizer}" --dataset-name random --random-input-len 16 --random-output-len 4 \
      --num-prompts "$n" --request-rate "$rate" --ignore-eos --seed 1 --percentile-metrics ttft --metric-percentiles 50,99 2>/dev/null || true)
    dur=$(echo "$res" | awk -F: '/Benchmark duration/ {gsub(/ /,"",$2); print $2}')
    rps=$(echo "$res" | awk -F: '/Request throughput/ {gsub(/ /,"",$2); print $2}')
    p50=$(echo "$res" | awk -F: '/P50 TTFT/ {gsub(/ /,"",$2); print $2}')
    p99=$(echo "$res" | awk -F: '/P99 TTFT/ {gsub(/ /,"",$2); print $2}')
    echo "vllm-bench-serve,$rate,$n,$dur,$rps,n/a,$p50,$p99"
  fi
done

streams=1000
[ "$short" = 1 ] && streams=50
echo
echo "injected TTFT 50 ms, ITL 10 ms, $streams concurrent streams:"
# Warm-up at the same concurrency first, so the connections exist and TTFT is not
# connection setup.
"$bin" --data "$data" bench --url "http://127.0.0.1:$((port + 1))" --model m --requests $((streams * 2)) --concurrency $streams --warmup $streams --input-len 16 --output-len 16 --json 2>/dev/null |
  python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; t=s["ttft_ms"]; i=s["itl_ms"]; print("roofline: TTFT mean %.2f ms, p50 %.2f, p99 %.2f; ITL p50 %.2f ms, p99 %.2f; peak concurrency %d" % (t["mean"], t["p50"], t["p99"], i["p50"], i["p99"], s["peak_concurrent_requests"]))'
produced=$((produced + 1))
if [ "$produced" -lt 2 ]; then
  echo "bench-client: only $produced runs produced figures"
  exit 1
fi
