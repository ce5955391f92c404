#!/usr/bin/env bash
# Builds the browser half of the console into target/site: the app crate for wasm32 with the
# `hydrate` feature, wasm-bindgen's JS glue, the stylesheet, and ECharts (from npm). Plain cargo + wasm-bindgen
# (no cargo-leptos: it costs ~25 minutes to install on the CI machine).
#   PROFILE=release scripts/build-site.sh   for the size-optimised bundle (wasm-release profile)
#   SITE=DIR scripts/build-site.sh          to write it elsewhere (scripts/dist.sh does)
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-debug}"
site="${SITE:-target/site}"
if [ "$profile" = "release" ]; then
  cargo build -p app --lib --target wasm32-unknown-unknown --no-default-features --features hydrate --profile wasm-release
  wasm="target/wasm32-unknown-unknown/wasm-release/app.wasm"
else
  cargo build -p app --lib --target wasm32-unknown-unknown --no-default-features --features hydrate
  wasm="target/wasm32-unknown-unknown/debug/app.wasm"
fi
rm -rf "$site/pkg/snippets"
mkdir -p "$site/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$site/pkg" --out-name console "$wasm"
cp style/main.css "$site/pkg/console.css"
# ECharts from npm (pinned in app/assets/package-lock.json), served by the console itself.
if [ ! -f app/assets/node_modules/echarts/dist/echarts.min.js ]; then
  npm ci --prefix app/assets --no-audit --no-fund
fi
cp app/assets/node_modules/echarts/dist/echarts.min.js "$site/pkg/echarts.min.js"
cp app/assets/node_modules/echarts/i18n/langRU.js "$site/pkg/echarts-lang-ru.js"
echo "site built in $site ($(du -h "$site/pkg/console_bg.wasm" | cut -f1) wasm)"
