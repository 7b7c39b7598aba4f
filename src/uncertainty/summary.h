#pragma once
// Everything `ppsearch simulate` says about a prediction's uncertainty, from
// the propagated points: which parameters move each layout, the predicted
// ranking under the decision's objective, whether the best and the
// runner-up overlap, and which measurement would narrow the choice most.

#include <optional>
#include <string>
#include <vector>

#include "uncertainty/ensemble.h"
#include "uncertainty/overlap.h"
#include "uncertainty/propagate.h"
#include "uncertainty/sensitivity.h"

namespace ppsearch::uncertainty {

struct SummaryInputs {
  std::vector<int> levels;                   // the sweep's concurrency levels
  decide::Objective objective;               // one the draws carry (Objective::Drawn)
  std::vector<spec::LayoutSpec> candidates;  // layouts the decision may pick
  std::vector<spec::LayoutSpec> measured;    // layouts the calibration was fitted to
};

struct UncertaintySummary {
  std::vector<LayoutSensitivity> sensitivity;
  std::vector<LayoutScore> ranking;  // best first
  std::optional<NextMeasurement> next;
  bool overlap = false;      // the best and the runner-up overlap at some level
  std::string overlap_note;  // empty with fewer than two ranked layouts
};

// The objective's interval of `layout` at each level it has a point.
std::vector<LevelInterval> ObjectiveIntervals(const std::vector<PointUncertainty>& points,
                                              const spec::LayoutSpec& layout,
                                              const decide::Objective& objective);

UncertaintySummary Summarize(const std::vector<PointUncertainty>& points, const Ensemble& ensemble,
                             const SummaryInputs& in);

}  // namespace ppsearch::uncertainty
