#!/bin/bash
# The engine API as an application gets it: installs the engine library,
# its headers and pkg-config file (Meson's `devel` install tag; the plugin
# is not needed) into a scratch prefix, compiles every installed header on
# its own, then examples/engine_demo.cpp and temporal_demo.cpp, against the
# installed tree with `pkg-config cudafilters` alone, and runs them on the
# CPU.
#
#   test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

meson install -C "$build" --no-rebuild --tags devel --destdir "$stage" >"$stage/install.log" 2>&1 || {
  cat "$stage/install.log"; exit 1; }
pc=$(find "$stage" -name cudafilters.pc | head -n 1)
if [ -z "$pc" ]; then
  echo "no cudafilters.pc installed"; exit 1
fi
# As docs/engine-api.md tells a user: PKG_CONFIG_PATH alone, no variable
# overridden (the .pc file is relocatable).
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs cudafilters)
echo "pkg-config cudafilters: $flags"
includedir=$(pkg-config --variable=includedir cudafilters)
case "$(realpath "$includedir")" in
  "$(realpath "$stage")"/*) ;;
  *) echo "includedir $includedir is outside the staged tree $stage"; exit 1 ;;
esac
headers=$(find "$includedir/cudafilters" -type f -printf '%P\n' | sort)
for h in cudafilters.h plane.h cpu_plane_filter.h cpu_window_runner.h histeq_params.h \
    sharpen_gpu.h; do
  grep -qx "$h" <<<"$headers" || { echo "not installed: cudafilters/$h"; exit 1; }
done
# The engines' insides stay private: no detail/ folder, no test hooks, no
# kernel headers.
for h in $headers; do
  case "$h" in
    */*|*.cuh|equalize_math.h|hd_math.h|poison.h|histeq_gpu_launch.h|*_kernels.h)
      echo "installed, but private: cudafilters/$h"; exit 1 ;;
  esac
done
# Each public header compiles on its own against the installed tree.
for h in $headers; do
  echo "#include <cudafilters/$h>" | ${CXX:-c++} -std=c++17 -fsyntax-only -x c++ - $flags || {
    echo "cudafilters/$h does not compile on its own against the installed headers"; exit 1; }
done
echo "$(wc -w <<<"$headers") installed headers compile on their own"

# The compiler sees only the installed headers: not the source tree's.
${CXX:-c++} -std=c++17 -o "$stage/engine_demo" "$source/examples/engine_demo.cpp" $flags
(cd "$stage" && ./engine_demo --cpu)
[ -s "$stage/engine_demo_out.pgm" ] || { echo "no output image"; exit 1; }
echo "engine_demo built against the installed library and ran"
${CXX:-c++} -std=c++17 -o "$stage/temporal_demo" "$source/examples/temporal_demo.cpp" $flags
"$stage/temporal_demo" --cpu
echo "temporal_demo built against the installed library and ran"
