#!/bin/sh
# CUDA memory that crosses devices, on a host with two GPUs: every element
# given frames in the memory of the other GPU must copy them to its own
# device and give the same output as the same stream on one GPU.
#
#   scripts/two-gpu-check.sh [BUILD_DIR [FRAMES]]
#
# BUILD_DIR: a built Meson build directory (default: build); FRAMES: frames
# per stream (default: 300). Needs gst-launch-1.0 with nvcodec (cudaupload,
# cudadownload, nvh264dec) on PATH.
#
# It compares outputs (md5 of the raw frames, and cmp for the first
# differing byte) for:
#   - cudaupload cuda-device-id=0 ! cudahisteq cuda-device-id=1 ! cudadownload
#     against the same on device 0 alone, on device 1 alone, and cudahisteq
#     backend=cpu;
#   - nvh264dec (device 0) ! cudanlm cuda-device-id=1 ! cudadownload, against
#     nvh264dec ! cudanlm on device 0 and nvh264device1dec ! cudanlm on
#     device 1;
#   - a chain whose elements alternate between the devices, against the same
#     chain on device 0 alone.
#   - the same for 10-bit frames: nvh265dec (P010_10LE) into cudanlm and
#     cudaclahe on device 1.
# The cost of the crossing: `element_bench --cross-device`.
set -u

build=${1:-build}
frames=${2:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
export GST_PLUGIN_PATH_1_0="$build/plugin"
export GST_REGISTRY_1_0="${TMPDIR:-/tmp}/cudafilters-two-gpu-registry.bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpus" -lt 2 ]; then
  echo "two-gpu-check: needs two GPUs, found $ngpus" >&2
  exit 77
fi
nvidia-smi -L
nvidia-smi topo -m 2>/dev/null | head -4
gst-launch-1.0 --version | head -1

raw="video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1"
src="videotestsrc num-buffers=$frames pattern=ball motion=sweep ! $raw"
clip="filesrc location=$root/tests/media/ball-h264.mp4 ! qtdemux ! h264parse"
out="video/x-raw,format=NV12"

# run NAME PIPELINE: runs it into $work/NAME.yuv, prints its md5.
run() {
  name=$1
  shift
  if gst-launch-1.0 -q $* ! $out ! filesink location="$work/$name.yuv" \
      > "$work/$name.log" 2>&1; then
    printf '  %-28s %s  %s bytes\n' "$name" \
      "$(md5sum < "$work/$name.yuv" | cut -c1-32)" "$(wc -c < "$work/$name.yuv")"
  else
    printf '  %-28s FAILED\n' "$name"
    sed 's/^/    /' "$work/$name.log" | tail -5
    failures=$((failures + 1))
  fi
}

# same A B: the two outputs must be identical and not empty.
same() {
  if [ -s "$work/$1.yuv" ] && cmp -s "$work/$1.yuv" "$work/$2.yuv"; then
    echo "  $1 = $2"
  else
    echo "  $1 != $2: $(cmp "$work/$1.yuv" "$work/$2.yuv" 2>&1 | head -1)"
    failures=$((failures + 1))
  fi
}

echo "== outputs, $frames frames"
run histeq-cpu "$src ! cudahisteq backend=cpu"
run histeq-dev0 "$src ! cudaupload cuda-device-id=0 ! cudahisteq cuda-device-id=0 ! cudadownload"
run histeq-dev1 "$src ! cudaupload cuda-device-id=1 ! cudahisteq cuda-device-id=1 ! cudadownload"
run histeq-0to1 "$src ! cudaupload cuda-device-id=0 ! cudahisteq cuda-device-id=1 ! cudadownload"
run histeq-1to0 "$src ! cudaupload cuda-device-id=1 ! cudahisteq cuda-device-id=0 ! cudadownload"
same histeq-0to1 histeq-dev0
same histeq-1to0 histeq-dev0
same histeq-dev1 histeq-dev0
same histeq-cpu histeq-dev0

run nlm-dev0 "$clip ! nvh264dec ! cudanlm cuda-device-id=0 ! cudadownload"
run nlm-dev1 "$clip ! nvh264device1dec ! cudanlm cuda-device-id=1 ! cudadownload"
run nlm-0to1 "$clip ! nvh264dec ! cudanlm cuda-device-id=1 ! cudadownload"
run nlm-0to1-temporal "$clip ! nvh264dec ! cudanlm cuda-device-id=1 temporal-radius=1 ! cudadownload"
run nlm-dev0-temporal "$clip ! nvh264dec ! cudanlm cuda-device-id=0 temporal-radius=1 ! cudadownload"
same nlm-0to1 nlm-dev0
same nlm-dev1 nlm-dev0
same nlm-0to1-temporal nlm-dev0-temporal

clip10="filesrc location=$root/tests/media/smpte-10bit.mp4 ! qtdemux ! h265parse"
out="video/x-raw,format=P010_10LE"
run deep-dev0 "$clip10 ! nvh265dec ! cudanlm cuda-device-id=0 ! cudaclahe cuda-device-id=0 ! cudadownload"
run deep-0to1 "$clip10 ! nvh265dec ! cudanlm cuda-device-id=1 ! cudaclahe cuda-device-id=1 ! cudadownload"
run deep-alternating "$clip10 ! nvh265dec ! cudanlm cuda-device-id=1 ! cudaclahe cuda-device-id=0 ! cudadownload"
same deep-0to1 deep-dev0
same deep-alternating deep-dev0
out="video/x-raw,format=NV12"

chain() {
  echo "$src ! cudaupload cuda-device-id=$1 ! cudahisteq cuda-device-id=$2 ! cudasharpen cuda-device-id=$3 ! cudaclahe cuda-device-id=$4 ! cudanlm cuda-device-id=$5 ! cudadownload"
}
run chain-dev0 "$(chain 0 0 0 0 0)"
run chain-alternating "$(chain 0 1 0 1 0)"
run chain-alternating-1 "$(chain 1 0 1 0 1)"
same chain-alternating chain-dev0
same chain-alternating-1 chain-dev0

echo "two-gpu-check: $failures failures"
[ "$failures" -eq 0 ]
