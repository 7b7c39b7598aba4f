#pragma once
// What the simulator predicts for the points of a run or a search, as the
// reports show it: the central value (no repeat noise) of input TPS and
// TTFT, the share of the sample window each pipeline stage spends in
// compute, exposed TP collectives, pipeline transfer, kernel gaps and idle
// (the bubble), each stage's peak memory, and each value's interval (the
// 10th to 90th percentile over an ensemble of the calibration's uncertain
// parameters, uncertainty/). Made once, by predict::PredictSearch; the
// renderers in report/ only read it.

#include <optional>
#include <string>
#include <vector>

#include "inputs/search_inputs.h"
#include "predict/search_points.h"
#include "stats/point_figures.h"
#include "uncertainty/propagate.h"

namespace ppsearch::analysis {

// A run's point as predicted: its figures (stats::Figures) with the
// stages' shares and memory.
struct PredictedPoint : stats::Figures {
  spec::LayoutSpec layout;
  int concurrency = 0;
  std::vector<predict::StageShare> stages;  // by pp_rank
  std::vector<double> stage_peak_mib;       // by pp_rank
  std::optional<uncertainty::Interval> input_tps_interval{}, ttft_p50_interval{},
      ttft_p95_interval{}, peak_gpu_mib_interval{};
  double peak_gpu_mib = 0;          // the highest stage peak
  double peak_spread_mib = 0;       // highest minus lowest stage peak
  int pp_max_micro_batch_size = 0;  // the cap the scheduler ran with
  double cap1_input_tps = 0;        // with pp-max-micro-batch-size = 1; 0: not run
  // With the layer split that leaves more room (predict::SearchPoint's).
  std::vector<int> roomier_partition;
  double roomier_input_tps = 0;
  double roomier_peak_mib = 0;
};

struct RunPrediction {
  std::vector<PredictedPoint> points;  // empty: no prediction
  std::string note;                    // where it came from, or why there is none
  int interval_members = 0;            // ensemble size of the intervals (0: none)
  const PredictedPoint* Find(const spec::LayoutSpec& layout, int concurrency) const;
};

// The points of a search prediction with their intervals, in its order.
std::vector<PredictedPoint> PredictedPoints(const predict::SearchPrediction& prediction);

// Whether the predicted intervals of the decision's objective (one the
// draws carry: decide::Objective::adaptive) of the primary and the
// runner-up overlap (uncertainty::OverlapNote); nullopt when either has no
// intervals.
std::optional<std::string> OverlapNote(const RunPrediction& prediction,
                                       const spec::LayoutSpec& primary,
                                       const spec::LayoutSpec& runner_up,
                                       const decide::Objective& objective);

// Predicts every point of a run's sweep from its inputs (its spec copy, the
// model config and hardware profile it names; null when they did not load)
// and `calibration_path` (metadata/calibration.json; "" when the run holds
// none: a simulated run then used the shipped profile, and so does its
// prediction), with the intervals of uncertainty::EnsembleOptions' default
// draws. A measured run without a calibration has none.
RunPrediction PredictRun(const inputs::SearchInputs* inputs, bool simulated,
                         const std::string& calibration_path);

}  // namespace ppsearch::analysis
