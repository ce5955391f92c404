#!/usr/bin/env bash
# The fleet page's browser bench (issue 15; BENCHMARKS.md "Fleet page with a thousand engines"):
# 50 fake remote consoles of 20 engines each on loopback (end2end/bench/fake_consoles.py), one
# console listing them as [[fleet]] hosts, and headless Chromium on its fleet page measuring
# long tasks, frame times and how fast a search and clearing it show their rows.
#   scripts/bench-fleet-browser.sh            the release binary (target/dist/roofline) when
#                                             built, else the debug build and target/site
#   ROOFLINE_BENCH_OUT=FILE                   where the figures go (JSON)
#   ROOFLINE_BENCH_BIN=target/debug/roofline  another build (it serves target/site)
#   ROOFLINE_BENCH_WINDOW_MS=3000             shorter measuring windows (scripts/test.sh)
# Bounded: the fake consoles stop by themselves after 15 minutes, the bench within 10.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
port="${ROOFLINE_BENCH_PORT:-3997}"
base=19100
consoles=50
export ROOFLINE_E2E_PASSWORD="${ROOFLINE_E2E_PASSWORD:-correct horse battery staple}"
export ROOFLINE_BENCH_OUT="${ROOFLINE_BENCH_OUT:-$PWD/target/fleet-1000.json}"
bin="${ROOFLINE_BENCH_BIN:-target/dist/roofline}"
if [ ! -x "$bin" ]; then
  scripts/build-site.sh >/dev/null
  cargo build -q -p server
  bin=target/debug/roofline
fi
data="$(mktemp -d)"
fakes=""
console=""
cleanup() {
  [ -n "$console" ] && kill "$console" 2>/dev/null || true
  [ -n "$fakes" ] && kill "$fakes" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
python3 end2end/bench/fake_consoles.py --base-port "$base" --consoles "$consoles" --engines 20 --seconds 900 &
fakes=$!
{
  echo "listen = \"127.0.0.1:$port\""
  for i in $(seq 0 $((consoles - 1))); do
    printf '[[fleet]]\nname = "gpu-%02d"\nconsole = "http://127.0.0.1:%d"\n' "$i" $((base + i))
  done
} > "$data/roofline.toml"
echo "$ROOFLINE_E2E_PASSWORD" | "$bin" --data "$data" user add root --role admin >/dev/null
"$bin" --data "$data" console >"$data/console.txt" 2>&1 &
console=$!
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
echo "bench: $bin, $consoles consoles x 20 engines"
(cd end2end && ROOFLINE_URL="http://127.0.0.1:$port" npx playwright test -c playwright.bench.config.ts)
