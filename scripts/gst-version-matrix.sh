#!/bin/bash
# Builds the plugin against each GStreamer prefix made by
# scripts/build-gstreamer.sh and runs the tests with that GStreamer alone
# (its libraries, plugins, plugin scanner and tools); "system" stands for
# the system's GStreamer. Prints one line per GStreamer at the end.
#
#   scripts/gst-version-matrix.sh [--suite cpu|gpu] PREFIX|system...
#
# Each build goes to build-gst-<version>. GPU_ARCHS (default 90) are the
# compute capabilities compiled; the gpu suite skips without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH

suite=cpu
if [ "${1:-}" = "--suite" ]; then
  suite=$2
  shift 2
fi
if [ $# -eq 0 ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi

# Points pkg-config, the loader and GStreamer's registry at one prefix.
use_gstreamer() {
  [ "$1" = system ] && return
  local prefix
  prefix=$(realpath "$1")
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  export LD_LIBRARY_PATH="$prefix/lib"
  export PATH="$prefix/bin:$PATH"
  export GST_PLUGIN_SYSTEM_PATH_1_0="$prefix/lib/gstreamer-1.0"
  export GST_PLUGIN_SCANNER_1_0="$prefix/libexec/gstreamer-1.0/gst-plugin-scanner"
}

results=()
for prefix in "$@"; do
  version=$(use_gstreamer "$prefix" && pkg-config --modversion gstreamer-1.0) || version=""
  if [ -z "$version" ]; then
    results+=("$prefix: FAIL, no gstreamer-1.0 there")
    continue
  fi
  build="build-gst-$version"
  mkdir -p "$build"
  echo "== GStreamer $version ($prefix) in $build"
  (
    set -e
    use_gstreamer "$prefix"
    if [ ! -f "$build/build.ninja" ]; then
      scripts/meson-setup.sh "$build" -Dgpu_archs="${GPU_ARCHS:-90}" -Dexamples=disabled -Dbench=disabled
    fi
    meson compile -C "$build"
    meson test -C "$build" --suite "$suite" --print-errorlogs
  ) > "$build/matrix.log" 2>&1
  status=$?
  summary=$(grep -E '^(Ok|Fail|Skipped|Timeout):' "$build/matrix.log" | tr -s ' ' | tr '\n' ' ')
  results+=("GStreamer $version ($prefix), $suite suite: $([ $status -eq 0 ] && echo pass || echo FAIL) ${summary}(log: $build/matrix.log)")
  echo "${results[-1]}"
done
echo
printf '%s\n' "${results[@]}"
