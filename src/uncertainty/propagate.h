#pragma once
// Carrying a calibration's uncertainty through the predictor: every point
// (layout x concurrency) is predicted once per ensemble member, and its
// interval is the 10th to 90th percentile of the members' values. The
// interval says what the parameters the calibration left uncertain allow;
// it is not measurement noise (the simulator has none per point).

#include <vector>

#include "predict/predict.h"
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

// What one member predicts for a point.
struct MemberValues {
  double input_tps = 0;
  double ttft_p50_s = 0;
  double ttft_p95_s = 0;
  double peak_gpu_mib = 0;
};
MemberValues ValuesOf(const predict::PointPrediction& p);

struct PointUncertainty {
  spec::LayoutSpec layout;
  int concurrency = 0;
  MemberValues central;               // the calibration's own prediction
  std::vector<MemberValues> members;  // in ensemble order
  Interval input_tps, ttft_p50_s, ttft_p95_s, peak_gpu_mib;
};

// A point to propagate: its layout plan and the options of its central prediction.
struct PointJob {
  const plan::LayoutPlan* plan = nullptr;
  predict::PointOptions options;
  MemberValues central;  // ValuesOf(its central prediction), carried into the result
};

struct PredictInputs {
  const spec::Spec* spec = nullptr;
  const model::ModelDesc* model = nullptr;
  const hardware::HardwareProfile* hw = nullptr;
};

// One PointUncertainty per job, in job order. Members are predicted on up to
// `threads` threads; each prediction lands in its own slot, so the result
// does not depend on the thread count. Traces are never kept.
std::vector<PointUncertainty> Propagate(const std::vector<PointJob>& jobs, const PredictInputs& in,
                                        const Ensemble& ensemble, int threads = 2);

}  // namespace ppsearch::uncertainty
