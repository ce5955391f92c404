#!/usr/bin/env bash
# Moves a freshly built release bundle (NEXT) into the directory the binary embeds (SITE), file
# by file: a file whose content did not change keeps the copy already there, with its time and
# its brotli and gzip copies, so cargo finds nothing new and does not link the release binary
# again (scripts/run.sh a second time on an unchanged tree starts in seconds, not minutes).
# Changed or new files under pkg/ get their .br and .gz made; files the new bundle does not
# have are removed.
#   scripts/publish-site.sh NEXT SITE
set -euo pipefail
next="$1"
site="$2"
mkdir -p "$site"
changed=0
while IFS= read -r -d '' f; do
  rel="${f#"$next"/}"
  dest="$site/$rel"
  compress=0
  case "$rel" in pkg/*) compress=1 ;; esac
  if cmp -s "$f" "$dest" && { [ "$compress" = 0 ] || { [ -f "$dest.br" ] && [ -f "$dest.gz" ]; }; }; then
    continue
  fi
  mkdir -p "$(dirname "$dest")"
  cp "$f" "$dest.tmp" && mv "$dest.tmp" "$dest"
  if [ "$compress" = 1 ]; then
    brotli -q 11 -f -o "$dest.br" "$dest"
    gzip -9 -n -c "$dest" > "$dest.gz"
  fi
  changed=$((changed + 1))
done < <(find "$next" -type f ! -name '*.br' ! -name '*.gz' -print0)
removed=0
while IFS= read -r -d '' f; do
  rel="${f#"$site"/}"
  base="${rel%.br}"
  base="${base%.gz}"
  if [ ! -f "$next/$base" ]; then
    rm -f "$f"
    removed=$((removed + 1))
  fi
done < <(find "$site" -type f -print0)
find "$site" -mindepth 1 -type d -empty -delete
echo "publish-site: $changed files new or changed, $removed removed"
