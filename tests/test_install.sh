#!/bin/bash
# The engine API as an application gets it: installs the build into a
# scratch prefix, compiles examples/engine_demo.cpp and temporal_demo.cpp against the installed
# headers and library with `pkg-config cudafilters` alone, and runs them on
# the CPU.
#
#   test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

meson install -C "$build" --no-rebuild --destdir "$stage" >"$stage/install.log" 2>&1 || {
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
for h in cudafilters.h plane.h sharpen_gpu.h detail/hd_math.h; do
  [ -f "$includedir/cudafilters/$h" ] || { echo "not installed: cudafilters/$h"; exit 1; }
done

# The compiler sees only the installed headers: not the source tree's.
${CXX:-c++} -std=c++17 -o "$stage/engine_demo" "$source/examples/engine_demo.cpp" $flags
(cd "$stage" && ./engine_demo --cpu)
[ -s "$stage/engine_demo_out.pgm" ] || { echo "no output image"; exit 1; }
echo "engine_demo built against the installed library and ran"
${CXX:-c++} -std=c++17 -o "$stage/temporal_demo" "$source/examples/temporal_demo.cpp" $flags
"$stage/temporal_demo" --cpu
echo "temporal_demo built against the installed library and ran"
