#!/bin/bash
# Builds test-engines-gpu with one of the shared-memory fixes taken out each.
set -e
cd "$(git rev-parse --show-toplevel)"
rm -f .carry/variants/*
variant() {  # name file sed-expression
  cp "$2" /tmp/variant.bak
  sed -i "$3" "$2"
  if cmp -s "$2" /tmp/variant.bak; then echo "variant $1: no change"; cp /tmp/variant.bak "$2"; return 1; fi
  ninja -C build tests/test-engines-gpu > /dev/null
  cp build/tests/test-engines-gpu .carry/variants/test-engines-gpu-$1
  cp /tmp/variant.bak "$2"
}
variant nlm64 cuda/nlm/noise_table.cuh 's/  uint32_t below_n\[kNoiseScales\]\[kNoiseBins + 1\];/  uint64_t below_n[kNoiseScales][kNoiseBins + 1];/'
variant clahe1 cuda/clahe/clahe_gpu.cu 's/  while (!fits_shared_memory(k.count/  while (false \&\& !fits_shared_memory(k.count/'
variant histeq1 cuda/histeq/histeq_gpu.cu 's/  while (words \/ slices > free_deep_/  while (false \&\& words \/ slices > free_deep_/'
variant histeq64k cuda/histeq/histeq_gpu.cu 's/std::min(free_12bit_, kCounterRoomWords)/kCounterRoomWords/; s/std::min(free_deep_, kCounterRoomWords)/kCounterRoomWords/'
ninja -C build > /dev/null
git status --short | grep -v "^ M\|^RM\|^M" || true
ls -la .carry/variants
