#!/usr/bin/env bash
# The main job: builds ppsearch, plans the Kimi K3 PP/TP search, calibrates the
# simulator on the measured PP1 baseline and predicts every layout.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
SPEC=examples/kimi-k3-pp-search.toml
OUT=${OUT:-results/main-job}
mkdir -p "$OUT"
./build/ppsearch plan "$SPEC" --layout 8/4/4
./build/ppsearch calibrate "$SPEC" --measured data/baseline/pp1-tp32-ep4.csv \
  --profile-summary data/baseline/pp1-nsys-summary.json -o "$OUT/calibration.json"
./build/ppsearch simulate "$SPEC" --calibration "$OUT/calibration.json" --trace "$OUT/trace.json"
