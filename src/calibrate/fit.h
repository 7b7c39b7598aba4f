#pragma once
// Fitting the performance model's physical parameters (cost/parameters.h) to
// measured layouts: input throughput and TTFT per concurrency, and, where a
// profile summary is given, the exposed-communication share. A bounded
// maximum-a-posteriori fit in log-parameter space: every parameter stays in
// its physical bounds, a weak prior holds the ones the data does not reach,
// and the Gauss-Newton curvature at the optimum says which ones the data
// determined and how much uncertainty is left. Pure: inputs in, values out.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "evidence/calibration_file.h"
#include "hardware/hardware.h"
#include "inputs/search_inputs.h"
#include "model/model.h"
#include "nsys/analysis_json.h"
#include "nsys/compute_kernels.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::calibrate {

struct MeasuredPoint {
  int concurrency = 0;
  double input_tps = 0;
  double ttft_p50_s = 0;  // 0: not measured
  double ttft_p95_s = 0;
  double peak_gpu_mib = 0;
};

// One measured layout.
struct Measurement {
  spec::LayoutSpec layout;
  std::vector<MeasuredPoint> points;
  std::optional<double> exposed_comm_share;  // from an Nsight profile summary
  std::string source;
  // The profile's compute by kernel class (`ppsearch nsys`'s compute_classes,
  // median share of the window), in nsys::kAllComputeClasses' order; absent
  // from summaries that state none. Compared, not fitted to.
  std::optional<std::array<double, nsys::kComputeClasses>> compute_class_shares;
  int line = 0;  // of its first row in `source`, a CSV of medians; 0 for none
};

// A profiled layout's compute by class, measured and as the fitted model
// predicts it (mean over the measured points of the stages' mean share).
struct ClassShares {
  spec::LayoutSpec layout;
  std::array<double, nsys::kComputeClasses> measured{}, predicted{};
};

// Measurement noise each residual is divided by (docs/model.md, "Calibration parameters").
struct Noise {
  double input_tps_rel = 0.02;      // repeats of one point agree within about 2%
  double ttft_rel = 0.05;           // TTFT also carries queueing order
  double peak_rel = 0.02;           // a post-run memory snapshot's peak
  double exposed_share_abs = 0.03;  // a profile's prefill windows differ by a few points
};

// A fitted point measured against predicted, and a layout's exposed
// communication share: the calibration file records them as they are.
using PointResidual = evidence::CalibrationFitPoint;
using ShareResidual = evidence::CalibrationFitShare;

struct FitResult {
  cost::Calibration calibration;  // values, statuses, notes, covariance, infeasible
  std::vector<PointResidual> residuals;
  std::vector<ShareResidual> shares;
  std::vector<ClassShares> class_shares;  // the profiled layouts that state classes
  // Leave-one-layout-out: each layout predicted by a fit to the others
  // (only when two or more layouts were measured).
  std::vector<PointResidual> held_out;
  double posterior_sigma[cost::kParamCount] = {};  // log-space, after the fit
  double prior_sigma[cost::kParamCount] = {};
  int evaluations = 0;
};

// A run directory's medians are of `in`'s model and GPU: its run.json
// records the model config it read (compared by content) and the hardware
// profile (by name), and a run of another is an error naming both, since a
// fit to it would carry another model's or GPU's speed into this one's
// predictions. A CSV, or a run that recorded no inputs, says neither and is
// not checked.
Status CheckMeasuredSetup(const std::string& path, const inputs::SearchInputs& in);

// Reads measured layouts from `path`: a CSV of medians with columns pp, tp,
// ep, concurrency, input_tps_median (ttft_p50_s_median, ttft_p95_s_median,
// peak_gpu_mib optional; rows of several layouts allowed), a run's
// summary.csv, or a run directory (its summary.csv).
// Points without valid repeats (every repeat failed) are left out, with a
// line in `notes` saying so; so is a note when the medians are simulated.
Result<std::vector<Measurement>> LoadMeasurements(const std::string& path,
                                                  std::vector<std::string>* notes = nullptr);

// Attaches a profile summary JSON (exposed_nccl_share_of_prefill_window_median;
// "layout": {pp, tp, ep} names the layout it profiles, required when more
// than one layout was measured; "compute_classes", as `ppsearch nsys` writes
// it, optional).
Status AttachProfileSummary(const std::string& path, std::vector<Measurement>& measurements);

struct FitInputs {
  std::vector<Measurement> measurements;
  // One per measurement, same order, each planned against `search`'s spec,
  // model and hardware (a measured layout need not be one of its sweep's).
  std::vector<plan::LayoutPlan> plans;
  // The spec, model and hardware every point is predicted with
  // (predict::PredictSearchPoint, as a search predicts its points).
  const inputs::SearchInputs* search = nullptr;
  Noise noise;
};

// The off-prior rule (docs/model.md, "Fitted values far from their prior"):
// every parameter `fit` drove more than its prior range's width outside the
// range gets a finding in calibration.off_prior, and its log-space variance
// grows by the squared distance to the nearest prior edge. FitCalibration
// applies it; `fit.calibration.log_covariance` must be filled.
void FlagOffPrior(const hardware::HardwareProfile& hw, FitResult& fit);

// Fits all measured points together; with two or more layouts, also the
// leave-one-layout-out predictions.
Result<FitResult> FitCalibration(const FitInputs& inputs);

// The concurrency levels the measurements hold, ascending, once each: where
// a fit sits for the model-form term's concurrency distance.
std::vector<int> MeasuredConcurrency(const std::vector<Measurement>& measurements);

}  // namespace ppsearch::calibrate
