#pragma once
// calibration.json: the one reader and writer of the calibration file that
// `ppsearch calibrate -o FILE` writes and `simulate`, `run`, `search` and the
// run analysis read (format: docs/formats.md). `calibrate/` produces the
// numbers (cost::Calibration); this file is how they are kept on disk:
// the schema, every key's check, and the `fit` section that says what the
// parameters were fitted to.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::evidence {

inline constexpr const char* kCalibrationSchema = "ppsearch.calibration/2";

// One fitted point as the file's fit.points (and fit.leave_one_layout_out)
// records it: measured against predicted.
// calibrate::PointResidual is this type: the fit's residuals are what the
// file records.
struct CalibrationFitPoint {
  spec::LayoutSpec layout;
  int concurrency = 0;
  double measured_tps = 0, predicted_tps = 0;
  double measured_ttft_p50_s = 0, predicted_ttft_p50_s = 0;
  double predicted_peak_mib = 0, measured_peak_mib = 0;
};

// A layout's exposed communication share, measured (an Nsight profile's
// summary) and predicted (calibrate::ShareResidual).
struct CalibrationFitShare {
  spec::LayoutSpec layout;
  double measured = 0, predicted = 0;
};

// What `calibrate` writes under `fit` beside the Calibration's own fitted_*
// fields: where each measured layout came from and how the fit met it. The
// loader reads back only the fields the Calibration holds.
struct CalibrationFitRecord {
  std::vector<std::string> measured;  // one source per fitted layout, in fitted_layouts' order
  std::vector<CalibrationFitPoint> points;
  std::vector<CalibrationFitShare> exposed_comm_share;
  std::vector<CalibrationFitPoint> leave_one_layout_out;  // empty: not computed
};

// Reads and checks a calibration file: its schema, every parameter's name
// (the closest known one named when unknown) and fixed physical bound, the
// statuses, the covariance's shape and the model-form term's formula.
Result<cost::Calibration> LoadCalibration(const std::string& path);
// The same checks on a calibration already parsed (run.json keeps the
// calibration a run used under `calibration`); `path` names it in errors
// and becomes the result's source.
Result<cost::Calibration> ParseCalibration(const nlohmann::json& j, const std::string& path);

// Writes `calibration` to `path` atomically. With `fit`, the file also gets
// its `fit` section (the Calibration's fitted_hardware, fitted_gpus_per_node,
// fitted_input_tokens and the record's layouts, sources and points).
Status SaveCalibration(const cost::Calibration& calibration, const std::string& path,
                       const CalibrationFitRecord* fit = nullptr);

}  // namespace ppsearch::evidence
