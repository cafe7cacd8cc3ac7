#!/bin/bash
# Device call 44: engines on GPUs with less shared memory (a cap stands in).
# 1) the new test against three builds that each lack one of the fixes;
# 2) the new test and the gpu suite on this tree; 3) benches beside 64719b2.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
R=/tmp/r44; mkdir -p $R
save() { tar czf $OUT/r44.tgz -C /tmp r44; }
tar xJf .carry/build.tar.xz; tar xJf .carry/gpu.tar.xz
mkdir -p /tmp/old && tar xJf .carry/base-64719b2.tar.xz -C /tmp/old
export XDG_RUNTIME_DIR=/tmp
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for v in nlm64 clahe1 histeq64k; do
  GST_CHECKS=test_engines_on_smaller_gpus timeout 120 .carry/variants/test-engines-gpu-$v > $R/variant-$v.log 2>&1
  echo "variant $v rc $?"; grep -E "Checks|Failures|Errors|:E:|:F:" $R/variant-$v.log | cut -c1-400 | tail -3
done
GST_CHECKS=test_engines_on_smaller_gpus timeout 200 build/tests/test-engines-gpu > $R/new-test.log 2>&1
echo "new test rc $?"; grep -E "Checks|:E:|:F:" $R/new-test.log | cut -c1-400 | tail -3
echo "[$(( $(date +%s) - t0 )) s]"; save
timeout 330 scripts/gpu-suite.sh > $R/gpu-suite-1.22.log 2>&1; echo "suite rc $?"
grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:|Timeout:" $R/gpu-suite-1.22.log | tail -22
echo "[$(( $(date +%s) - t0 )) s]"; save
for b in nlm histeq clahe; do
  for v in new old; do
    d=build; [ $v = old ] && d=/tmp/old/build
    timeout 60 $d/bench/${b}_bench --size 1080p > $R/$b-$v.txt 2>&1
  done
done
echo "[$(( $(date +%s) - t0 )) s]"; save
