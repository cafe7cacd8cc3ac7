#!/bin/bash
# scripts/run-benchmarks.sh RESULTS_DIR replaces RESULTS_DIR: the one the
# caller names from its own directory, and only if it is empty or an
# earlier run's (never a file). Run here as a copy in an empty checkout,
# so that it stops
# at its first benchmark (there is no build) if it gets that far.
set -uo pipefail
script=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/checkout/scripts" "$work/checkout/results" "$work/caller/results"
cp "$script" "$work/checkout/scripts/run-benchmarks.sh"
echo keep > "$work/checkout/results/important.txt"
echo keep > "$work/caller/results/important.txt"
cd "$work/caller"
FRAMES=1 "$work/checkout/scripts/run-benchmarks.sh" results > "$work/log" 2>&1
status=$?
cat "$work/log"
for kept in "$work/checkout/results/important.txt" \
    "$work/caller/results/important.txt"; do
  if [ "$(cat "$kept" 2>/dev/null)" != keep ]; then
    echo "FAILED: ${kept#$work/} is gone"; exit 1
  fi
done
[ "$status" -ne 0 ] || { echo "FAILED: it ran over a directory of other files"; exit 1; }
grep -q "refusing to replace $work/caller/results" "$work/log" ||
  { echo "FAILED: no refusal that names the caller's directory"; exit 1; }

# A file given as the directory is not replaced by one either.
echo keep > "$work/caller/thesis.pdf"
FRAMES=1 "$work/checkout/scripts/run-benchmarks.sh" thesis.pdf > "$work/log" 2>&1
status=$?
cat "$work/log"
[ "$(cat "$work/caller/thesis.pdf" 2>/dev/null)" = keep ] ||
  { echo "FAILED: the file thesis.pdf given as RESULTS_DIR is gone"; exit 1; }
[ "$status" -ne 0 ] || { echo "FAILED: it ran over a file"; exit 1; }
echo OK
