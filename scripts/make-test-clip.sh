#!/bin/sh
# Writes the gpu suite's decode clips into tests/media, 12 frames of 320x240
# each, in MP4 so that only qtdemux, the parsers and nvcodec are needed to
# read them (the minimal GStreamer of scripts/build-gstreamer.sh has those):
#   smpte-10bit.mp4  HEVC Main10 (I420_10LE into x265enc), which nvh265dec
#                    decodes to P010_10LE in CUDA memory;
#   ball-h264.mp4    H.264 (x264enc), which nvh264dec decodes to NV12.
# The GPU host has no encoder for either, so the clips are made here and
# kept in the repository.
set -eu
cd "$(dirname "$0")/.."
gst-launch-1.0 -q videotestsrc num-buffers=12 pattern=smpte horizontal-speed=3 ! \
  video/x-raw,format=I420_10LE,width=320,height=240,framerate=30/1 ! \
  x265enc speed-preset=medium ! h265parse ! mp4mux ! \
  filesink location=tests/media/smpte-10bit.mp4
gst-launch-1.0 -q videotestsrc num-buffers=12 pattern=ball ! \
  video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! \
  x264enc ! h264parse ! mp4mux ! filesink location=tests/media/ball-h264.mp4
ls -l tests/media/smpte-10bit.mp4 tests/media/ball-h264.mp4
