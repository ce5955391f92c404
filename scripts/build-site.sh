#!/usr/bin/env bash
# Builds the browser half of the console into target/site: the app crate for wasm32 with the
# `hydrate` feature, wasm-bindgen's JS glue, and the stylesheet. Plain cargo + wasm-bindgen
# (no cargo-leptos: it costs ~25 minutes to install on the CI machine).
#   PROFILE=release scripts/build-site.sh   for the size-optimised bundle (wasm-release profile)
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-debug}"
site="target/site"
if [ "$profile" = "release" ]; then
  cargo build -p app --lib --target wasm32-unknown-unknown --no-default-features --features hydrate --profile wasm-release
  wasm="target/wasm32-unknown-unknown/wasm-release/app.wasm"
else
  cargo build -p app --lib --target wasm32-unknown-unknown --no-default-features --features hydrate
  wasm="target/wasm32-unknown-unknown/debug/app.wasm"
fi
mkdir -p "$site/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$site/pkg" --out-name console "$wasm"
cp style/main.css "$site/pkg/console.css"
echo "site built in $site ($(du -h "$site/pkg/console_bg.wasm" | cut -f1) wasm)"
