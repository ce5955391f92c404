#!/usr/bin/env bash
# Builds the release an operator copies to an air-gapped host:
#   dist/roofline-<version>-linux-x86_64.tar.gz
# holding one binary that embeds the whole browser bundle (it runs from anywhere, no site
# directory), roofline.toml.example, the systemd unit, INSTALL.md, LICENSE, and the
# Prometheus/Alertmanager/Grafana pack (prometheus/, grafana/).
#
# The bundle: the wasm-release build through wasm-opt -Os (binaryen from npm; the name section
# and producers stripped), the stylesheet and the chart script; content-hashed names; each file stored
# with its brotli and gzip copies, so the console never compresses per request.
#   scripts/dist.sh            build (about 15 minutes on two cores from cold)
#   scripts/dist.sh --binary   only the binary (target/dist/roofline; what scripts/run.sh runs)
#   OUT=DIR scripts/dist.sh    put the tarball elsewhere (default dist/)
# A rebuild on an unchanged tree links nothing again: the bundle is published into the
# embedded directory file by file (scripts/publish-site.sh), so unchanged files keep their time.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
root="$PWD"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
name="roofline-${version}-linux-x86_64"
out="${OUT:-dist}"
work="target/dist-work"
raw="$work/raw"
next="$work/site.next"
site="$work/site"

need() { command -v "$1" >/dev/null || { echo "dist: $1 is missing (scripts/setup.sh --dist installs it)" >&2; exit 1; }; }
need brotli
need gzip
need sha256sum

# 1. The browser bundle, release profile.
rm -rf "$raw" "$next"
PROFILE=release SITE="$raw" scripts/build-site.sh

# 2. wasm-opt from npm (pinned in packaging/tools/package-lock.json).
if [ ! -x packaging/tools/node_modules/.bin/wasm-opt ]; then
  npm ci --prefix packaging/tools --no-audit --no-fund
fi
# wasm-opt takes minutes under node; each part's output is kept by its input's hash, so a
# rebuild reuses every part that did not change. The parts (the fleet's, one per page, the
# shared chunks) are optimised one by one, on every core.
binaryen="$(sed -n 's/.*"binaryen": "\(.*\)".*/\1/p' packaging/tools/package.json)"
cache="target/dist-work/wasm-opt-cache"
mkdir -p "$cache"
parts=$(cd "$raw/pkg" && ls console_bg.wasm split_*.wasm chunk_*.wasm 2>/dev/null)
before=$(cd "$raw/pkg" && cat $parts | wc -c)
optimise() { # part
  local key; key="$(sha256sum "$raw/pkg/$1" | cut -c1-32)-$binaryen"
  if [ ! -f "$cache/$key.wasm" ]; then
    # The split parts carry no target_features section: the features rustc's wasm32 target
    # emits are named. -Os, not -Oz: a few percent more bytes before compression, about 0.5 %
    # fewer after (what is sent; BENCHMARKS.md, "Page weight").
    packaging/tools/node_modules/.bin/wasm-opt -Os --strip-debug --strip-producers \
      --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
      --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue \
      "$raw/pkg/$1" -o "$cache/$key.tmp" 2>"$cache/$key.log" \
      || { cat "$cache/$key.log" >&2; echo "wasm-opt failed on $1" >&2; exit 1; }
    # Its warnings are about the name subsections wasm-split keeps (stripped anyway).
    rm -f "$cache/$key.log"
    mv "$cache/$key.tmp" "$cache/$key.wasm"
  fi
  cp "$cache/$key.wasm" "$raw/pkg/$1"
  touch "$cache/$key.wasm"
}
export -f optimise
export raw cache binaryen
printf '%s\n' $parts | xargs -P "$(nproc)" -I{} bash -c 'optimise "$1"' _ {}
# Outputs no part of this bundle used are old: keep the cache to this bundle's size.
find "$cache" -name '*.wasm' -mmin +1440 -delete
echo "wasm-opt: $(echo "$parts" | wc -l) parts, $before -> $(cd "$raw/pkg" && cat $parts | wc -c) bytes"

# 3. Content-hashed names. The wasm-bindgen bundle (console.js imports its wasm and snippets
#    by relative name, __wasm_split.js the parts and console.js) moves as one directory named by the hash of all its files; the
#    stylesheet and the chart script each get their own hash, so an unchanged chart script stays cached
#    across releases.
hash_of() { sha256sum "$@" | sha256sum | cut -c1-16; }
mkdir -p "$next/pkg"
bundle_files=$(cd "$raw/pkg" && { echo console.js; echo __wasm_split.js; echo "$parts"; ls locale-*.ftl; find snippets -type f 2>/dev/null; } | LC_ALL=C sort)
bundle_hash=$(cd "$raw/pkg" && hash_of $bundle_files)
mkdir -p "$next/pkg/$bundle_hash"
(cd "$raw/pkg" && tar cf - $bundle_files) | (cd "$next/pkg/$bundle_hash" && tar xf -)
one() { # logical-name file stem ext
  local h; h=$(hash_of "$raw/pkg/$2")
  cp "$raw/pkg/$2" "$next/pkg/$3.$h.$4"
  printf '%s\t/pkg/%s\n' "$1" "$3.$h.$4" >> "$next/assets.txt"
}
printf 'bundle\t/pkg/%s\n' "$bundle_hash" > "$next/assets.txt"
one css console.css console css
one charts charts.min.js charts.min js

# 4. Into the embedded directory, with precompressed copies of what changed.
scripts/publish-site.sh "$next" "$site"

# 5. The binary, with the bundle compiled in.
ROOFLINE_EMBED_SITE="$root/$site" cargo build -p server --bin roofline --profile dist

[ "${1:-}" = "--binary" ] && { echo "dist: target/dist/roofline"; exit 0; }

# 6. The tarball.
stage="$work/$name"
rm -rf "$stage"
mkdir -p "$stage" "$out"
install -m 0755 target/dist/roofline "$stage/roofline"
install -m 0644 packaging/roofline.toml.example packaging/roofline.service packaging/INSTALL.md LICENSE "$stage/"
# The monitoring pack: scrape and routing configuration, alert rules, the Grafana dashboard.
install -d "$stage/prometheus" "$stage/grafana"
install -m 0644 packaging/prometheus/*.yml "$stage/prometheus/"
install -m 0644 packaging/grafana/*.json "$stage/grafana/"
tar -C "$work" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "dist: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)); binary $(du -h "$stage/roofline" | cut -f1)"
echo "bundle (compressed, as sent to a browser that takes brotli):"
for f in "$site"/pkg/*/console_bg.wasm "$site"/pkg/*/console.js "$site"/pkg/console.*.css "$site"/pkg/charts.min.*.js; do
  printf '  %-60s %8d bytes, br %8d\n' "${f#"$site"/}" "$(stat -c %s "$f")" "$(stat -c %s "$f.br")"
done
