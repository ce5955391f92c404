#!/usr/bin/env bash
# Builds and runs the console at http://127.0.0.1:3000 with a demo fleet of two simulated
# engines (data in ./.roofline, or ROOFLINE_DATA). Extra arguments go to `roofline console`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh
scripts/build-site.sh
cargo build -p server
exec target/debug/roofline --data "${ROOFLINE_DATA:-.roofline}" console --demo "$@"
