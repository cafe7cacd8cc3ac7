#!/bin/bash
# meson setup DIR ARGS..., with CUDA header dependencies tracked: Meson
# before 1.4 gives nvcc no dependency arguments, so editing a header would
# rebuild none of the CUDA objects that include it
# (mesonbuild/meson#12665). For those releases the CUDA compiler is
# scripts/nvcc-deps, named by a native file written into DIR.
set -euo pipefail
dir=$1
shift
native=()
if ! meson --version | awk -F. '{ exit !($1 > 1 || ($1 == 1 && $2 >= 4)) }'; then
  mkdir -p "$dir"
  # Absolute paths: Meson reads the file again when it reconfigures itself.
  ini="$(cd "$dir" && pwd)/nvcc-deps.ini"
  printf "[binaries]\ncuda = '%s'\n" "$(cd "$(dirname "$0")" && pwd)/nvcc-deps" > "$ini"
  native=(--native-file "$ini")
fi
exec meson setup "$dir" "${native[@]}" "$@"
