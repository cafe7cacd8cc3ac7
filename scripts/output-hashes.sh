#!/bin/bash
# One MD5 per pipeline over every element setting, format, backend and
# memory kind below: run it with two builds of the plugin and diff the
# lists to show that a change leaves every output bit for bit as it was.
# Pipelines an element refuses (a format it does not take) print their
# failure instead of a hash, so that a change in what is refused shows too.
#
#   scripts/output-hashes.sh PLUGIN_DIR [JOBS] > hashes.txt
#
# PLUGIN_DIR holds libgstcudafilters.so. Needs gst-launch-1.0 with
# videotestsrc and, for the CUDA-memory rows, nvcodec's cudaupload and
# cudadownload (the GPU host's bundle has both: source .gpu/env.sh first).
# Without a GPU, the cuda rows fail alike in both builds.
set -uo pipefail
# The frames: a moving zone plate (or what PATTERN says, e.g.
# "pattern=snow"), blended between two colours so that chroma varies with
# it (videotestsrc's patterns are deterministic: snow restarts its
# generator with each run).
export PATTERN=${PATTERN:-pattern=zone-plate kx2=20 ky2=20 kt=3}
PATTERN="$PATTERN foreground-color=0xffe0a020 background-color=0xff2050c0"
# ROWS=cuda: only the rows on the GPU backend. ONLY=WORD: only the element
# settings that contain WORD.
rows=${ROWS:-all}
only=${ONLY:-}
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '8p' "$0" | sed 's/^# \{0,1\}/usage: /' >&2
  exit 2
fi
plugin_dir=$(realpath -m -- "$1")
if [ ! -f "$plugin_dir/libgstcudafilters.so" ]; then
  echo "output-hashes.sh: $plugin_dir holds no libgstcudafilters.so" >&2
  exit 2
fi
jobs=${2:-8}
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
  echo "output-hashes.sh: JOBS must be a whole number of at least 1, not '$jobs'" >&2
  exit 2
fi
export GST_PLUGIN_PATH=$plugin_dir
# A registry of its own: two builds of one plugin must not share one.
registry_dir=$(mktemp -d)
trap 'rm -rf "$registry_dir"' EXIT
export GST_REGISTRY=$registry_dir/registry.bin
gst-inspect-1.0 cudahisteq >/dev/null 2>&1 || true

elements=(
  "cudahisteq"
  "cudahisteq temporal-smoothing=0.5"
  "cudaclahe"
  "cudaclahe clip-limit=4 tiles-x=5 tiles-y=3"
  "cudasharpen"
  "cudasharpen kernel=laplacian-3x3"
  "cudasharpen radius=2.5 amount=1.5 threshold=3"
  "cudanlm"
  "cudanlm strength=12 noise-sigma=2"
  "cudanlm chroma-strength=0"
  "cudanlm temporal-radius=1"
  "cudanlm patch-size=5 search-size=11 patch-weighting=gaussian"
  "cudalowlight"
  "cudalowlight sharpen=true"
)
formats=(GRAY8 GRAY16_LE NV12 I420 Y42B Y444 P010_10LE I420_10LE RGBA BGRx
  YUY2 UYVY)
# cudaupload/cudadownload (1.22) take no GRAY formats.
cuda_formats=" NV12 I420 Y42B Y444 P010_10LE RGBA BGRx YUY2 UYVY "

one() {
  local element=$1 format=$2 backend=$3 memory=$4
  local caps="video/x-raw,format=$format,width=200,height=120,framerate=30/1"
  local src="videotestsrc num-buffers=5 $PATTERN ! $caps"
  local pipeline
  if [ "$memory" = cuda ]; then
    pipeline="$src ! cudaupload ! video/x-raw(memory:CUDAMemory) ! $element backend=$backend ! cudadownload ! $caps"
  else
    pipeline="$src ! $element backend=$backend ! $caps"
  fi
  local out err data rc
  err=$(mktemp)
  data=$(mktemp)
  # shellcheck disable=SC2086
  gst-launch-1.0 -q $pipeline ! filesink location="$data" >/dev/null 2>"$err"
  rc=$?
  if [ "$rc" -ne 0 ] || [ ! -s "$data" ]; then
    out="fails: $(grep -m1 -E 'ERROR|erroneous' "$err" | cut -c1-80)"
  else
    out=$(md5sum <"$data" | cut -c1-32)
  fi
  rm -f "$data"
  rm -f "$err"
  printf '%s | %s | %s | %s | %s\n' "$element" "$format" "$backend" "$memory" "$out"
}
export -f one

for element in "${elements[@]}"; do
  [[ $element == *"$only"* ]] || continue
  for format in "${formats[@]}"; do
    for backend in cpu cuda; do
      [ "$rows" = cuda ] && [ "$backend" = cpu ] && continue
      printf '%s\t%s\t%s\tsystem\n' "$element" "$format" "$backend"
      if [[ $backend == cuda && $cuda_formats == *" $format "* ]]; then
        printf '%s\t%s\t%s\tcuda\n' "$element" "$format" "$backend"
      fi
    done
  done
done | xargs -P "$jobs" -d '\n' -I{} bash -c 'IFS=$'"'"'\t'"'"' read -r e f b m <<<"{}"; one "$e" "$f" "$b" "$m"' | sort
