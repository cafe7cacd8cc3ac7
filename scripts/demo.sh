#!/bin/bash
# The demo step of setup-and-demo.sh, on a machine already set up and built:
# equalizes scikit-image's moon.png (512x512, dull and low in contrast) with
# cudahisteq and cudaclahe. scripts/demo.sh [DIR] writes, under DIR
# (default demo/):
#   before.png        the photo, GRAY8
#   after.png         cudahisteq (global histogram equalization)
#   after-clahe.png   cudaclahe (clip-limit 2, 8x8 tiles)
#   before-after.png  the three side by side, in that order
# On a machine without a usable GPU the elements say so on the bus and run
# the same algorithm on the CPU.
set -euo pipefail
case ${1:-} in -*)
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  [ "$1" = -h ] || [ "$1" = --help ] && exit 0 || exit 2;;
esac
# DIR is the caller's: resolved before moving to the checkout.
out=$(realpath -m -- "${1:-$(dirname "$0")/../demo}")
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"   # the build directory (relative: to the checkout)
case $build in /*) ;; *) build="$PWD/$build" ;; esac

export GST_PLUGIN_PATH="$build/plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
mkdir -p "$out"
# scikit-image is installed for the distribution's python3, which another
# python3 first on PATH (pyenv, conda, a virtualenv) may not see.
first="$(command -v python3 || echo /usr/bin/python3)"
py="$("$first" scripts/interpreter.py skimage)"
[ "$(realpath "$py")" = "$(realpath "$first")" ] || echo "scikit-image's photo: using $py ($first lacks scikit-image)"
photo="$("$py" -c 'import os, skimage; print(os.path.join(skimage.data_dir, "moon.png"))')"

gst-launch-1.0 -q filesrc location="$photo" ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 \
  ! pngenc ! filesink location="$out/before.png"
gst-launch-1.0 filesrc location="$out/before.png" ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 \
  ! cudahisteq ! pngenc ! filesink location="$out/after.png"
gst-launch-1.0 filesrc location="$out/before.png" ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 \
  ! cudaclahe clip-limit=2 tiles-x=8 tiles-y=8 ! pngenc ! filesink location="$out/after-clahe.png"
# Side by side on a white background, 8 pixels apart (the photo is 512 wide).
gst-launch-1.0 -q compositor name=mix background=white sink_1::xpos=520 sink_2::xpos=1040 \
  ! videoconvert ! video/x-raw,format=GRAY8 ! pngenc ! filesink location="$out/before-after.png" \
  filesrc location="$out/before.png" ! pngdec ! videoconvert ! mix.sink_0 \
  filesrc location="$out/after.png" ! pngdec ! videoconvert ! mix.sink_1 \
  filesrc location="$out/after-clahe.png" ! pngdec ! videoconvert ! mix.sink_2

dir="$(cd "$out" && pwd)"
echo
echo "before:       $dir/before.png (scikit-image's moon.png)"
echo "after:        $dir/after.png (histogram-equalized by cudahisteq)"
echo "after-clahe:  $dir/after-clahe.png (cudaclahe, clip-limit 2, 8x8 tiles)"
echo "side by side: $dir/before-after.png (before | cudahisteq | cudaclahe)"
echo "More pictures: scripts/make-pictures.py (docs/img)"
