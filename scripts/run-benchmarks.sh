#!/bin/bash
# The whole benchmark in one command, on the machine it runs on:
#   - the elements through GStreamer (bench/element_bench): system memory,
#     CUDA memory, pipelines, cvequalizehist where installed;
#   - on a GPU, the engines (histeq_bench, clahe_bench, nlm_bench, sharpen_bench):
#     kernel-only GPU time,
#     pinned copies each way, device memory bandwidth;
#   - OpenCV (equalizeHist, CLAHE, unsharp masking, filter2D,
#     fastNlMeansDenoising) on the same frames;
# then docs/benchmarks.md with tables and plots (needs python3-matplotlib;
# where it is missing, run bench/report.py later on the results directory).
#
#   scripts/run-benchmarks.sh [RESULTS_DIR [OTHER_RESULTS_DIR ...]]
#
# RESULTS_DIR defaults to bench-results in the checkout; it is replaced only
# if it is empty or an earlier run's. Each OTHER_RESULTS_DIR, another
# machine's run of this script, adds the CPU section of that machine to the
# page (the page has the CPU paths of every machine it was given).
#
# Without a usable GPU the elements run with backend=cpu and the page says so.
# FRAMES sets the frames per measurement (default 300). Build first
# (scripts/build.sh); on the GPU host, source .gpu/env.sh first.
set -euo pipefail
# Directories given are the caller's: resolved before moving to the root.
results=$(realpath -m -- "${1:-$(dirname "$0")/../bench-results}")
shift || true
others=()
for other in "$@"; do
  others+=("$(realpath -m -- "$other")")
done
cd "$(dirname "$0")/.."
frames=${FRAMES:-300}
# Only an earlier run of this script (its command.txt) is replaced.
if [ -e "$results" ] && { [ ! -d "$results" ] ||
    { [ -n "$(ls -A -- "$results")" ] && [ ! -f "$results/command.txt" ]; }; }; then
  echo "run-benchmarks.sh: refusing to replace $results: it is not an" \
    "earlier run's results (command.txt)" >&2
  exit 1
fi
rm -rf "$results"
mkdir -p "$results/frames"
export GST_PLUGIN_PATH_1_0=$PWD/build/plugin

backend=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  backend=cuda
fi
echo "FRAMES=$frames scripts/run-benchmarks.sh $results   # backend=$backend, $(date -u +%F)" > "$results/command.txt"

# The CPU paths alone, with the memory bandwidth: on every machine.
build/bench/cpu_bench --frames "$frames" --json "$results/cpu.json" --dump-frames "$results/frames"

build/bench/element_bench --backend "$backend" --frames "$frames" \
  --json "$results/element.json" --dump-frames "$results/frames"
if [ "$backend" = cuda ]; then
  build/bench/histeq_bench --frames "$frames" --json "$results/histeq.json"
  build/bench/clahe_bench --frames "$frames" --json "$results/clahe.json"
  build/bench/nlm_bench --json "$results/nlm.json"
  build/bench/sharpen_bench --frames "$frames" --json "$results/sharpen.json"
fi
# The first python3 that has OpenCV (Debian's python3-opencv is for
# /usr/bin/python3, which another python3 on PATH may hide).
py="$("$(command -v python3 || echo /usr/bin/python3)" scripts/interpreter.py cv2 numpy 2>/dev/null)" || py=""
if [ -n "$py" ]; then
  echo "OpenCV rows: $py"
  "$py" bench/peers.py "$results/frames" --frames "$frames" --json "$results/peers.json"
else
  echo "no python3 with OpenCV (python3-opencv): the OpenCV rows are left out"
fi
rm -rf "$results/frames"

if [ -n "$py" ] && "$py" -c "import matplotlib" 2>/dev/null; then
  "$py" bench/report.py "$results" --out docs/benchmarks.md --plots docs/img \
    ${others:+--cpu-results "${others[@]}"}
else
  echo "matplotlib is missing: run 'python3 bench/report.py $results --out docs/benchmarks.md' elsewhere"
fi
