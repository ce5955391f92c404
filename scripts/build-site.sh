#!/usr/bin/env bash
# Builds the browser half of the console into target/site: the app crate for wasm32 with the
# `hydrate` feature, split at its lazily loaded pages (wasm-split-cli: the fleet's part,
# `console_bg.wasm`, plus one `split_*.wasm` per page and `chunk_*.wasm` for code pages share,
# loaded through `__wasm_split.js`), wasm-bindgen's JS glue, the stylesheet, and ECharts (from
# npm). Plain cargo + wasm-split-cli + wasm-bindgen, the steps cargo-leptos runs (not
# cargo-leptos itself: it costs ~25 minutes to install on the CI machine).
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
rm -rf "$site/pkg/snippets" "$site/pkg"/__wasm_split*.js "$site/pkg"/split_*.wasm "$site/pkg"/chunk_*.wasm
mkdir -p "$site/pkg"
# The split needs the relocations the link kept (.cargo/config.toml: --emit-relocs); the
# parts import the main module's memory and table through `__wasm_split.js`, which imports
# `./console.js`, so all of them sit side by side in pkg/.
split="$(mktemp -d)"
trap 'rm -rf "$split"' EXIT
wasm-split-cli "$wasm" "$split" --out-name console
mv "$split"/split_*.wasm "$split"/__wasm_split.js "$site/pkg/"
if compgen -G "$split/chunk_*.wasm" >/dev/null; then mv "$split"/chunk_*.wasm "$site/pkg/"; fi
wasm-bindgen --target web --no-typescript --keep-lld-exports --out-dir "$site/pkg" --out-name console "$split/console.wasm"
cp style/main.css "$site/pkg/console.css"
# ECharts from npm (pinned in app/assets/package-lock.json), served by the console itself.
if [ ! -f app/assets/node_modules/echarts/dist/echarts.min.js ]; then
  npm ci --prefix app/assets --no-audit --no-fund
fi
cp app/assets/node_modules/echarts/dist/echarts.min.js "$site/pkg/echarts.min.js"
cp app/assets/node_modules/echarts/i18n/langRU.js "$site/pkg/echarts-lang-ru.js"
echo "site built in $site ($(du -h "$site/pkg/console_bg.wasm" | cut -f1) wasm)"
