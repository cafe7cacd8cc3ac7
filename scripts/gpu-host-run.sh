#!/bin/bash
# The whole GPU-host check in one go (see ../shared/gpu-host/README.md for the
# bundle): GPU info, the gpu test suite, every test, the end-to-end OpenCV
# comparison, the benchmarks, compute-sanitizer and pipeline throughput. Run from the
# checkout root with the bundle in .gpu and a build made on the build machine
# in build/. Logs go to $OUT (or ./gpu-run).
set -uo pipefail
OUT=${OUT:-gpu-run}
mkdir -p "$OUT"
source .gpu/env.sh
export GST_PLUGIN_PATH="$PWD/build/plugin"
status=0
step() { echo; echo "=== $*"; }

step "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv
nproc

step "gpu suite"
meson test -C build --no-rebuild --suite gpu --print-errorlogs 2>&1 | tee "$OUT/gpu-suite.log" || status=1
cp build/meson-logs/testlog.txt "$OUT/gpu-testlog.txt" 2>/dev/null

step "all tests"
meson test -C build --no-rebuild --print-errorlogs 2>&1 | tail -12 || status=1

step "cudahisteq vs OpenCV"
python3 scripts/check-against-opencv.py --backend cuda --timing 2>&1 | tee "$OUT/opencv.log" || status=1

step "cudanlm vs OpenCV fastNlMeansDenoising (quality, speed)"
if [ -d bench/photos ]; then
  python3 bench/nlm_quality.py --backend cuda --timing --json "$OUT/nlm_quality.json" 2>&1 | tee "$OUT/nlm_quality.log" || status=1
else
  echo "no bench/photos (scripts/prepare-photos.py makes them): skipped"
fi

step "benchmarks (scripts/run-benchmarks.sh)"
scripts/run-benchmarks.sh "$OUT/bench-results" 2>&1 | tee "$OUT/benchmarks.log" || status=1

step "per-kernel GPU time (ncu)"
ncu --metrics gpu__time_duration.sum -k regex:'histogram|apply' -c 12 \
  build/bench/histeq_bench --frames 3 2>&1 | grep -E "^  [a-z_<>:]*(histogram_lut_kernel|apply_lut_kernel)|gpu__time_duration" | cut -c1-60 | head -24
ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
  -k regex:nlm_kernel --launch-skip 4 -c 1 build/bench/nlm_bench --frames 1 2>&1 | grep -E "^    [a-z]|nlm_kernel" | cut -c1-100

if [ "${SANITIZE:-1}" = 1 ]; then
  # Frames above 20000 pixels are skipped under the sanitizers (minutes each).
  # racecheck tracks every shared-memory access: for cudanlm it runs the tests
  # with small frames (all parameter sets), which finish in about two minutes.
  export CUDAFILTERS_TEST_SKIP_LARGE=1
  for tool in memcheck synccheck initcheck racecheck; do
    step "compute-sanitizer $tool on the gpu suite"
    extra=""; [ $tool = memcheck ] && extra="--report-api-errors no"
    suites="engine-gpu cudahisteq-gpu cudanlm-gpu cuda-memory-gpu robustness-gpu"; [ $tool = racecheck ] && suites="engine-gpu cudahisteq-gpu"
    # The fault tests provoke CUDA errors on purpose; the load tests run short.
    CUDAFILTERS_TEST_QUICK=1 \
    GST_CHECKS_IGNORE=test_device_fault_mid_stream_is_an_error,test_out_of_device_memory_then_restart \
    meson test -C build --no-rebuild --print-errorlogs --timeout-multiplier 3 $suites \
      --wrapper "compute-sanitizer --tool $tool --error-exitcode 1 $extra" 2>&1 | tail -8 | tee "$OUT/sanitizer-$tool.log" || status=1
  done
  step "compute-sanitizer racecheck on cudanlm (small frames)"
  CK_FORK=no CUDAFILTERS_POISON_OUTPUT=1 GST_PLUGIN_PATH_1_0="$PWD/build/plugin" \
    GST_CHECKS=test_gpu_matches_brute_force_reference,test_gpu_live_changes,test_gpu_flat_frames_identical \
    compute-sanitizer --tool racecheck --error-exitcode 1 build/tests/test-cudanlm-gpu 2>&1 | tail -4 || status=1
  unset CUDAFILTERS_TEST_SKIP_LARGE
fi

step "pipeline throughput, 1080p GRAY8, system memory (steady state)"
# Start-up (CUDA context, module load, pools) is excluded: the per-frame figure
# is the difference between a 3500-frame and a 500-frame run over 3000.
run_pipeline() {
  local t0 t1
  t0=$(date +%s.%N)
  gst-launch-1.0 -q videotestsrc num-buffers="$2" pattern=gradient \
    ! video/x-raw,format=GRAY8,width=1920,height=1080,framerate=1000/1 ! $1 ! fakesink sync=false || status=1
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}
for el in identity "cudahisteq backend=cuda" "cudahisteq backend=cpu"; do
  short=$(run_pipeline "$el" 500)
  long=$(run_pipeline "$el" 3500)
  echo "$el: $(python3 -c "print(f'{($long - $short) * 1e6 / 3000:.1f}')") us per frame (whole pipeline, wall, steady state)"
done | tee "$OUT/pipeline.log"

step "pipeline throughput, 1080p NV12 in CUDA memory (steady state)"
# GstCudaMemory uploads lazily, when first mapped for the GPU: the first CUDA
# element pays for the upload. One element's cost on resident frames is the
# difference between two in series and one.
run_cuda_pipeline() {
  local t0 t1
  t0=$(date +%s.%N)
  gst-launch-1.0 -q videotestsrc num-buffers="$2" pattern=gradient \
    ! video/x-raw,format=NV12,width=1920,height=1080,framerate=1000/1 ! cudaupload ! $1 ! fakesink sync=false || status=1
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}
for el in "cudahisteq backend=cuda" "cudahisteq backend=cuda ! cudahisteq backend=cuda"; do
  short=$(run_cuda_pipeline "$el" 500)
  long=$(run_cuda_pipeline "$el" 3500)
  echo "cudaupload ! $el: $(python3 -c "print(f'{($long - $short) * 1e6 / 3000:.1f}')") us per frame (wall, steady state)"
done | tee -a "$OUT/pipeline.log"

exit $status
