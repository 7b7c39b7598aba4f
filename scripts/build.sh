#!/usr/bin/env bash
# Configures and builds ppsearch into build/ (Release, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DPPSEARCH_WERROR=ON >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
