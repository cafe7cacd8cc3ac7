#!/bin/bash
# The README's first command as a newcomer meets it, with a python3 first on
# PATH that lacks Debian's Python packages (as a pyenv, conda or virtualenv
# interpreter does): its demo step (scripts/demo.sh) must equalize the photo,
# and a Python example must run. Skipped (77) when no python3 here has
# scikit-image (scripts/install-deps.sh --pictures installs it).
#
#   test_first_command.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
source=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source"

if ! python3 scripts/interpreter.py skimage gi numpy >/dev/null 2>&1; then
  echo "no python3 here has scikit-image, PyGObject and numpy: skipped"
  exit 77
fi

# A python3 without the distribution's packages: a virtualenv without system
# site packages, or, where the venv module is missing, the distribution's
# interpreter without its site directories.
bare="$work/bare"
if ! python3 -m venv --without-pip "$bare" >/dev/null 2>&1; then
  mkdir -p "$bare/bin"
  printf '#!/bin/sh\nexec /usr/bin/python3 -S -s "$@"\n' >"$bare/bin/python3"
  chmod +x "$bare/bin/python3"
fi
export PATH="$bare/bin:$PATH"
if python3 -c 'import skimage' 2>/dev/null || python3 -c 'import gi' 2>/dev/null; then
  echo "the bare python3 ($(command -v python3)) has the modules: the test would prove nothing"
  exit 1
fi
echo "python3 first on PATH: $(command -v python3), without scikit-image and PyGObject"

BUILD_DIR="$build" scripts/demo.sh "$work/demo"
for f in before after after-clahe before-after; do
  [ -s "$work/demo/$f.png" ] || { echo "demo wrote no $f.png"; exit 1; }
done
if cmp -s "$work/demo/before.png" "$work/demo/after.png"; then
  echo "after.png is the photo unchanged"; exit 1
fi

GST_PLUGIN_PATH="$build/plugin" examples/python/appsrc_appsink.py \
  --frames 4 --width 64 --height 48 --patch-size 3 --search-size 7
echo "demo and example ran with $(command -v python3) first on PATH"
