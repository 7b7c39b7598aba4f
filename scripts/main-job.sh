#!/usr/bin/env bash
# The main job: builds ppsearch, then plans and simulates the Kimi K3 PP/TP search.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/ppsearch plan examples/kimi-k3-pp-search.toml
