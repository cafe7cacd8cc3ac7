#!/bin/sh
# Writes tests/media/smpte-10bit.mkv: 12 frames of 320x240 HEVC Main10
# (I420_10LE into x265enc), which nvh265dec decodes to P010_10LE in CUDA
# memory for the gpu suite's 10-bit decode test. The GPU host has no HEVC
# encoder, so the clip is made here and kept in the repository.
set -eu
cd "$(dirname "$0")/.."
gst-launch-1.0 -q videotestsrc num-buffers=12 pattern=smpte horizontal-speed=3 ! \
  video/x-raw,format=I420_10LE,width=320,height=240,framerate=30/1 ! \
  x265enc speed-preset=medium ! h265parse ! matroskamux ! \
  filesink location=tests/media/smpte-10bit.mkv
ls -l tests/media/smpte-10bit.mkv
