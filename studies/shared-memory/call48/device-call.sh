#!/bin/bash
# Device call 48: the final tree (warp_sum shared, one decision for the
# window's frame difference): the new test, the gpu suite, nlm_bench beside
# 64719b2.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
R=/tmp/r48; mkdir -p $R
save() { tar czf $OUT/r48.tgz -C /tmp r48; }
tar xJf .carry/build.tar.xz; tar xJf .carry/gpu.tar.xz
mkdir -p /tmp/old && tar xJf .carry/base-64719b2.tar.xz -C /tmp/old
export XDG_RUNTIME_DIR=/tmp
source .gpu/env.sh
CK_FORK=no GST_CHECKS=test_engines_on_smaller_gpus timeout 200 build/tests/test-engines-gpu > $R/new-test.log 2>&1
echo "new test rc $?"; grep -E "Checks|:E:|:F:" $R/new-test.log | cut -c1-400 | tail -3
timeout 330 scripts/gpu-suite.sh > $R/gpu-suite-1.22.log 2>&1; echo "suite rc $?"
grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:|Timeout:" $R/gpu-suite-1.22.log | tail -22
echo "[$(( $(date +%s) - t0 )) s]"; save
for v in new old; do
  d=build; [ $v = old ] && d=/tmp/old/build
  timeout 60 $d/bench/nlm_bench --size 1080p > $R/nlm-$v.txt 2>&1
done
grep -H "automatic\|difference\|estimate" $R/nlm-*.txt | sed 's/  *(p10.*//' | sort -t: -k2 | cut -c1-130
echo "[$(( $(date +%s) - t0 )) s]"; save
