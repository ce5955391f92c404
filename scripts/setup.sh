#!/usr/bin/env bash
# Installs what building and testing the console needs, and only what is missing:
#   the wasm32 target and rust-src, wasm-bindgen-cli (same version as the crate), what scripts/dist.sh
#   needs for a release (Debian's brotli; binaryen's wasm-opt from npm), and with --browser
#   Debian's Chromium, systemd-analyze, podman and runc, Prometheus and Alertmanager plus the Playwright test runner (npm; no browser
#   download).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
WASM_BINDGEN_VERSION=0.2.130

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "setup: adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  echo "setup: installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes)"
  # Not --locked: its lockfile pins a crate version crates.io no longer serves.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi
# The release's wasm builds its own standard library (scripts/build-site.sh). Without it the
# release still builds, with panic messages in the bundle (heavier pages: the page-weight
# bench says by how much), so a failure here is a warning, not the end of the set-up.
if [ ! -d "$(rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
  echo "setup: adding the rust-src component"
  rustup component add rust-src \
    || echo "setup: WARNING: rust-src could not be added; the release's wasm keeps its panic messages" >&2
fi
# wasm-split-cli (the bundle's splitter) is built from third_party/wasm-split by scripts/build-site.sh.
apt_install() { # package...
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq; APT_UPDATED=1; fi
  apt-get install -y -qq "$@" >/dev/null
}
if ! command -v brotli >/dev/null 2>&1; then
  echo "setup: installing Debian's brotli (the release's precompressed bundle)"
  apt_install brotli
fi
if [ ! -x packaging/tools/node_modules/.bin/wasm-opt ]; then
  echo "setup: installing binaryen's wasm-opt (npm, pinned)"
  npm ci --prefix packaging/tools --no-audit --no-fund >/dev/null
fi
if [ "${1:-}" = "--browser" ]; then
  if ! command -v chromium >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium"
    apt_install chromium
  fi
  if ! command -v prometheus >/dev/null 2>&1 || ! command -v prometheus-alertmanager >/dev/null 2>&1; then
    echo "setup: installing Debian's prometheus and prometheus-alertmanager (the alerting pack's test)"
    apt_install --no-install-recommends prometheus prometheus-alertmanager
  fi
  if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
    echo "setup: installing Debian's podman and runc (the container engine tests start real containers)"
    apt_install podman runc
  fi
  if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "setup: installing Debian's systemd (systemd-analyze checks the release's unit)"
    apt_install systemd
  fi
  if [ ! -x end2end/node_modules/.bin/playwright ]; then
    echo "setup: installing the Playwright test runner"
    (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
  fi
fi
