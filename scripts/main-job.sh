#!/usr/bin/env bash
# The main job: builds ppsearch, then runs the Kimi K3 PP/TP search on the
# built-in simulated engine, calibrated on the measured PP1 baseline. Ends
# with the report and the decision; the evidence is under results/.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the binary: the tests build in scripts/test.sh.
bash scripts/build.sh ppsearch
BIN=./${BUILD_DIR:-build}/ppsearch
SPEC=examples/kimi-k3-pp-search.toml
mkdir -p results
"$BIN" calibrate "$SPEC" --measured data/baseline/pp1-tp32-ep4.csv \
  --profile-summary data/baseline/pp1-nsys-summary.json -o results/calibration.json
"$BIN" simulate "$SPEC" --calibration results/calibration.json --trace results/trace.json
# Beyond the spec's four layouts: every layout of the cluster, ranked, and a
# run spec of the ones worth measuring.
"$BIN" search "$SPEC" --calibration results/calibration.json --html results/search.html \
  --emit-spec results/measure.toml
# The same choice measured adaptively: only the points that settle it (its
# report in results/adaptive-report.md, the stop line printed here).
"$BIN" run "$SPEC" --engine sim --calibration results/calibration.json --adaptive \
  >results/adaptive-report.md
grep '^Stopped:' results/adaptive-report.md
"$BIN" run "$SPEC" --engine sim --calibration results/calibration.json
