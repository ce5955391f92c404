#!/usr/bin/env bash
# Runs every benchmark in its full mode and writes one dated block of results, with the
# machine and the commit, to benchmarks/results/DATE-COMMIT.md (BENCHMARKS.md quotes these
# blocks). Loopback only; every run is bounded. Takes about 15 minutes on 2 cores (most of it
# the release build).
#   scripts/bench.sh                 all of them
#   scripts/bench.sh parser fleet    a selection (parser, fleet, flood, stall, hash, vram, client)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
which=("$@")
[ ${#which[@]} -eq 0 ] && which=(parser fleet flood stall hash vram client)
commit=$(git rev-parse --short HEAD)
dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo " (with uncommitted changes)" || true)
mkdir -p benchmarks/results
out="benchmarks/results/$(date -u +%F)-$commit.md"
{
  echo "## $(date -u '+%F %H:%M') UTC, commit $commit$dirty"
  echo
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) memory, $(uname -sr)."
  echo
} >"$out"
for b in "${which[@]}"; do
  case "$b" in
    parser)
      echo "### Prometheus text parser: \`cargo bench -p server --bench benches -- parser\`" >>"$out"
      echo >>"$out"
      cargo bench -p server --bench benches -- parser 2>/dev/null | grep '^|' >>"$out"
      ;;
    fleet)
      echo >>"$out"
      echo "### Fleet scale: \`cargo bench -p server --bench benches -- fleet_scale --engines 1000 --seconds 30\`" >>"$out"
      echo >>"$out"
      cargo bench -p server --bench benches -- fleet_scale --engines 1000 --seconds 30 2>/dev/null | grep '^|' >>"$out"
      ;;
    flood)
      echo >>"$out"
      echo "### Sign-in flood: \`cargo bench -p server --bench benches -- signin_flood --attempts 500\`" >>"$out"
      echo >>"$out"
      cargo bench -p server --bench benches -- signin_flood --attempts 500 2>/dev/null | grep '^|' >>"$out"
      ;;
    stall)
      echo >>"$out"
      echo "### Stall detector: \`cargo bench -p server --bench benches -- stall\`" >>"$out"
      echo >>"$out"
      cargo bench -p server --bench benches -- stall 2>/dev/null | grep -E '^(\||stall)' >>"$out"
      ;;
    hash)
      echo >>"$out"
      echo "### Model hashing: \`cargo bench -p server --bench benches -- model_hash\`" >>"$out"
      echo >>"$out"
      cargo bench -p server --bench benches -- model_hash 2>/dev/null | grep '^|' >>"$out"
      ;;
    vram)
      echo >>"$out"
      echo "### VRAM calculator against real vLLM startups: \`cargo test -p app --lib vram_dev_startups -- --nocapture\`" >>"$out"
      echo >>"$out"
      cargo test -q -p app --lib vram_dev_startups -- --nocapture 2>/dev/null | grep -E '^(\||KV |MISS)' >>"$out"
      ;;
    client)
      echo >>"$out"
      echo "### Bench client: \`scripts/bench-client.sh\`" >>"$out"
      echo >>"$out"
      echo '```' >>"$out"
      scripts/bench-client.sh >>"$out"
      echo '```' >>"$out"
      ;;
    *) echo "unknown benchmark $b (parser, fleet, flood, stall, hash, vram, client)"; exit 2 ;;
  esac
done
cat "$out"
echo
echo "written to $out"
