#!/bin/bash
# Device call 41 (final tree): the gpu suite on GStreamer 1.22; the camera
# set (held out) and the Gaussian set through the GPU engine, 1a7fe79's
# beside it; nlm_bench; then, if time is left, 8 branches of decode !
# identity and decode ! cudalowlight with 1a7fe79's plugin and this one.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
R=/tmp/r41; mkdir -p $R
save() { tar czf $OUT/r41.tgz -C /tmp r41; }
tar xJf .carry/build.tar.xz; tar xJf .carry/gpu.tar.xz
export XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 300 scripts/gpu-suite.sh > $R/gpu-suite-1.22.log 2>&1; echo "suite rc $?"
grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:|Timeout:" $R/gpu-suite-1.22.log | tail -22
echo "[$(( $(date +%s) - t0 )) s]"; save
python3 studies/camera_set.py --evaluate $R/camera.json --set .carry/camera --lib build/studies/libnlmtune.so \
  --held-out --jobs 15 > $R/camera.log 2>&1; grep -E "^Held|cases in" $R/camera.log
python3 studies/camera_set.py --evaluate $R/camera-old.json --set .carry/camera --lib .carry/old-nlmtune/libnlmtune.so \
  --held-out --auto-only --jobs 15 > $R/camera-old.log 2>&1; tail -1 $R/camera-old.log
echo "[$(( $(date +%s) - t0 )) s]"; save
python3 studies/nlm_auto_strength.py --grid $R/grid.json --photos .carry/photos --lib build/studies/libnlmtune.so \
  --jobs 15 > $R/grid.log 2>&1; tail -1 $R/grid.log
for v in new old; do
  lib=build/studies/libnlmtune.so; [ $v = old ] && lib=.carry/old-nlmtune/libnlmtune.so
  python3 studies/nlm_auto_strength.py --evaluate $R/gauss-$v.json --against $R/grid.json --photos .carry/photos \
    --lib $lib --jobs 15 > $R/gauss-$v.log 2>&1; echo "gauss $v"; grep -E "gray|temporal|colour" $R/gauss-$v.log
done
echo "[$(( $(date +%s) - t0 )) s]"; save
timeout 60 build/bench/nlm_bench --size 1080p --frames 20 > $R/nlm-bench-1080p.txt 2>&1
grep -E "automatic|noise-sigma 10|difference|estimate" $R/nlm-bench-1080p.txt | head -20
echo "[$(( $(date +%s) - t0 )) s]"; save
if [ $(( $(date +%s) - t0 )) -lt 420 ]; then
  bench/make_clip.sh /tmp/clip.mp4 > $R/clip.log 2>&1
  M="build/bench/multistream_bench --clip /tmp/clip.mp4 --memory cuda --queue --loops 1"
  for v in new old; do
    d=$PWD/.carry/old1a7; [[ $v == new* ]] && d=$PWD/build/plugin
    GST_PLUGIN_PATH=$d timeout 60 $M --only identity,lowlight --streams 8 > $R/ms122-$v.log 2>&1
    echo "1.22 $v"; grep " N=" $R/ms122-$v.log | cut -c1-160
    echo "[$(( $(date +%s) - t0 )) s]"; save
  done
fi
save
