#pragma once
// What the ensemble says about where the uncertainty comes from and what
// would reduce it:
//  - per layout, the parameters that move its predicted input TPS most: the
//    squared rank (Spearman) correlation between each varying parameter and
//    the layout's mean log input TPS over its concurrency levels across the
//    members, normalised so the shares sum to 1 (a share of the variance the
//    parameters explain one at a time; correlated parameters share credit);
//  - the predicted ranking of the layouts under the decision's score
//    (decide::RelativeScores) and, for the best and the runner-up, the
//    margin log(score_best / score_runner_up) in every member;
//  - for each point not yet measured, the squared Pearson correlation
//    between its predicted log objective value and that margin: under a
//    linear-Gaussian reading, the share of the margin's variance that an
//    exact measurement of the point would remove.

#include <optional>
#include <string>
#include <vector>

#include "cost/parameters.h"
#include "uncertainty/ensemble.h"
#include "uncertainty/propagate.h"

namespace ppsearch::uncertainty {

struct ParamShare {
  cost::Param param;
  double share = 0;        // of the explained variance, 0..1
  double correlation = 0;  // the signed rank correlation
};

struct LayoutSensitivity {
  spec::LayoutSpec layout;
  std::vector<ParamShare> top;  // largest share first
  // How much of the layout's input TPS interval is model form rather than
  // parameters: ModelFormShare (model_error.h), the mean over its points.
  double model_form_share = 0;
};

// One entry per layout of `points` (in their order), with at most `top`
// parameters; a layout whose TPS does not vary has none.
std::vector<LayoutSensitivity> ParameterSensitivity(const std::vector<PointUncertainty>& points,
                                                    const Ensemble& ensemble, int top = 3);

// The objective's value at a point (one the draws carry: Objective::Drawn).
double ObjectiveValue(const MemberValues& v, const decide::Objective& objective);

struct LayoutScore {
  spec::LayoutSpec layout;
  double score = 0;  // decide::RelativeScores of the central predictions
};

// `candidates` (layouts with a point at every level of `levels`) ranked by
// the decision's score of their central predictions, best first.
std::vector<LayoutScore> RankLayouts(const std::vector<PointUncertainty>& points,
                                     const std::vector<spec::LayoutSpec>& candidates,
                                     const std::vector<int>& levels,
                                     const decide::Objective& objective);

struct NextMeasurement {
  spec::LayoutSpec primary, runner_up;
  // Members in which the runner-up scores higher than the primary.
  int flips = 0;
  int members = 0;
  // The point whose measurement explains most of the margin's variance.
  std::optional<spec::LayoutSpec> layout;
  int concurrency = 0;
  double explained = 0;  // 0..1
};

// For the two best of `ranked`, over the points not in `measured` layouts.
// nullopt with fewer than two ranked layouts or no members.
std::optional<NextMeasurement> BestNextMeasurement(const std::vector<PointUncertainty>& points,
                                                   const std::vector<LayoutScore>& ranked,
                                                   const std::vector<int>& levels,
                                                   const decide::Objective& objective,
                                                   const std::vector<spec::LayoutSpec>& measured);

// "measure PP8/TP4/EP4 at C=8 next: it explains 71% of the uncertainty in
// PP8/TP4/EP4-vs-PP4/TP8/EP4"; when no point explains anything, says so.
std::string NextMeasurementLine(const NextMeasurement& n);

}  // namespace ppsearch::uncertainty
