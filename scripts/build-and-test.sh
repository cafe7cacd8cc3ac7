#!/bin/bash
# Builds and runs every test. GPU tests (suite "gpu") skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
meson test -C build --print-errorlogs "$@"
