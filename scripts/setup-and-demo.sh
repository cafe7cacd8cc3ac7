#!/bin/bash
# One command for a new machine: install what is missing (with scikit-image's
# photos), build, and equalize a real photo, scikit-image's moon.png, with
# cudahisteq and cudaclahe (scripts/demo.sh): demo/before.png,
# demo/after.png, demo/after-clahe.png and demo/before-after.png.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --pictures
scripts/build.sh
scripts/demo.sh demo
