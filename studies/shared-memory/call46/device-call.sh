#!/bin/bash
# Device call 46: the final tree's gpu suite and new test; the noise tables'
# reading (nlm_bench: 64719b2, the batched copy, the typed copy = this tree)
# and histeq_bench beside 64719b2, twice each, alternating.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
R=/tmp/r46; mkdir -p $R
save() { tar czf $OUT/r46.tgz -C /tmp r46; }
tar xJf .carry/build.tar.xz; tar xJf .carry/gpu.tar.xz
mkdir -p /tmp/old && tar xJf .carry/base-64719b2.tar.xz -C /tmp/old
export XDG_RUNTIME_DIR=/tmp
source .gpu/env.sh
for r in 1 2; do
  for v in old batched typed; do
    b=.carry/variants/nlm_bench-$v; [ $v = old ] && b=/tmp/old/build/bench/nlm_bench
    timeout 60 $b --size 1080p > $R/nlm-$v-$r.txt 2>&1
  done
  for v in new old; do
    d=build; [ $v = old ] && d=/tmp/old/build
    timeout 60 $d/bench/histeq_bench --size 1080p > $R/histeq-$v-$r.txt 2>&1
  done
done
grep -H "reading the table\|estimate alone\|noise level\|automatic strength" $R/nlm-*.txt | sed 's/  *(p10.*//' | sort
echo "[$(( $(date +%s) - t0 )) s]"; save
CK_FORK=no GST_CHECKS=test_engines_on_smaller_gpus timeout 200 build/tests/test-engines-gpu > $R/new-test.log 2>&1
echo "new test rc $?"; grep -E "Checks|:E:|:F:" $R/new-test.log | cut -c1-400 | tail -3
timeout 330 scripts/gpu-suite.sh > $R/gpu-suite-1.22.log 2>&1; echo "suite rc $?"
grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:|Timeout:" $R/gpu-suite-1.22.log | tail -22
echo "[$(( $(date +%s) - t0 )) s]"; save
