#pragma once
// `ppsearch simulate` of an aggregated spec: its text (the result table, the
// decode figures, each point's time breakdown per stage, the
// pp-max-micro-batch-size = 1 check, the uncertainty tables) and its --json
// document (the one owner of that document's keys; docs/formats.md).
// cli/cmd_simulate.cc predicts and hands the prediction here.

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "inputs/search_inputs.h"
#include "predict/search_points.h"
#include "uncertainty/ensemble.h"

namespace ppsearch::report {

// A predicted point and what is drawn beside it.
struct SimulatedPoint {
  const predict::SearchPoint* point = nullptr;
  const uncertainty::PointUncertainty* spread = nullptr;      // null: no intervals
  const uncertainty::Extrapolation* extrapolation = nullptr;  // null: no model-form term
  // The share of its input TPS the profile's tensor burst gives
  // (predict::TensorBurstShare); nullopt: the profile has no burst.
  std::optional<double> burst_share;
};

struct SimulatedPage {
  std::string spec_path;
  const inputs::SearchInputs* inputs = nullptr;
  const cost::Calibration* calibration = nullptr;
  const predict::SearchPrediction* prediction = nullptr;
  std::vector<SimulatedPoint> points;  // one per prediction->points
  uncertainty::EnsembleOptions ensemble;
};

// The header (setup, calibration, steady state, burst, interval meaning),
// the result table, the decode table for a decode workload, the breakdown,
// the cap check and, with intervals, sensitivity and the decision under
// uncertainty.
std::string RenderSimulatedPrediction(const SimulatedPage& page);

// {"simulated": true, "calibration", "calibration_infeasible", "points":
// [...], "steady_rule", "memory_interval", "uncertainty" (with intervals)}.
nlohmann::json SimulatedPredictionJson(const SimulatedPage& page);

}  // namespace ppsearch::report
