#!/bin/bash
# Builds the deep-histogram timeline (timeline.cpp) against the library of a
# configured build directory, with the kernel marked by instrument.py; also
# the DIAG_ variants that leave part of storing a partial out (wrong
# results, for timing only).
#
#   studies/deep_timeline/build.sh [BUILD_DIR]     (default build; ARCH=90)
#   BUILD_DIR/deep_timeline/timeline 300 1080p
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
arch=${ARCH:-90}
out=$build/deep_timeline
mkdir -p "$out"
ninja -C "$build" cuda/libcudafilters.a >/dev/null
python3 studies/deep_timeline/instrument.py cuda/histeq/histeq_kernels_16bit.cu \
  "$out/histeq_kernels_16bit_marked.cu"
flags=(-DNDEBUG --std=c++17 -O3 -gencode="arch=compute_$arch,code=sm_$arch" --expt-relaxed-constexpr
  -Xcompiler=-ffp-contract=off -I. -Icuda/common -Icuda/runtime -Icuda/histeq -Ibench)
nvcc "${flags[@]}" -x cu -c studies/deep_timeline/timeline.cpp -o "$out/timeline.o"
for variant in "" NO_REMOTE NO_STORE HALF_STORE; do
  name=timeline${variant:+_${variant,,}}
  nvcc "${flags[@]}" ${variant:+-DDIAG_$variant} -c "$out/histeq_kernels_16bit_marked.cu" \
    -o "$out/$name-kernel.o"
  nvcc -o "$out/$name" "$out/timeline.o" "$out/$name-kernel.o" "$build/cuda/libcudafilters.a" \
    -lrt -ldl -Xcompiler=-pthread
done
ls "$out"
