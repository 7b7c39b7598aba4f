#pragma once
// `ppsearch compare A B` as a value: the matched points, the prediction
// check when exactly one side is simulated, and the confounder check. Pure.

#include <optional>

#include "compare/confounders.h"
#include "compare/load.h"
#include "compare/match.h"
#include "util/result.h"

namespace ppsearch::compare {

struct Comparison {
  Side a;
  Side b;
  PointMatch match;
  std::optional<PredictionCheck> prediction;  // one side simulated, the other measured
  ConfounderReport confounders;
};

// An error when no point matches: it lists the layouts and concurrency
// levels each side holds.
Result<Comparison> Compare(Side a, Side b);

}  // namespace ppsearch::compare
