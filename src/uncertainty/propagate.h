#pragma once
// Carrying a calibration's uncertainty through a predictor: every point
// (layout x concurrency) is evaluated once per ensemble member, and its
// interval is the 10th to 90th percentile of the members' values. The
// interval says what the parameters the calibration left uncertain allow;
// it is not measurement noise (the simulator has none per point). The
// predictor is passed in (predict::PredictSearch passes the simulator), so
// this layer knows ensembles and percentiles, not how a point is predicted.

#include <functional>
#include <vector>

#include "decide/objective.h"
#include "spec/spec.h"
#include "stats/point_figures.h"
#include "uncertainty/ensemble.h"

namespace ppsearch::uncertainty {

inline constexpr double kIntervalLowPercentile = 10;
inline constexpr double kIntervalHighPercentile = 90;

struct Interval {
  double low = 0, high = 0;
  bool Overlaps(const Interval& o) const { return low <= o.high && o.low <= high; }
};

// The 10th to 90th percentile of `values` (stats::Percentile).
Interval IntervalOf(const std::vector<double>& values);

// What one member predicts for a point: its figures (the decode ones 0
// when requests have one output token) and the memory plan's peak.
struct MemberValues : stats::Figures {
  double peak_gpu_mib = 0;
};

// The figures a decide::Objective reads from one draw: input TPS, TTFT p50
// and output TPS; 0 for the others.
inline decide::ObjectiveFigures ObjectiveDraw(const MemberValues& v) {
  return {v.input_tps, v.ttft_p50_s, v.output_tps, 0, 0};
}

// The parameter ensemble's bands alone, before the model-form term.
struct ParameterIntervals {
  Interval input_tps, ttft_p50_s, ttft_p95_s;
  Interval tpot_p50_s, itl_p99_s, output_tps, e2e_p50_s;
};

struct PointUncertainty {
  spec::LayoutSpec layout;
  int concurrency = 0;
  MemberValues central;               // the calibration's own prediction
  std::vector<MemberValues> members;  // in ensemble order
  // The intervals every output shows. Throughput, TTFT and the decode
  // figures carry the model-form term once ApplyModelForm (model_error.h)
  // ran; peak memory is
  // the parameters' band alone (the discrepancy is fitted to throughput and
  // TTFT misses; memory is a different quantity with its own backtest).
  Interval input_tps, ttft_p50_s, ttft_p95_s, peak_gpu_mib;
  Interval tpot_p50_s, itl_p99_s, output_tps, e2e_p50_s;
  ParameterIntervals parameter;  // equal to the above until ApplyModelForm
  double model_form_rel = 0;     // z90 * sigma, the discrepancy's log half-width
  // Input TPS, TTFT p50 and output TPS with only the part of the model form
  // that tells one layout from another (ApplyModelForm's `compared_sigma`):
  // what a search compares candidates by. A term every candidate of one
  // search shares (no calibration, another GPU profile, the lengths) moves
  // them all alike and cancels in a ratio to the best. Equal to the
  // parameter bands until ApplyModelForm.
  Interval compared_input_tps, compared_ttft_p50_s, compared_output_tps;
  double compared_model_form_rel = 0;  // z90 * compared_sigma
};

// A point to propagate: which point it is and its central prediction.
struct PointJob {
  spec::LayoutSpec layout;
  int concurrency = 0;
  MemberValues central;  // the calibration's own prediction, carried into the result
};

// What the predictor gives for job `job` (an index into the jobs) under one
// member's parameters. Called concurrently from several threads: it must
// not share mutable state between calls.
using EvaluateFn = std::function<MemberValues(size_t job, const cost::Calibration& member)>;

// One PointUncertainty per job, in job order. Members are evaluated on up to
// `threads` threads; each value lands in its own slot, so the result does
// not depend on the thread count.
std::vector<PointUncertainty> Propagate(const std::vector<PointJob>& jobs, const Ensemble& ensemble,
                                        const EvaluateFn& evaluate, int threads = 2);

}  // namespace ppsearch::uncertainty
