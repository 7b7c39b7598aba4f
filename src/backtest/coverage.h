#pragma once
// Whether the intervals mean what they say: over every reference figure not
// used for fitting (a configuration in it was not calibrated on), the share
// that falls inside its 10th-90th percentile interval (nominal 80%) and the
// intervals' mean relative width. Leave-one-case-out: the model-form scales
// behind a case's intervals are fitted to the other cases' misses alone, so
// a figure never informs its own interval.

#include <string>
#include <utility>
#include <vector>

#include "backtest/backtest.h"
#include "uncertainty/model_error.h"

namespace ppsearch::backtest {

inline constexpr double kNominalCoverage = 0.8;

// How many held-out figures fall inside their intervals.
struct CoverageCount {
  int figures = 0;  // held-out figures with an interval, stated misses aside
  int inside = 0;
  // Held-out figures with a stated miss: a failure whose cause the case
  // names, outside the model's form; reported, and left out of the coverage
  // and the model-form fit so one known defect does not widen every interval.
  int stated = 0;
  double coverage = 0;             // inside / figures
  double mean_interval_width = 0;  // mean of (high - low) / predicted
};

struct Coverage : CoverageCount {
  // The same over the uncalibrated figures (CaseResult::uncalibrated):
  // whether the intervals hold before anything is measured.
  CoverageCount uncalibrated;
  // The scales fitted to every case (what --fit-model-error writes).
  uncertainty::ModelFormFit all;
  // Each case's scales, fitted without it, in case order.
  std::vector<std::pair<std::string, cost::ModelFormScales>> left_out;
};

// How the model missed in case `c`: each fit residual (at a calibrated point,
// distance 0) and each held-out reference figure at its distances, as
// log(measured / predicted). Memory figures are not throughput or latency
// misses, and figures with a stated miss are not misses of the model's form
// (their case names the cause): both are left out.
std::vector<uncertainty::Miss> MissesOf(const CaseResult& c);

// The scales fitted to every case's misses (what --fit-model-error writes).
uncertainty::ModelFormFit FitAll(const std::vector<CaseResult>& cases);

// Fills every interval-carrying figure's model_form_rel, interval and
// inside with the scales fitted without its case, and counts the held-out
// ones, calibrated and uncalibrated apart.
Coverage LeaveOneCaseOut(std::vector<CaseResult>& cases);

}  // namespace ppsearch::backtest
