#!/bin/bash
# The whole GPU-host check in one go (see ../shared/gpu-host/README.md for the
# bundle): GPU info, the gpu test suite, every test, the end-to-end OpenCV
# comparison, the benchmarks, compute-sanitizer and pipeline throughput. Run from the
# checkout root with the bundle in .gpu and a build made on the build machine
# in build/. Logs go to $OUT (or ./gpu-run). On a host of two GPUs it also
# runs scripts/two-gpu-check.sh and element_bench --cross-device.
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

step "gpu suite (everyday; GPU_SUITE=gpu-full for the exhaustive one)"
# The tests that must run alone (tests/meson.build) are marked so: Meson runs
# them by themselves.
if [ "${GPU_SUITE:-gpu}" = gpu-full ]; then
  scripts/gpu-suite.sh --full 2>&1 | tee "$OUT/gpu-suite.log" || status=1
else
  scripts/gpu-suite.sh 2>&1 | tee "$OUT/gpu-suite.log" || status=1
fi

if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')" -ge 2 ]; then
  step "two GPUs: frames that cross devices (docs/deployment.md)"
  sh scripts/two-gpu-check.sh build 300 2>&1 | tee "$OUT/two-gpu.log" || status=1
  build/bench/element_bench --cross-device 2>&1 | tee "$OUT/cross-device.log" || status=1
fi

step "cpu suite"
meson test -C build --no-rebuild --suite cpu --print-errorlogs 2>&1 | tail -12 || status=1

step "cudahisteq and cudaclahe vs OpenCV"
python3 scripts/check-against-opencv.py --backend cuda --timing 2>&1 | tee "$OUT/opencv.log" || status=1

step "cudanlm vs OpenCV fastNlMeansDenoising (quality, speed)"
if [ -d bench/photos ]; then
  python3 studies/nlm_quality.py --backend cuda --timing --json "$OUT/nlm_quality.json" 2>&1 | tee "$OUT/nlm_quality.log" || status=1
else
  echo "no bench/photos (scripts/prepare-photos.py makes them): skipped"
fi

step "benchmarks (scripts/run-benchmarks.sh)"
scripts/run-benchmarks.sh "$OUT/bench-results" 2>&1 | tee "$OUT/benchmarks.log" || status=1

step "per-kernel GPU time (ncu)"
ncu --metrics gpu__time_duration.sum -k regex:'equalize|histogram|apply' -c 12 \
  build/bench/histeq_bench --frames 3 2>&1 | grep -E "^  [a-z_<>:]*(equalize_single_pass_kernel|histogram_lut_kernel|apply_lut_kernel)|gpu__time_duration" | cut -c1-70 | head -24
ncu --metrics gpu__time_duration.sum,dram__bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
  -k regex:'clahe' -c 8 build/bench/clahe_bench --frames 3 2>&1 \
  | grep -E "^  [a-z_<>:]*clahe_|gpu__time_duration|dram__bytes|sm__throughput" | cut -c1-90 | head -32
ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
  -k regex:nlm_kernel --launch-skip 4 -c 1 build/bench/nlm_bench --frames 1 2>&1 | grep -E "^    [a-z]|nlm_kernel" | cut -c1-100

if [ "${SANITIZE:-1}" = 1 ]; then
  # The four tools run side by side, each over the gpu suites (own log base,
  # two tests at a time). Frames above 20000 pixels are skipped in the NLM
  # tests under the sanitizers (minutes each); the load tests run short and
  # skip their memory-growth checks (CUDAFILTERS_TEST_QUICK); the fault tests
  # provoke CUDA errors on purpose, and the sixteen pipelines beside gpu-load
  # would load the GPU for minutes: all three are left out. racecheck tracks every shared-memory
  # access: it takes the engine and cudahisteq suites, and cudanlm's tests on
  # small frames.
  #
  # initcheck also leaves out the nvh264dec decode test: there, cudadownload
  # (GStreamer 1.22) hands its CUDA buffers on under system-memory caps, the
  # element maps them on the CPU, and GStreamer's download copies the whole
  # allocation, including the rows its NV12 allocator reserves beyond the
  # frame (height x 2) and nothing ever writes. initcheck reports that copy.
  step "compute-sanitizer on the gpu suite"
  rm -f "$OUT/sanitizer-failed"
  (
    export CUDAFILTERS_TEST_SKIP_LARGE=1 CUDAFILTERS_TEST_QUICK=1
    faults=test_device_fault_mid_stream_is_an_error,test_out_of_device_memory_then_restart
    faults=$faults,test_pipelines_share_the_gpu_under_load
    all="engines-gpu cudahisteq-gpu cudaclahe-gpu cudanlm-gpu cuda-memory-gpu cudafiltersbase-gpu soak-gpu concurrent-gpu"
    run_tool() {
      local tool=$1 ignore=$2; shift 2
      local extra=""; [ $tool = memcheck ] && extra="--report-api-errors no"
      GST_CHECKS_IGNORE=$ignore timeout 1200 meson test -C build --no-rebuild \
        --logbase san-$tool --num-processes 2 --timeout-multiplier 4 --print-errorlogs "$@" \
        --wrapper "compute-sanitizer --tool $tool --error-exitcode 1 $extra" \
        > "$OUT/sanitizer-$tool.log" 2>&1
      local rc=$?
      echo "compute-sanitizer $tool: exit $rc"
      [ $rc = 0 ] || touch "$OUT/sanitizer-failed"
    }
    run_tool memcheck $faults $all &
    run_tool initcheck $faults,test_decode_through_nvh264dec $all &
    run_tool synccheck $faults $all &
    run_tool racecheck $faults engines-gpu cudahisteq-gpu cudaclahe-gpu &
    wait
    CK_FORK=no CUDAFILTERS_POISON_OUTPUT=1 GST_PLUGIN_PATH_1_0="$PWD/build/tests/plugin" \
      GST_CHECKS=test_matches_definition,test_live_changes,test_flat_frames_stay_flat,test_deep_strength_in_8bit_units,test_temporal_sequences,test_temporal_flush_discont_caps \
      compute-sanitizer --tool racecheck --error-exitcode 1 build/tests/test-cudanlm-gpu \
      > "$OUT/sanitizer-racecheck-nlm.log" 2>&1 || touch "$OUT/sanitizer-failed"
    # Colour and temporal windows through GpuWindowRunner, without GStreamer.
    compute-sanitizer --tool racecheck --error-exitcode 1 build/examples/temporal_demo \
      > "$OUT/sanitizer-racecheck-temporal-demo.log" 2>&1 || touch "$OUT/sanitizer-failed"
    grep -hE "^ *[0-9]+/[0-9]+ |ERROR SUMMARY|Checks" "$OUT"/sanitizer-*.log
  )
  if [ -e "$OUT/sanitizer-failed" ]; then status=1; rm -f "$OUT/sanitizer-failed"; fi
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
for el in identity "cudahisteq backend=cuda" "cudahisteq backend=cpu" "cudaclahe backend=cuda" \
    "cudaclahe backend=cpu"; do
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
