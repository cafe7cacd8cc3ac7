#!/bin/bash
# Device call 50: test_engines_on_smaller_gpus with unsharp masking, then
# the whole engines-gpu binary.
set -uo pipefail
cd "$(dirname "$0")/.."
R=/tmp/r50; mkdir -p $R
tar xJf .carry/gpu.tar.xz
export XDG_RUNTIME_DIR=/tmp
source .gpu/env.sh
CK_FORK=no GST_CHECKS=test_engines_on_smaller_gpus timeout 200 .carry/t50/test-engines-gpu > $R/new-test.log 2>&1
echo "new test rc $?"; grep -E "Checks|:E:|:F:" $R/new-test.log | cut -c1-400 | tail -3
CK_FORK=no CUDAFILTERS_POISON_OUTPUT=1 timeout 240 .carry/t50/test-engines-gpu > $R/engines-gpu.log 2>&1
echo "engines-gpu rc $?"; grep -E "Checks|:E:|:F:" $R/engines-gpu.log | cut -c1-400 | tail -3
tar czf $OUT/r50.tgz -C /tmp r50
