#!/bin/bash
# Installs what building and testing the plugin needs on Debian 12 / Ubuntu,
# skipping what is already there. The CUDA toolkit (nvcc) is expected under
# /usr/local/cuda or on PATH; it is not an apt package here.
set -euo pipefail

packages=(
  build-essential pkg-config meson ninja-build
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  valgrind
)

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
