#pragma once
// Scoring the adaptive policy where the truth differs from the model in a
// way calibration cannot absorb: each scenario gives every candidate layout
// a hidden, seeded factor on its throughput (up to +-hidden, TTFT divided
// by it), writes the resulting medians as a CSV, and replays that sweep
// twice through the real runner and analysis: once in full, once
// adaptively. A scenario agrees when both reach the same primary and
// fallback; what each spent is counted the same way (adaptive/observe.h).
// Deterministic for a seed.

#include <string>
#include <utility>
#include <vector>

#include "cost/calibration.h"
#include "inputs/search_inputs.h"
#include "util/result.h"

namespace ppsearch::adaptive_eval {

struct ScenarioOptions {
  int scenarios = 20;
  uint64_t seed = 1;
  double hidden = 0.20;  // each layout's throughput is truth x U(1 - hidden, 1 + hidden)
  double spread = 0.02;  // repeat spread ((max - min) / median) the replay adds
  std::string work_dir;  // replay files and run directories go here (must exist)
  // The spec file and --set values the runs record (and their analysis
  // reads back); `inputs` must be what they load to.
  std::string spec_path;
  std::vector<std::string> overrides;
};

struct ScenarioResult {
  int index = 0;                                       // 1-based
  std::vector<std::pair<std::string, double>> hidden;  // layout label -> factor
  std::string full_primary, full_fallback;
  std::string adaptive_primary, adaptive_fallback;
  bool agrees = false;
  double full_gpu_hours = 0, adaptive_gpu_hours = 0;
  int full_samples = 0, adaptive_samples = 0;
  std::string stop_reason;

  double fraction() const { return full_gpu_hours > 0 ? adaptive_gpu_hours / full_gpu_hours : 0; }
};

struct Evaluation {
  std::vector<ScenarioResult> results;
  int agree = 0;
  double median_fraction = 0, worst_fraction = 0;  // of the full sweep's GPU-hours
};

// `calibration` makes the model's truth (before the hidden factors) and is
// where each adaptive run starts.
Result<Evaluation> Evaluate(const inputs::SearchInputs& inputs,
                            const cost::Calibration& calibration, const ScenarioOptions& options);

}  // namespace ppsearch::adaptive_eval
