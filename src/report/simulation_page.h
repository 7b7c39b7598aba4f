#pragma once
// The page `ppsearch simulate SPEC --html FILE` writes: the same kind of
// page as report.html for a search that has not run yet. Every value is the
// simulator's prediction (one run per point, no repeats), with its
// intervals and what they mean for the choice when they were computed.

#include <string>
#include <vector>

#include "analysis/prediction.h"
#include "cost/calibration.h"
#include "spec/spec.h"
#include "uncertainty/summary.h"

namespace ppsearch::report {

struct SimulationPage {
  std::string spec_path;
  std::string calibration_source;  // "uncalibrated" or the calibration file
  std::string setup;               // "Kimi K3 on 4 x 8 RTX 6000D; 40 requests x ..."
  double gpu_total_mib = 0;
  // Every point with its intervals (interval_members 0: none) and its
  // pp-max-micro-batch-size = 1 figure when it was simulated.
  analysis::RunPrediction prediction;
  uncertainty::UncertaintySummary uncertainty;     // what the intervals imply
  const cost::Calibration* calibration = nullptr;  // statuses in the sensitivity table
  uint64_t interval_seed = 0;
};

std::string RenderSimulationHtml(const spec::Spec& spec, const SimulationPage& page);

}  // namespace ppsearch::report
