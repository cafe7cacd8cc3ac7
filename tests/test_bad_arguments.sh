#!/bin/bash
# The scripts and examples a user runs answer bad arguments with a short
# message and a failing exit status: no Python traceback, no crash, no value
# taken and then ignored, and no file of the user's removed. (--help
# answers with the usage and status 0.)
#
#   tests/test_bad_arguments.sh SOURCE_ROOT BUILD_ROOT
set -uo pipefail
src=$(realpath "$1")
build=$(realpath "$2")
export GST_PLUGIN_PATH=$build/plugin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failed=0
gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi

# expect STATUS WHAT COMMAND...: STATUS is "fail" (any non-zero) or "ok".
expect() {
  local want=$1 what=$2
  shift 2
  timeout 120 "$@" > "$work/out" 2>&1
  local status=$?
  if [ "$status" -eq 124 ]; then
    echo "FAILED: $what: still running after 120 s"; failed=1; return
  fi
  if grep -q -E '^Traceback|terminate called|Segmentation fault|core dumped' "$work/out"; then
    echo "FAILED: $what: crashed:"; tail -5 "$work/out"; failed=1; return
  fi
  if [ "$want" = fail ] && [ "$status" -eq 0 ]; then
    echo "FAILED: $what: exit status 0"; tail -3 "$work/out"; failed=1; return
  fi
  if [ "$want" = ok ] && [ "$status" -ne 0 ]; then
    echo "FAILED: $what: exit status $status"; tail -3 "$work/out"; failed=1; return
  fi
  echo "ok: $what ($(grep -v '^$' "$work/out" | tail -1 | cut -c1-100))"
}

kept() {  # kept FILE WHAT
  [ "$(cat "$1" 2>/dev/null)" = keep ] || { echo "FAILED: $2: $1 is gone"; failed=1; }
}

S=$src/scripts
E=$build/examples
P=$src/examples/python

# A prefix bundle never replaces the prefix or a folder of the user's.
mkdir -p pfx/lib pfx/libexec pfx/bin mywork
echo keep > pfx/lib/important.txt
echo keep > mywork/notes.txt
expect fail "make-prefix-bundle.sh, output = prefix" "$S/make-prefix-bundle.sh" pfx pfx
kept pfx/lib/important.txt "make-prefix-bundle.sh, output = prefix"
expect fail "make-prefix-bundle.sh, no such prefix" "$S/make-prefix-bundle.sh" /nonexistent-prefix mywork
expect fail "make-prefix-bundle.sh, a folder of the user's" "$S/make-prefix-bundle.sh" pfx mywork
kept mywork/notes.txt "make-prefix-bundle.sh"

expect fail "output-hashes.sh, no plugin folder" "$S/output-hashes.sh"
expect fail "output-hashes.sh, no plugin there" "$S/output-hashes.sh" /nonexistent
expect fail "check_16bit_opencv.py, unknown element" python3 "$S/check_16bit_opencv.py" --backends cpu --elements nosuch
expect fail "compare-benches.py, no such log" python3 "$S/compare-benches.py" --from-log /nonexistent
expect fail "test-times.py, no such log" python3 "$S/test-times.py" /nonexistent

expect fail "camera-lowlight-picture.py, unknown variant" python3 "$S/camera-lowlight-picture.py" clp --old-plugin "$build/plugin" --variant bogus
expect fail "camera-lowlight-picture.py, negative peak" python3 "$S/camera-lowlight-picture.py" clp --old-plugin "$build/plugin" --peak -5
expect fail "camera-lowlight-picture.py, no old plugin" python3 "$S/camera-lowlight-picture.py" clp --old-plugin /nonexistent
expect fail "lowlight-demo.py, no frames" python3 "$S/lowlight-demo.py" lld --frames 0
expect fail "lowlight-demo.py, a size without height" python3 "$S/lowlight-demo.py" lld --size 320
expect fail "lowlight-demo.py, no light" python3 "$S/lowlight-demo.py" lld --bright 0
echo keep > afile
expect fail "lowlight-demo.py, a file as its folder" python3 "$S/lowlight-demo.py" afile
expect fail "make-pictures.py, a file as its folder" python3 "$S/make-pictures.py" --only histeq --out afile
kept afile "a file given as a folder"
expect ok "prepare-photos.py --help" python3 "$S/prepare-photos.py" --help
[ ! -e ./--help ] || { echo "FAILED: prepare-photos.py --help made a folder --help"; failed=1; }
if [ "$gpu" -eq 0 ]; then
  expect fail "check-against-opencv.py without a GPU" python3 "$S/check-against-opencv.py" --quick
  expect fail "lowlight-demo.py --backend cuda without a GPU" python3 "$S/lowlight-demo.py" lld --backend cuda --frames 3 --size 32x32
fi

expect fail "appsrc_appsink, strength out of range" "$E/appsrc_appsink" --backend cpu --frames 4 --strength 1000
expect fail "appsrc_appsink, patch larger than search" "$E/appsrc_appsink" --backend cpu --frames 4 --patch-size 9 --search-size 7
expect fail "appsrc_appsink.py, strength 0" python3 "$P/appsrc_appsink.py" --backend cpu --frames 4 --strength 0
expect fail "appsrc_appsink.py, even patch" python3 "$P/appsrc_appsink.py" --backend cpu --frames 4 --patch-size 4
expect fail "appsrc_appsink.py, huge rate" python3 "$P/appsrc_appsink.py" --backend cpu --frames 4 --fps 1000000000000
expect fail "webcam.py, no frame rate" python3 "$P/webcam.py" --source test --fps 0 --frames 5 --output w.mp4
expect fail "webcam.py, negative frames" python3 "$P/webcam.py" --source test --frames -5 --output w.mp4
expect ok "engine_demo --help" "$E/engine_demo" --help
expect fail "engine_demo, misspelt option" "$E/engine_demo" --sise 64x64
expect fail "engine_demo, no such file" "$E/engine_demo" /nonexistent.pgm
grep -q "cannot open" "$work/out" || { echo "FAILED: engine_demo does not say it cannot open the file"; failed=1; }
expect ok "temporal_demo --help" "$E/temporal_demo" --help
expect ok "temporal_demo, a strength given" "$E/temporal_demo" --cpu --frames 3 --strength 255

# demo.sh writes DIR where the caller is.
expect ok "demo.sh DIR from another folder" "$S/demo.sh" rel-demo
[ -f rel-demo/before-after.png ] || { echo "FAILED: demo.sh rel-demo wrote elsewhere"; failed=1; }

[ "$failed" -eq 0 ] && echo OK
exit "$failed"
