#!/bin/bash
# The engine API as an application gets it: installs the engine library,
# its headers and pkg-config file (Meson's `devel` install tag; the plugin
# is not needed) into a scratch prefix, compiles every installed header on
# its own, then examples/engine_demo.cpp and temporal_demo.cpp, against the
# installed tree with `pkg-config cudafilters` alone, and runs them on the
# CPU. It fails if a header private to the library (cuda/) is reachable
# from the installed tree, if an installed class holds state outside a
# pointer to its implementation, or if an installed header names a switch
# of the tests.
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
# No header private to the library is reachable from the installed tree:
# neither as <cudafilters/NAME> nor as <NAME>. Each of these must fail to
# compile for want of the file, whatever else is installed: every header in
# the source tree's cuda/, and the names of the ones that once were public
# or that the tests reach the runners through.
private_headers=$(
  { printf '%s\n' frame_store.h frame_window.h poison.h runner_testing.h histeq_gpu_launch.h \
      nlm_weights.h clahe_geometry.h sharpen_taps.h
    find "$source/cuda" -type f \( -name '*.h' -o -name '*.cuh' \) -printf '%f\n'; } | sort -u)
for h in $private_headers; do
  for name in "cudafilters/$h" "$h"; do
    if out=$(echo "#include <$name>" | ${CXX:-c++} -std=c++17 -fsyntax-only -x c++ - $flags 2>&1); then
      echo "private, but reachable from the installed tree: <$name>"; exit 1
    fi
    grep -q "$name: No such file or directory" <<<"$out" || {
      echo "<$name> failed to compile for another reason than its absence:"; echo "$out"; exit 1; }
  done
done
echo "$(wc -w <<<"$private_headers") private headers are out of the installed tree's reach"

# An installed class shows no state: a private section (or a class's
# implicit one, before its first access label) holds nothing but a pointer
# to its implementation (`struct Impl; std::unique_ptr<Impl> impl_;`) and
# friend declarations. The owners of device and page-locked memory
# (cuda_memory.h) and the error type (cuda_check.h) are the exceptions.
state=0
for h in $headers; do
  case "$h" in cuda_memory.h|cuda_check.h) continue ;; esac
  awk -v file="cudafilters/$h" '
    function strip(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
    {
      line = $0; sub(/\/\/.*/, "", line); line = strip(line)
      d = depth
      # Directly in a class body: access labels, then what its private
      # sections hold.
      if (n > 0 && d == body[n] && line != "" && line !~ /^}/) {
        if (line ~ /^(public|protected):/) { hidden = 0; next }
        if (line ~ /^private:/) { hidden = 1; next }
        if (hidden && line != "struct Impl;" && line != "std::unique_ptr<Impl> impl_;" &&
            line !~ /^friend (struct|class) [A-Za-z_0-9]+;$/) {
          printf "%s:%d: private, not a pointer to the implementation: %s\n", file, NR, line
          bad = 1
        }
      }
      # A class or struct opens: its members are private, or public, until
      # a label says otherwise.
      if (line ~ /^(class|struct) [A-Za-z_0-9]+[^;]*\{$/) {
        n++; body[n] = d + 1; saved[n] = hidden; hidden = line ~ /^class /
      }
      depth += gsub(/\{/, "{", line) - gsub(/\}/, "}", line)
      while (n > 0 && depth < body[n]) { hidden = saved[n]; n-- }
    }
    END { exit bad }' "$includedir/cudafilters/$h" || state=1
done
[ "$state" = 0 ] || { echo "installed headers hold private state (docs/engine-api.md: the runners and engines are pimpl)"; exit 1; }
echo "no installed class but the memory owners and CudaError shows its state"

# No installed header names a switch of the test suites or benchmarks: an
# environment variable (a CUDAFILTERS_ name that is no macro the installed
# headers define), a test-only launch path or host path, a "for tests" hook.
macros=$(cd "$includedir/cudafilters" && grep -ho '#define CUDAFILTERS_[A-Z0-9_]*' $headers |
  awk '{print $2}' | sort -u || true)
switches=0
for h in $headers; do
  f="$includedir/cudafilters/$h"
  for name in $(grep -o 'CUDAFILTERS_[A-Z0-9_]*' "$f" | sort -u); do
    grep -qx "$name" <<<"$macros" || {
      grep -n "$name" "$f" | sed "s|^|cudafilters/$h:|"; switches=1; }
  done
  if grep -nEi 'for tests|test suites?|tests and benchmarks|kCopies|LaunchMode|getenv' "$f" |
      sed "s|^|cudafilters/$h:|" | grep .; then
    switches=1
  fi
done
[ "$switches" = 0 ] || { echo "installed headers name test switches: they belong in cuda/'s private headers"; exit 1; }
echo "no installed header names a test switch"

# Nor how the kernels compute: the weight coefficients and taps of NLM, the
# tile geometry of CLAHE, the taps and weights of sharpening live in
# cuda/<filter>/ (nlm_weights.h, clahe_geometry.h, sharpen_taps.h).
if arithmetic=$(cd "$includedir/cudafilters" && grep -nE \
    'NlmWeightCoeffs|nlm_(chroma_)?weight_coeffs|nlm_gaussian_taps|ClaheGeometry|clahe_geometry|sharpen_gaussian_taps|sharpen_tap_bits|kSharpenMaxTaps|UnsharpWeights|unsharp_weights|sharpen_threshold_levels' \
    $headers); then
  sed 's|^|cudafilters/|' <<<"$arithmetic"
  echo "installed headers declare the kernels' arithmetic: it belongs in cuda/'s private headers"; exit 1
fi
echo "no installed header declares the kernels' coefficients, taps or tile geometry"

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
