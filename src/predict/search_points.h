#pragma once
// Predicting a whole search: every point (valid layout x concurrency) of the
// inputs' sweep, what pp-max-micro-batch-size = 1 would cost there when
// asked, and each point's interval over the calibration's uncertainty with
// what the intervals say about the choice. The one predictor of a search:
// `simulate`, the run analysis behind `report`, `search`, `backtest` and the
// benchmarks call it (PredictSearchPoint: one point of it, the same way).
// Pure: the same inputs, calibration and options give the same prediction.

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/calibration.h"
#include "inputs/search_inputs.h"
#include "predict/predict.h"
#include "uncertainty/model_error.h"
#include "uncertainty/summary.h"

namespace ppsearch::predict {

struct SearchOptions {
  // Also predict every PP > 1 point with pp-max-micro-batch-size = 1.
  bool cap_check = false;
  // Also predict each PP > 1 point with the layer split that leaves its
  // tightest stage more memory (plan/partition.h), where one does. The
  // layout is planned again from the spec alone, so this is for inputs
  // planned without a search's EngineKnobs (simulate's), or the two would
  // differ in more than the split.
  bool partition_check = false;
  bool keep_trace = false;
  // Draws behind the intervals; members 0: no intervals and no summary.
  uncertainty::EnsembleOptions ensemble;
  // The layouts the calibration was fitted to (where the next-measurement
  // advice starts from); empty when it names none.
  std::vector<spec::LayoutSpec> measured;
  int threads = 2;  // the result does not depend on it
  // Each token's arrival in the records (PointOptions::token_times); false
  // leaves the inter-token latencies out of the figures.
  bool token_times = true;
  // The model-form term every interval carries (uncertainty/model_error.h);
  // nullopt: the parameters' bands alone (tests that isolate them).
  // uncertainty::ModelFormFor gives the scales a calibration uses.
  std::optional<cost::ModelFormScales> model_form;
  // The ensemble uncertainty::DrawEnsemble draws from this calibration, the
  // inputs' hardware and `ensemble`, when the caller drew it already (a
  // search draws it once for every candidate's interval; it outlives the
  // call); null: drawn here.
  const uncertainty::Ensemble* drawn = nullptr;

  // Central values only: no intervals.
  static SearchOptions CentralOnly() {
    SearchOptions o;
    o.ensemble.members = 0;
    return o;
  }
};

struct SearchPoint {
  PointPrediction prediction;
  const plan::LayoutPlan* plan = nullptr;  // into the inputs' plan
  double cap1_input_tps = 0;               // with pp-max-micro-batch-size = 1; 0: not run
  // With SGLANG_PP_LAYER_PARTITION = roomier_partition (plan::RoomierPartition);
  // empty when not run or when no split leaves more room than the even one.
  std::vector<int> roomier_partition;
  double roomier_input_tps = 0;
  double roomier_peak_mib = 0;  // the highest stage peak, as prediction.memory.peak_mib_max
};

struct SearchPrediction {
  std::vector<SearchPoint> points;  // valid layouts in plan order, then concurrency
  // One per point, same order; empty when no intervals were drawn.
  std::vector<uncertainty::PointUncertainty> intervals;
  uncertainty::UncertaintySummary summary;
  uncertainty::EnsembleOptions ensemble;  // what the intervals were drawn with
  // The model-form term applied, and each interval's extrapolation
  // distances from the calibration (same order as intervals).
  std::optional<cost::ModelFormScales> model_form;
  std::vector<uncertainty::Extrapolation> extrapolation;

  const uncertainty::PointUncertainty* IntervalOf(size_t point) const {
    return point < intervals.size() ? &intervals[point] : nullptr;
  }
};

// A point of a search: a layout of its plan at one of its concurrencies.
struct PlannedPoint {
  const plan::LayoutPlan* plan = nullptr;  // into the inputs' plan
  int concurrency = 0;
};
// The points PredictSearch predicts, in its order: every valid layout the
// simulator models, in plan order, then the sweep's concurrencies.
std::vector<PlannedPoint> SearchPointsOf(const inputs::SearchInputs& inputs);

// Which point of a search to predict, and how.
struct PointRequest {
  int concurrency = 1;
  // The workload's seed; nullopt: the spec's (workload.seed). A run's repeat
  // passes its own.
  std::optional<uint64_t> seed;
  bool keep_trace = false;
  int pp_max_micro_batch_size = 0;  // 0: the spec's
  bool token_times = true;          // PointOptions::token_times
};

// One point of `inputs`' search, predicted as PredictSearch predicts each
// of its points: the inputs' spec, model and hardware under `calibration`.
// `layout` is one of its plan's layouts, or a layout planned against the
// same spec, model and hardware (plan::PlanLayout: a measured layout the
// calibration fit is given). The one way a point is predicted: the search,
// the simulated engine's samples, their profile breakdown and every
// evaluation of the calibration fit.
PointPrediction PredictSearchPoint(const inputs::SearchInputs& inputs,
                                   const plan::LayoutPlan& layout,
                                   const cost::Calibration& calibration,
                                   const PointRequest& request);

// The same point, each instance of the layout apart (PredictEachInstance):
// what the simulated engine turns into each instance's evidence.
std::vector<PointPrediction> PredictSearchPointEachInstance(const inputs::SearchInputs& inputs,
                                                            const plan::LayoutPlan& layout,
                                                            const cost::Calibration& calibration,
                                                            const PointRequest& request);

// How much of a point's prediction `with` the hardware profile's tensor
// burst ([tensor_burst]: a faster tensor rate for a short window after
// idle) gives, from the point predicted again (as PredictSearchPoint
// predicts it) with the burst taken out. In a closed loop, of its input
// throughput: 1 - (input TPS without) / with.input_tps. In an open loop
// (workload.request_rate > 0) the input throughput is the arrival rate's
// while the server keeps up, burst or not, and a share of it would be the
// two samples' noise (negative as often as not); there it is of TTFT p50,
// what the burst takes off the first token's wait: 1 - with.ttft_p50_s /
// (TTFT p50 without). 0 when the profile has no burst or the figure is 0.
// The burst is one public run's window, not a measured limit, so the share
// says how far a prediction leans on it.
double TensorBurstShare(const inputs::SearchInputs& inputs, const plan::LayoutPlan& layout,
                        const cost::Calibration& calibration, const PointRequest& request,
                        const stats::Figures& with);

// The figure TensorBurstShare gives a share of, as the JSON names it:
// "input_tps" in a closed loop, "ttft_p50_s" in an open one.
const char* TensorBurstFigure(bool open_loop);

// What the intervals carry of one prediction.
uncertainty::MemberValues ValuesOf(const PointPrediction& p);

SearchPrediction PredictSearch(const inputs::SearchInputs& inputs,
                               const cost::Calibration& calibration, const SearchOptions& options);

}  // namespace ppsearch::predict
