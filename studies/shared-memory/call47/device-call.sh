#!/bin/bash
# Device call 47: the 16-bit histogram kernel's slices and global LUT as
# template variants against runtime flags (this tree), histeq_bench beside
# 64719b2, three times alternating; then the gpu suite on this tree.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
R=/tmp/r47; mkdir -p $R
save() { tar czf $OUT/r47.tgz -C /tmp r47; }
tar xJf .carry/build.tar.xz; tar xJf .carry/gpu.tar.xz
mkdir -p /tmp/old && tar xJf .carry/base-64719b2.tar.xz -C /tmp/old
export XDG_RUNTIME_DIR=/tmp
source .gpu/env.sh
for r in 1 2 3; do
  for v in old templated runtime; do
    b=.carry/variants/histeq_bench-$v; [ $v = old ] && b=/tmp/old/build/bench/histeq_bench
    timeout 60 $b --size 1080p > $R/histeq-$v-$r.txt 2>&1
  done
done
grep -H "16-bit\|10-bit" $R/histeq-*.txt | grep -v CPU | sed 's/  *(p10.*//' | sort -t: -k2 | cut -c1-140
echo "[$(( $(date +%s) - t0 )) s]"; save
CK_FORK=no GST_CHECKS=test_engines_on_smaller_gpus timeout 200 build/tests/test-engines-gpu > $R/new-test.log 2>&1
echo "new test rc $?"; grep -E "Checks|:E:|:F:" $R/new-test.log | cut -c1-400 | tail -3
timeout 330 scripts/gpu-suite.sh > $R/gpu-suite-1.22.log 2>&1; echo "suite rc $?"
grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:|Timeout:" $R/gpu-suite-1.22.log | tail -22
echo "[$(( $(date +%s) - t0 )) s]"; save
