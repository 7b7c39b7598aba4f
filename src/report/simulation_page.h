#pragma once
// The page `ppsearch simulate SPEC --html FILE` writes: the same kind of
// page as report.html for a search that has not run yet. Every value is the
// simulator's prediction (one run per point, no repeats, no decision).

#include <string>
#include <vector>

#include "predict/predict.h"
#include "spec/spec.h"

namespace ppsearch::report {

struct SimulationPage {
  std::string spec_path;
  std::string calibration_source;  // "uncalibrated" or the calibration file
  std::string setup;               // "Kimi K3 on 4 x 8 RTX 6000D; 40 requests x ..."
  double gpu_total_mib = 0;
  std::vector<predict::PointPrediction> points;
  // Per point (same order): input TPS with pp-max-micro-batch-size = 1; 0 = not run.
  std::vector<double> cap1_input_tps;
};

std::string RenderSimulationHtml(const spec::Spec& spec, const SimulationPage& page);

}  // namespace ppsearch::report
