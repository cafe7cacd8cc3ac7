#!/bin/bash
# Editing a header must rebuild the CUDA objects that include it, so ninja
# has to know their headers. Meson before 1.4 gives nvcc no dependency
# arguments; scripts/meson-setup.sh configures around that, and a build
# directory configured without it records no header for a .cu object.
set -euo pipefail
build=$1
cd "$build"
obj=$(ninja -t targets all | grep -o '^[^:]*plane_levels_gpu\.cu\.o' | head -n 1 || true)
if [ -z "$obj" ]; then
  echo "no CUDA object plane_levels_gpu.cu.o in $build"
  exit 1
fi
deps=$(ninja -t deps "$obj")
# Here-strings, not pipes: with pipefail, `echo | head` or `echo | grep -q`
# fails with SIGPIPE (141) when the reader exits before echo has written
# all 600 lines, as it did once in CI.
head -n 1 <<<"$deps"
if ! grep -q 'noise_estimate\.h' <<<"$deps"; then
  echo "ninja records no noise_estimate.h for $obj: editing that header would not rebuild it"
  echo "(configure with scripts/meson-setup.sh, or Meson 1.4 or newer)"
  exit 1
fi
