#!/bin/bash
# Configures (once) and builds into ./build. Extra arguments go to meson setup.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
if [ ! -f build/build.ninja ]; then
  scripts/meson-setup.sh build "$@"
fi
meson compile -C build
