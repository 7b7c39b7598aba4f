#pragma once
// What a prediction's uncertainty means for the decision, as `ppsearch
// simulate` prints it and its --html page shows it: which parameters move
// each layout's input TPS, the predicted best and runner-up, whether their
// intervals overlap, how often the ensemble swaps them, and which
// measurement would narrow the choice most.

#include <string>
#include <vector>

#include "cost/calibration.h"
#include "decide/objective.h"
#include "report/document.h"
#include "uncertainty/summary.h"

namespace ppsearch::report {

// One row per layout: its top parameters, "moe_gemm_eff 54% (prior, +)" each:
// its share, its calibration status, and + when TPS rises with it.
table::Table SensitivityTable(const uncertainty::UncertaintySummary& s,
                              const cost::Calibration& calibration);

// The predicted best and runner-up, the overlap note, the draws that swap
// them and the next measurement, one sentence each (empty with fewer than
// two ranked layouts).
std::vector<std::string> DecisionUncertaintyLines(const uncertainty::UncertaintySummary& s,
                                                  const decide::Objective& objective);

// "10th–90th percentile over 32 draws (seed 1) of the parameters ..."
std::string IntervalMeaning(int members, uint64_t seed);

Section UncertaintySection(const uncertainty::UncertaintySummary& s,
                           const cost::Calibration& calibration, const decide::Objective& objective,
                           int members, uint64_t seed);

}  // namespace ppsearch::report
