#pragma once
// Fitting the calibration parameters to one measured layout: its input
// throughput at each concurrency and, when a profile summary is given, the
// exposed-communication share. Pure: inputs in, fitted values out.

#include <optional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "hardware/hardware.h"
#include "model/model.h"
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

struct Measurement {
  spec::LayoutSpec layout;
  std::vector<MeasuredPoint> points;
  std::optional<double> exposed_comm_share;  // from an Nsight profile summary
  std::string source;
};

struct PointResidual {
  int concurrency = 0;
  double measured_tps = 0, predicted_tps = 0;
  double measured_ttft_p50_s = 0, predicted_ttft_p50_s = 0;
  double predicted_peak_mib = 0, measured_peak_mib = 0;
};

struct FitResult {
  cost::Calibration calibration;
  std::vector<PointResidual> residuals;
  std::optional<double> measured_exposed_share;
  double predicted_exposed_share = 0;
  std::vector<std::string> fitted;    // parameter names the measurement identified
  std::vector<std::string> kept;      // parameters left at the profile's values, with why
  std::vector<std::string> warnings;  // bounds hit, implausible values
};

// Reads a CSV of medians (columns pp, tp, ep, concurrency, input_tps_median,
// ttft_p50_s_median, ...; see data/baseline/) and optionally a profile
// summary JSON with exposed_nccl_share_of_prefill_window_median.
Result<Measurement> LoadMeasurement(const std::string& csv_path, const std::string& profile_path);

Result<FitResult> FitCalibration(const Measurement& measured, const plan::LayoutPlan& plan,
                                 const spec::Spec& spec, const model::ModelDesc& model,
                                 const hardware::HardwareProfile& hw);

}  // namespace ppsearch::calibrate
