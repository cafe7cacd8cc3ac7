#!/bin/bash
# The gpu test suite on the GPU host, from a bundle (docs/gpu-host.md), in one
# command: the everyday suite (about two minutes on an H100 or H200), or with
# --full the exhaustive one. Prints the wall time and the five slowest tests
# last. Run from the checkout root.
#
#   scripts/gpu-suite.sh [--full] [--bundle ENV] [--build DIR]
#                        [--stream-ordered] [--timing DIR] [meson test args]
#
#   --bundle ENV      the bundle's environment script (default .gpu/env.sh,
#                     GStreamer 1.22; another GStreamer's bundle has its own)
#   --build DIR       the build made for that GStreamer (default build)
#   --stream-ordered  GST_CUDA_ENABLE_STREAM_ORDERED_ALLOC=1 (GStreamer 1.26
#                     and newer: CUDA memory from stream-ordered allocation)
#   --timing DIR      each case's duration, from check's XML log, into DIR,
#                     and the slowest cases of each test printed
set -uo pipefail
cd "$(dirname "$0")/.."

suite=gpu
bundle=.gpu/env.sh
build=build
timing=""
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --full) suite=gpu-full ;;
    --bundle) bundle=$2; shift ;;
    --build) build=$2; shift ;;
    --stream-ordered) export GST_CUDA_ENABLE_STREAM_ORDERED_ALLOC=1 ;;
    --timing) timing=$(realpath -m "$2"); shift ;;
    *) args+=("$1") ;;
  esac
  shift
done

# shellcheck disable=SC1090
source "$bundle"
if [ -n "$timing" ]; then
  mkdir -p "$timing"
  wrapper=$(mktemp)
  printf '#!/bin/sh\nexport CK_XML_LOG_FILE_NAME="%s/$(basename "$1").xml"\nexec "$@"\n' \
    "$timing" > "$wrapper"
  chmod +x "$wrapper"
  args+=(--wrapper "$wrapper")
fi

version=$(gst-inspect-1.0 --version | sed -n 's/^GStreamer //p')
echo "== suite $suite, GStreamer $version${GST_CUDA_ENABLE_STREAM_ORDERED_ALLOC:+, stream-ordered allocation}, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores"
start=$(date +%s.%N)
meson test -C "$build" --no-rebuild --suite "$suite" --logbase "$suite" --print-errorlogs "${args[@]}"
status=$?
wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f}')" "$start" "$(date +%s.%N)")

# Meson names the log after the wrapper too, where there is one.
log=$(ls -t "$build/meson-logs/$suite"*.json | head -1)
python3 scripts/test-times.py "$log" ${timing:+"$timing"}
echo "== suite $suite on GStreamer $version${GST_CUDA_ENABLE_STREAM_ORDERED_ALLOC:+ (stream-ordered allocation)}: ${wall} s wall, exit $status"
exit $status
