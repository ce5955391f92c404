#!/usr/bin/env bash
# Host consoles sharing one PostgreSQL, driven by a browser (issue 16): a throwaway PostgreSQL
# (scripts/postgres.sh), three hosts' data directories naming it (`database_url`, `host_name`),
# a simulated vLLM served on hosts B and C, the three consoles started, then
# end2end/fleet/multihost.spec.ts signs in on host A, restarts B's engine and runs a smoke test
# on C's from A's pages.
# Needs the site built (scripts/build-site.sh) and the debug binary; stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ROOFLINE_BIN:-target/debug/roofline}
password="${ROOFLINE_E2E_PASSWORD:-correct horse battery staple}"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$bin" --data "$work/b" stop --profile b-llama >/dev/null 2>&1 || true
  "$bin" --data "$work/c" stop --profile c-llama >/dev/null 2>&1 || true
  scripts/postgres.sh stop "$work/pg"
  rm -rf "$work"
}
trap cleanup EXIT
url=$(scripts/postgres.sh start "$work/pg" 2>"$work/pg-start.log") || { cat "$work/pg-start.log"; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The fleet's shared token: /api/engines answers a session or this, nobody else.
fleet_token=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
for h in a b c; do
  mkdir -p "$work/$h/models/llama"
  cat >"$work/$h/roofline.toml" <<TOML
database_url = "$url"
host_name = "gpu-$h"
scrape_interval_s = 1
models_root = "models"
state_dir = "state"
serve_timeout_s = 60

[engines.sim-vllm]
kind = "vllm"
simulator = true

[auth]
fleet_token = "$fleet_token"
TOML
  echo '{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "vocab_size": 128256}' \
    >"$work/$h/models/llama/config.json"
done
# One set of accounts: made through host A, valid on B.
echo "$password" | "$bin" --data "$work/a" user add alice --role operator >/dev/null 2>>"$work/cli.log"
engine_port=$(free_port)
printf 'ENGINE=sim-vllm\nMODEL=%s\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nMAX_RUNNING_REQUESTS=8\nPORT=%s\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n' \
  "$work/b/models/llama" "$engine_port" >"$work/b-llama.env"
"$bin" --data "$work/b" profile import "$work/b-llama.env" >/dev/null 2>>"$work/cli.log" || { cat "$work/cli.log"; exit 1; }
"$bin" --data "$work/b" serve --profile b-llama >/dev/null 2>>"$work/cli.log" || { cat "$work/cli.log"; exit 1; }
engine_port=$(free_port)
printf 'ENGINE=sim-vllm\nMODEL=%s\nSERVED_MODEL_NAME=m\nCONTEXT_LENGTH=8192\nTOOL_CALL_PARSER=hermes\nMAX_RUNNING_REQUESTS=8\nPORT=%s\nENV_ROOFLINE_SIM_STARTUP_S=0.5\n' \
  "$work/c/models/llama" "$engine_port" >"$work/c-llama.env"
"$bin" --data "$work/c" profile import "$work/c-llama.env" >/dev/null 2>>"$work/cli.log" || { cat "$work/cli.log"; exit 1; }
"$bin" --data "$work/c" serve --profile c-llama >/dev/null 2>>"$work/cli.log" || { cat "$work/cli.log"; exit 1; }

port_a=$(free_port) port_b=$(free_port) port_c=$(free_port)
"$bin" --data "$work/a" console --addr "127.0.0.1:$port_a" >"$work/a.log" 2>&1 &
pids+=($!)
"$bin" --data "$work/b" console --addr "127.0.0.1:$port_b" >"$work/b.log" 2>&1 &
pids+=($!)
"$bin" --data "$work/c" console --addr "127.0.0.1:$port_c" >"$work/c.log" 2>&1 &
pids+=($!)
shows_both() {
  local fleet
  fleet=$(curl -sf -H "Authorization: Bearer $fleet_token" "http://127.0.0.1:$port_a/api/engines") || return 1
  grep -q '"node":"gpu-b"' <<<"$fleet" && grep -q '"node":"gpu-c"' <<<"$fleet"
}
for _ in $(seq 1 120); do
  if shows_both; then break; fi
  sleep 0.5
done
shows_both || {
  echo "host A's console never showed hosts B's and C's engines"; cat "$work/a.log" "$work/b.log" "$work/c.log"; exit 1
}
(cd end2end && ROOFLINE_URL="http://127.0.0.1:$port_a" npx playwright test -c playwright.fleet.config.ts)
