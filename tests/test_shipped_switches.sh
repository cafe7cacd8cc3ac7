#!/bin/bash
# The installed plugin reads none of the test switches; the plugin the tests
# build reads each of them (docs/deployment.md, "Environment variables").
#
#   test_shipped_switches.sh INSTALLED_PLUGIN TESTS_PLUGIN
set -euo pipefail
shipped=$1
testing=$2
for v in CUDAFILTERS_POISON_OUTPUT CUDAFILTERS_HOST_SYNC CUDAFILTERS_TEST_OTHER_DEVICE; do
  if grep -aq "$v" "$shipped"; then
    echo "the installed plugin names $v"; exit 1
  fi
  grep -aq "$v" "$testing" || { echo "the tests' plugin does not name $v"; exit 1; }
done
for v in CUDAFILTERS_HOST_WAIT CUDAFILTERS_HOST_REGISTRY_BYTES; do
  grep -aq "$v" "$shipped" || { echo "the installed plugin does not name $v"; exit 1; }
done
echo "the installed plugin names no test switch"
