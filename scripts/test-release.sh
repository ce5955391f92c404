#!/usr/bin/env bash
# Checks the release tarball the way an operator uses it (issue 14): its checksum and
# contents; the systemd unit through `systemd-analyze verify`; the binary unpacked into an
# empty directory and started on a fresh data dir from an empty working directory (no
# checkout, no target/site in reach); a browser signs in through the page and sees the demo
# fleet; the bundle is precompressed, content-hashed and cached for good; and the page-weight
# bench records what a browser transfers (BENCHMARKS.md "Page weight").
#   scripts/test-release.sh [TARBALL]      default: the newest in dist/
#   ROOFLINE_WEIGHT_OUT=FILE               where the page-weight figures go (JSON)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
tarball="${1:-$(ls -t dist/roofline-*-linux-x86_64.tar.gz 2>/dev/null | head -1)}"
[ -f "$tarball" ] || { echo "test-release: no tarball (run scripts/dist.sh)"; exit 1; }
tarball="$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")"
port="${ROOFLINE_RELEASE_PORT:-3996}"
export ROOFLINE_E2E_PASSWORD="${ROOFLINE_E2E_PASSWORD:-correct horse battery staple}"
export ROOFLINE_WEIGHT_OUT="${ROOFLINE_WEIGHT_OUT:-$repo/target/page-weight.json}"
tmp="$(mktemp -d)"
console=""
bin=""
cleanup() {
  [ -n "$console" ] && kill "$console" 2>/dev/null && wait "$console" 2>/dev/null || true
  if [ -n "$bin" ]; then
    for p in demo-vllm demo-sglang; do "$bin" --data "$tmp/data" stop --profile "$p" >/dev/null 2>&1 || true; done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== checksum and contents"
(cd "$(dirname "$tarball")" && sha256sum -c "$(basename "$tarball").sha256")
mkdir -p "$tmp/unpacked" "$tmp/cwd"
tar -xzf "$tarball" -C "$tmp/unpacked"
dir="$(echo "$tmp"/unpacked/roofline-*)"
for f in roofline roofline.toml.example roofline.service INSTALL.md LICENSE \
  prometheus/prometheus.yml prometheus/roofline-alerts.yml prometheus/alertmanager.yml grafana/roofline-dashboard.json; do
  [ -f "$dir/$f" ] || { echo "the tarball has no $f"; exit 1; }
done
bin="$dir/roofline"
[ -x "$bin" ] || { echo "roofline is not executable"; exit 1; }
if file "$bin" 2>/dev/null | grep -q "not stripped"; then echo "the binary is not stripped"; exit 1; fi

promtool check rules "$dir/prometheus/roofline-alerts.yml" >/dev/null

echo "== systemd-analyze verify"
# The unit names /opt/roofline/roofline; verify the same unit pointing at the unpacked binary.
sed "s#/opt/roofline/roofline#$bin#g" "$dir/roofline.service" > "$tmp/roofline.service"
grep -q '^KillMode=process$' "$tmp/roofline.service" || { echo "the unit must keep KillMode=process"; exit 1; }
out="$(systemd-analyze verify "$tmp/roofline.service" 2>&1)" || { echo "$out"; exit 1; }
# verify exits 0 on some warnings; any line naming the unit is a finding.
if echo "$out" | grep -q "roofline.service"; then echo "$out"; exit 1; fi

echo "== the release on a fresh data dir, from an empty directory"
cd "$tmp/cwd"
echo "$ROOFLINE_E2E_PASSWORD" | env -u ROOFLINE_SITE "$bin" --data "$tmp/data" user add root --role admin >/dev/null
t0=$(date +%s%N)
env -u ROOFLINE_SITE "$bin" --data "$tmp/data" console --demo --addr "127.0.0.1:$port" >"$tmp/console.log" 2>&1 &
console=$!
# Start-up (BENCHMARKS.md): from spawn to /readyz answering 200 (migrations, the demo fleet's
# profiles written, collectors running), then to both demo engines healthy.
for _ in $(seq 1 600); do
  curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null && break
  sleep 0.02
done
ready_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
healthy=0
for _ in $(seq 1 120); do
  kill -0 "$console" 2>/dev/null || { echo "the console exited"; cat "$tmp/console.log"; exit 1; }
  healthy=$("$bin" --data "$tmp/data" status --json 2>/dev/null | grep -c '"state": "healthy"' || true)
  [ "$healthy" = "2" ] && break
  sleep 0.5
done
[ "$healthy" = "2" ] || { echo "the demo fleet did not become healthy"; cat "$tmp/console.log"; exit 1; }
healthy_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "start-up: /readyz after ${ready_ms} ms, both demo engines healthy after ${healthy_ms} ms; binary $(stat -c %s "$bin") bytes, tarball $(stat -c %s "$tarball") bytes"
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null
cd "$repo/end2end"
ROOFLINE_URL="http://127.0.0.1:$port" npx playwright test -c playwright.release.config.ts
echo "page weight figures: $ROOFLINE_WEIGHT_OUT"
