#!/bin/bash
# Makes the 1080p H.264 clip of bench/multistream_bench on a machine with
# GStreamer's x264enc (gstreamer1.0-plugins-ugly) and mp4mux: 300 frames
# (10 s at 30 fps) of a moving zone plate, fine detail in every frame,
# encoded at 8 Mbit/s (constant bit rate, High profile, a key frame every
# 2 s), as a camera or broadcast stream is.
#
#   bench/make_clip.sh [OUTPUT]      default: clip-1080p.mp4
set -euo pipefail
out=${1:-clip-1080p.mp4}
gst-launch-1.0 -q videotestsrc num-buffers=300 pattern=zone-plate kx2=20 ky2=20 kt=1 ! \
  video/x-raw,format=I420,width=1920,height=1080,framerate=30/1 ! \
  x264enc bitrate=8000 pass=cbr speed-preset=faster key-int-max=60 ! video/x-h264,profile=high ! \
  h264parse ! mp4mux ! filesink location="$out"
echo "$out: $(stat -c %s "$out") bytes"
