#pragma once
// The page `ppsearch simulate SPEC --html FILE` writes: the same kind of
// page as report.html for a search that has not run yet. Every value is the
// simulator's prediction (one run per point, no repeats), with its
// intervals and what they mean for the choice when they were computed.

#include <string>
#include <vector>

#include "cost/calibration.h"
#include "predict/predict.h"
#include "spec/spec.h"
#include "uncertainty/summary.h"

namespace ppsearch::report {

struct SimulationPage {
  std::string spec_path;
  std::string calibration_source;  // "uncalibrated" or the calibration file
  std::string setup;               // "Kimi K3 on 4 x 8 RTX 6000D; 40 requests x ..."
  double gpu_total_mib = 0;
  std::vector<predict::PointPrediction> points;
  // Per point (same order): input TPS with pp-max-micro-batch-size = 1; 0 = not run.
  std::vector<double> cap1_input_tps;
  // Empty: no intervals. Else one per point, any order, and what they imply.
  std::vector<uncertainty::PointUncertainty> intervals;
  uncertainty::UncertaintySummary uncertainty;
  const cost::Calibration* calibration = nullptr;  // statuses in the sensitivity table
  int interval_members = 0;
  uint64_t interval_seed = 0;
};

std::string RenderSimulationHtml(const spec::Spec& spec, const SimulationPage& page);

}  // namespace ppsearch::report
