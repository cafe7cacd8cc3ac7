#!/bin/bash
# Device call 51: the gpu suite on the tree with one ClearOnFirstUse.
set -uo pipefail
cd "$(dirname "$0")/.."
R=/tmp/r51; mkdir -p $R
tar xJf .carry/build.tar.xz; tar xJf .carry/gpu.tar.xz
export XDG_RUNTIME_DIR=/tmp
source .gpu/env.sh
timeout 300 scripts/gpu-suite.sh > $R/gpu-suite-1.22.log 2>&1; echo "suite rc $?"
grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:|Timeout:" $R/gpu-suite-1.22.log | tail -22
tar czf $OUT/r51.tgz -C /tmp r51
