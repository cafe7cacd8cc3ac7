#!/bin/bash
# One command for a new machine: install what is missing (with scikit-image's
# photos), build, and equalize a real photo, scikit-image's moon.png (512x512,
# dull and low in contrast), with cudahisteq and cudaclahe. Writes
#   demo/before.png        the photo, GRAY8
#   demo/after.png         cudahisteq (global histogram equalization)
#   demo/after-clahe.png   cudaclahe (clip-limit 2, 8x8 tiles)
#   demo/before-after.png  the three side by side, in that order
# On a machine without a usable GPU the elements say so on the bus and run
# the same algorithm on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --pictures
scripts/build.sh

export GST_PLUGIN_PATH="$PWD/build/plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
mkdir -p demo
photo="$(python3 -c 'import os, skimage; print(os.path.join(skimage.data_dir, "moon.png"))')"

gst-launch-1.0 -q filesrc location="$photo" ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 \
  ! pngenc ! filesink location=demo/before.png
gst-launch-1.0 filesrc location=demo/before.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 \
  ! cudahisteq ! pngenc ! filesink location=demo/after.png
gst-launch-1.0 filesrc location=demo/before.png ! pngdec ! videoconvert ! video/x-raw,format=GRAY8 \
  ! cudaclahe clip-limit=2 tiles-x=8 tiles-y=8 ! pngenc ! filesink location=demo/after-clahe.png
# Side by side on a white background, 8 pixels apart (the photo is 512 wide).
gst-launch-1.0 -q compositor name=mix background=white sink_1::xpos=520 sink_2::xpos=1040 \
  ! videoconvert ! video/x-raw,format=GRAY8 ! pngenc ! filesink location=demo/before-after.png \
  filesrc location=demo/before.png ! pngdec ! videoconvert ! mix.sink_0 \
  filesrc location=demo/after.png ! pngdec ! videoconvert ! mix.sink_1 \
  filesrc location=demo/after-clahe.png ! pngdec ! videoconvert ! mix.sink_2

echo
echo "before:       $PWD/demo/before.png (scikit-image's moon.png)"
echo "after:        $PWD/demo/after.png (histogram-equalized by cudahisteq)"
echo "after-clahe:  $PWD/demo/after-clahe.png (cudaclahe, clip-limit 2, 8x8 tiles)"
echo "side by side: $PWD/demo/before-after.png (before | cudahisteq | cudaclahe)"
echo "More pictures: scripts/make-pictures.py (docs/img)"
