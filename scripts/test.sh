#!/usr/bin/env bash
# Builds ppsearch and runs every test; the last lines are ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
bash scripts/build.sh
root=$PWD
cd "${BUILD_DIR:-build}"
# ctest starts the longest tests first when it knows their times; a fresh
# build has none, so it is given the last known times of the slow ones (the
# fuzz tests' include their clang++ build), and a tail of long tests no
# longer runs on one core while the other idles. Later runs keep their own.
if [ ! -f Testing/Temporary/CTestCostData.txt ]; then
  mkdir -p Testing/Temporary
  cp "$root/tests/ctest_costs.txt" Testing/Temporary/CTestCostData.txt
fi
ctest --output-on-failure -j "$(nproc)" --timeout 600
