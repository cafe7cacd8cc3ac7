#!/bin/bash
# One command for a new machine: install what is missing, build, and equalize a
# generated low-contrast test picture. Writes demo/before.png and
# demo/after.png. On a machine without a usable GPU the element says so on the
# bus and runs the same algorithm on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh

export GST_PLUGIN_PATH="$PWD/build/plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
mkdir -p demo
# A dark, low-contrast picture: SMPTE bars squeezed into about a third of the
# intensity range.
gst-launch-1.0 -q videotestsrc pattern=smpte num-buffers=1 \
  ! video/x-raw,width=640,height=480 ! videobalance contrast=0.35 brightness=-0.1 \
  ! videoconvert ! video/x-raw,format=GRAY8 ! pngenc ! filesink location=demo/before.png
gst-launch-1.0 filesrc location=demo/before.png ! pngdec ! videoconvert \
  ! video/x-raw,format=GRAY8 ! cudahisteq ! pngenc ! filesink location=demo/after.png

echo
echo "before: $PWD/demo/before.png"
echo "after:  $PWD/demo/after.png (histogram-equalized by cudahisteq)"
