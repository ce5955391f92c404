#!/usr/bin/env bash
# Builds the browser half of the console into target/site: the app crate for wasm32 with the
# `hydrate` feature, split at its lazily loaded pages (wasm-split-cli: the main part,
# `console_bg.wasm`, one `split_*.wasm` per page and `chunk_*.wasm` for code a group's pages
# share, loaded through `__wasm_split.js`), wasm-bindgen's JS glue, the stylesheet, and the console's
# chart script (npm's uPlot through esbuild). Plain cargo + wasm-split-cli + wasm-bindgen, the steps cargo-leptos runs (not
# cargo-leptos itself: it costs ~25 minutes to install on the CI machine).
#   PROFILE=release scripts/build-site.sh   for the size-optimised bundle (wasm-release profile)
#   SITE=DIR scripts/build-site.sh          to write it elsewhere (scripts/dist.sh does)
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-debug}"
site="${SITE:-target/site}"
if [ "$profile" = "release" ]; then
  # The release's standard library is built with the bundle (rust-src, scripts/setup.sh) so
  # that a panic aborts at once instead of formatting a message, and no panic carries its
  # source location: the formatting and the locations are a tenth of every page's wasm
  # (BENCHMARKS.md, "Page weight"). Debug builds (the browser tests) keep both. These are
  # unstable options of the pinned stable compiler, enabled the way Firefox and Linux build
  # theirs (RUSTC_BOOTSTRAP); a compiler without them builds the bundle as before, and says so.
  release_flags=(-Zlocation-detail=none -Zunstable-options -Cpanic=immediate-abort)
  if RUSTC_BOOTSTRAP=1 rustc --target wasm32-unknown-unknown "${release_flags[@]}" --print cfg >/dev/null 2>&1 \
    && [ -d "$(rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
    flags="$(printf '"%s",' "${release_flags[@]}")"
    RUSTC_BOOTSTRAP=1 cargo build -Zbuild-std=std,panic_abort \
      --config "target.wasm32-unknown-unknown.rustflags=[${flags%,}]" \
      -p app --lib --target wasm32-unknown-unknown --no-default-features --features hydrate --profile wasm-release
  else
    echo "build-site: this compiler cannot build the standard library with immediate aborts (rust-src missing?); the bundle keeps panic messages" >&2
    cargo build -p app --lib --target wasm32-unknown-unknown --no-default-features --features hydrate --profile wasm-release
  fi
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
# The splitter is this repository's copy of wasm-split-cli (third_party/wasm-split: upstream
# plus a policy for shared code; built here, a no-op when unchanged). A part per page
# (`group__page`, app/src/lazy_pages.rs); code pages of one group share goes in that group's
# chunk, code three or more groups share in the main part: each page loads the main part, its
# own, and at most a few chunks (a chunk under 10 KB of code goes to the main part too: one
# request fewer for a few hundred bytes).
cargo build --quiet --release --locked --features build-binary \
  --manifest-path third_party/wasm-split/Cargo.toml --target-dir target/wasm-split-tool
target/wasm-split-tool/release/wasm-split-cli "$wasm" "$split" --out-name console \
  --by-group --main-if-shared-by 3 --min-chunk-bytes 10000 --on-demand-group views
mv "$split"/split_*.wasm "$split"/__wasm_split.js "$site/pkg/"
if compgen -G "$split/chunk_*.wasm" >/dev/null; then mv "$split"/chunk_*.wasm "$site/pkg/"; fi
wasm-bindgen --target web --no-typescript --keep-lld-exports --out-dir "$site/pkg" --out-name console "$split/console.wasm"
cp style/main.css "$site/pkg/console.css"
# The browser's messages, one file per language (app::components::locales): the wasm carries
# none, a page fetches its own language.
for lang in en ru; do cp "locales/$lang/main.ftl" "$site/pkg/locale-$lang.ftl"; done
# The chart script: uPlot and its stylesheet (app/assets/charts.js), bundled by esbuild; both
# pinned in app/assets/package-lock.json, run here, nothing fetched at run time.
assets=app/assets
if [ ! -x "$assets/node_modules/.bin/esbuild" ] || [ ! -f "$assets/node_modules/uplot/package.json" ]; then
  npm ci --prefix "$assets" --no-audit --no-fund
fi
"$assets/node_modules/.bin/esbuild" "$assets/charts.js" --bundle --minify --format=iife --target=es2020 \
  --loader:.css=text --legal-comments=none --log-level=warning --outfile="$site/pkg/charts.min.js"
# The release's JavaScript glue (wasm-bindgen's, the splitter's loader, the crate's snippets)
# minified the same way: modules still, their exports and the names the wasm imports kept.
if [ "$profile" = "release" ]; then
  while IFS= read -r js; do
    "$assets/node_modules/.bin/esbuild" "$js" --minify --format=esm --target=es2020 \
      --legal-comments=none --log-level=error --outfile="$js.min" && mv "$js.min" "$js"
  done < <(find "$site/pkg" -name '*.js' ! -name 'charts.min.js')
fi
rm -f "$site/pkg/echarts.min.js" "$site/pkg/echarts-lang-ru.js"
echo "site built in $site ($(du -h "$site/pkg/console_bg.wasm" | cut -f1) wasm)"
