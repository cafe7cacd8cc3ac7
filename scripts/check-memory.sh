#!/bin/bash
# Memory checks of the CPU-path test suite (meson suite "cpu"):
#
#   scripts/check-memory.sh asan       AddressSanitizer + UndefinedBehaviorSanitizer
#                                      build in ./build-asan (Meson's b_sanitize)
#   scripts/check-memory.sh valgrind   the regular build under valgrind memcheck
#
# Extra arguments go to `meson test` (e.g. a test name). Both runs load only
# the GStreamer plugins the tests use (coretracers for the soak test's leaks
# tracer), in the test process itself (no registry scanner), so reports
# concern this project and the libraries it calls. CUDAFILTERS_TEST_QUICK
# samples the sweeps and shortens the costliest cases (docs/tests.md); the
# soak counts leftover objects, and the tools find leaks of plain memory. On
# a GPU machine add protect_shadow_gap=0 to ASAN_OPTIONS (the CUDA driver
# maps that range).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-asan}
shift || true

plugins=$(mktemp -d)
trap 'rm -rf "$plugins"' EXIT
system_dir=$(pkg-config --variable=pluginsdir gstreamer-1.0)
for p in coreelements videotestsrc app coretracers; do
  ln -s "$system_dir/libgst$p.so" "$plugins/"
done
export GST_PLUGIN_SYSTEM_PATH_1_0=$plugins GST_REGISTRY_FORK=no CUDAFILTERS_TEST_QUICK=1
command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH

case $mode in
  asan)
    if [ ! -f build-asan/build.ninja ]; then
      scripts/meson-setup.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbench=disabled
    fi
    meson compile -C build-asan
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    meson test -C build-asan --suite cpu --print-errorlogs "$@"
    ;;
  valgrind)
    scripts/build.sh
    meson test -C build --suite cpu --print-errorlogs --timeout-multiplier 20 \
      --wrap "valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
--show-leak-kinds=definite --num-callers=30 --suppressions=$PWD/tests/valgrind.supp" "$@"
    ;;
  *)
    echo "usage: $0 asan|valgrind [meson test arguments]" >&2
    exit 2
    ;;
esac
