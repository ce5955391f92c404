#!/usr/bin/env bash
# Builds the release binary (scripts/dist.sh --binary: the tarball's binary, with the browser
# bundle compiled in; a second run on an unchanged tree links nothing) and runs it at
# http://127.0.0.1:3000 with a demo fleet of two simulated engines and their demo traffic
# (data in ./.roofline, or ROOFLINE_DATA). Extra arguments go to `roofline console`.
#   scripts/run.sh --debug [ARGS]   a debug build serving target/site instead (faster to build)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh
if [ "${1:-}" = "--debug" ]; then
  shift
  scripts/build-site.sh
  cargo build -p server
  exec target/debug/roofline --data "${ROOFLINE_DATA:-.roofline}" console --demo "$@"
fi
# Only the binary (no tarball); on an unchanged tree nothing is linked again.
scripts/dist.sh --binary
exec target/dist/roofline --data "${ROOFLINE_DATA:-.roofline}" console --demo "$@"
