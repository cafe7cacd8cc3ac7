#!/bin/bash
# Installs what building and testing the plugin needs on Debian 12 / Ubuntu,
# skipping what is already there. The CUDA toolkit (nvcc) is expected under
# /usr/local/cuda or on PATH; it is not an apt package here.
#
#   scripts/install-deps.sh              build, tests and examples
#   scripts/install-deps.sh --pictures   also scikit-image's photos, OpenCV
#                                        and matplotlib (demo, pictures,
#                                        benchmark reports)
#   scripts/install-deps.sh --gstreamer-source
#                                        also what building GStreamer
#                                        itself needs (build-gstreamer.sh)
set -euo pipefail

packages=(
  build-essential pkg-config meson ninja-build
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  valgrind
  # examples/: PyGObject with GStreamer's typelibs, numpy, and an H.264
  # encoder and decoder for the video-file example's test
  python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0 python3-numpy
  gstreamer1.0-plugins-ugly gstreamer1.0-libav
)
case "${1:-}" in
  --pictures) packages+=(python3-skimage python3-opencv python3-matplotlib) ;;
  --gstreamer-source) packages+=(flex bison git libglib2.0-dev python3-venv) ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "error: the CUDA toolkit (nvcc) was not found on PATH or in /usr/local/cuda" >&2
  exit 1
fi
