#pragma once
// What the simulator predicts for the points of a report: the central value
// (no repeat noise) of input TPS and TTFT, and the share of the sample
// window each pipeline stage spends in compute, exposed TP collectives,
// pipeline transfer, kernel gaps and idle (the bubble). A run has a
// prediction when it was simulated or carries a calibration in metadata/;
// `ppsearch simulate` makes one for every point of a spec.

#include <string>
#include <vector>

#include "analysis/run.h"
#include "predict/predict.h"

namespace ppsearch::report {

struct PredictedPoint {
  spec::LayoutSpec layout;
  int concurrency = 0;
  double input_tps = 0;
  double ttft_p50_s = 0;
  double ttft_p95_s = 0;
  std::vector<predict::StageShare> stages;  // by pp_rank
  std::vector<double> stage_peak_mib;       // by pp_rank
};

struct RunPrediction {
  std::vector<PredictedPoint> points;  // empty: no prediction
  std::string note;                    // where it came from, or why there is none
  const PredictedPoint* Find(const spec::LayoutSpec& layout, int concurrency) const;
};

PredictedPoint FromPointPrediction(const predict::PointPrediction& p);

// Predicts every point of the run's sweep from its spec copy, model config,
// hardware profile and metadata/calibration.json (a simulated run without
// one used the shipped profile, and so does its prediction). A real run
// without a calibration has none.
RunPrediction PredictRun(const analysis::RunAnalysis& a);

}  // namespace ppsearch::report
