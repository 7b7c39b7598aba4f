#pragma once
// What the simulator predicts for the points of a report: the central value
// (no repeat noise) of input TPS and TTFT, and the share of the sample
// window each pipeline stage spends in compute, exposed TP collectives,
// pipeline transfer, kernel gaps and idle (the bubble). A run has a
// prediction when it was simulated or carries a calibration in metadata/;
// `ppsearch simulate` makes one for every point of a spec. Each value has
// its interval: the 10th to 90th percentile over an ensemble of the
// calibration's uncertain parameters (uncertainty/).

#include <optional>
#include <string>
#include <vector>

#include "analysis/run.h"
#include "predict/predict.h"
#include "uncertainty/propagate.h"

namespace ppsearch::report {

struct PredictedPoint {
  spec::LayoutSpec layout;
  int concurrency = 0;
  double input_tps = 0;
  double ttft_p50_s = 0;
  double ttft_p95_s = 0;
  std::vector<predict::StageShare> stages;  // by pp_rank
  std::vector<double> stage_peak_mib;       // by pp_rank
  std::optional<uncertainty::Interval> input_tps_interval{}, ttft_p50_interval{},
      ttft_p95_interval{}, peak_gpu_mib_interval{};
};

struct RunPrediction {
  std::vector<PredictedPoint> points;  // empty: no prediction
  std::string note;                    // where it came from, or why there is none
  int interval_members = 0;            // ensemble size of the intervals (0: none)
  const PredictedPoint* Find(const spec::LayoutSpec& layout, int concurrency) const;
};

PredictedPoint FromPointPrediction(const predict::PointPrediction& p);
// Sets each point's intervals from the propagated point of the same layout and concurrency.
void AttachIntervals(const std::vector<uncertainty::PointUncertainty>& spread,
                     std::vector<PredictedPoint>& points);

// Whether the predicted intervals of the decision's objective (TTFT p50 when
// `ttft`, else input TPS) of the primary and the runner-up overlap
// (uncertainty::OverlapNote); nullopt when either has no intervals.
std::optional<std::string> OverlapNote(const RunPrediction& prediction,
                                       const spec::LayoutSpec& primary,
                                       const spec::LayoutSpec& runner_up, bool ttft);

// Predicts every point of the run's sweep from its spec copy, model config,
// hardware profile and metadata/calibration.json (a simulated run without
// one used the shipped profile, and so does its prediction), with the
// intervals of uncertainty::EnsembleOptions' default draws. A real run
// without a calibration has none.
RunPrediction PredictRun(const analysis::RunAnalysis& a);

}  // namespace ppsearch::report
