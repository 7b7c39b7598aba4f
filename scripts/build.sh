#!/usr/bin/env bash
# Configures and builds ppsearch into build/ (warnings as errors). The build
# type is Release unless BUILD_TYPE says otherwise (Debug, RelWithDebInfo,
# MinSizeRel); the tests run on the build they are given. With TARGET
# arguments only those are built (scripts/main-job.sh builds `ppsearch`
# alone); without, everything: the binary, every test and benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}
# Configured again when the build type changes, so BUILD_TYPE always holds.
if [ ! -f "$BUILD_DIR/build.ninja" ] ||
    ! grep -qx "CMAKE_BUILD_TYPE:STRING=$BUILD_TYPE" "$BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DPPSEARCH_WERROR=ON >/dev/null
fi
TARGETS=()
for t in "$@"; do TARGETS+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "$(nproc)" "${TARGETS[@]}"
