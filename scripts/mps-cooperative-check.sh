#!/bin/sh
# Runs the GPU tests of cudahisteq under NVIDIA MPS with a small
# active-thread percentage. Where the device then refuses a cooperative grid
# sized for the whole GPU (cudaErrorCooperativeLaunchTooLarge), HistEqGpu
# must fall back to its launches without a grid barrier, with the same
# output. On the H100 host (driver 580) no grid was refused at 10%: the
# tests passed with and without the fall-back.
#
#   scripts/mps-cooperative-check.sh [BUILD_DIR [PERCENTAGE [TEST...]]]
#
# BUILD_DIR: a configured and built Meson build directory (default: build);
# PERCENTAGE: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (default: 10); TEST: the
# tests to run (default: engines-gpu cudahisteq-gpu).
# The MPS control daemon is a private one: its pipe and log directories lie
# in a temporary directory, so no root is needed and a system-wide daemon is
# left alone. It is stopped when the script ends, whatever the tests gave.
set -eu

build=${1:-build}
percentage=${2:-10}
if [ $# -gt 2 ]; then
  shift 2
else
  set -- engines-gpu cudahisteq-gpu
fi

if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
  echo "nvidia-cuda-mps-control not found (it comes with the NVIDIA driver)" >&2
  exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
  echo "$build is not a Meson build directory: meson setup $build && meson compile -C $build" >&2
  exit 1
fi

dir=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe"
export CUDA_MPS_LOG_DIRECTORY="$dir/log"
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"

# shellcheck disable=SC2317  # called by the trap
stop_mps() {
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
  # The daemon removes its pipes once it has stopped; wait for that briefly.
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] || break
    sleep 0.5
  done
  echo "MPS stopped; its log:"
  tail -n 5 "$CUDA_MPS_LOG_DIRECTORY/control.log" 2>/dev/null || true
  rm -rf "$dir"
}

nvidia-cuda-mps-control -d
trap stop_mps EXIT
echo "MPS started (pipes in $CUDA_MPS_PIPE_DIRECTORY); clients limited to $percentage% of the SMs"

# Every client process (the tests) takes its share from its environment.
export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="$percentage"
status=0
meson test -C "$build" --no-rebuild --print-errorlogs "$@" || status=$?
if grep -qi "new client" "$CUDA_MPS_LOG_DIRECTORY/control.log" 2>/dev/null; then
  echo "MPS served the tests' processes"
else
  echo "warning: the MPS log shows no client: the tests may have run without MPS" >&2
fi
exit $status
