#pragma once
// Timeline export in the Chrome trace event format (JSON), which
// ui.perfetto.dev and chrome://tracing open: one process per simulated
// point, one thread per pipeline stage, one slice per micro-batch with its
// compute, collective and transfer parts nested inside.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/engine.h"

namespace ppsearch::sim {

struct TracePoint {
  std::string label;                     // e.g. "PP4/TP8/EP4 C=8"
  std::vector<std::string> stage_names;  // e.g. "stage 0 (601)"
  const SimResult* result = nullptr;
};

nlohmann::json TraceToJson(const std::vector<TracePoint>& points);

}  // namespace ppsearch::sim
