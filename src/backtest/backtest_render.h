#pragma once
// The backtest's outputs: a table per case (configurations, figures,
// comparisons) with a verdict footer, the same as JSON, and its tables as
// markdown.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backtest/backtest.h"
#include "backtest/coverage.h"

namespace ppsearch::backtest {

std::string RenderText(const std::vector<CaseResult>& cases, const Coverage& coverage = {});

// The same results as markdown tables (figures, implied comparisons,
// refusals) and a totals line: what validation/README.md shows, regenerated
// by scripts/docs.sh rather than copied by hand.
std::string RenderMarkdown(const std::vector<CaseResult>& cases, const Coverage& coverage = {});

// {"cases": [...], "figures", "figures_within", "signs", "signs_right",
// "passed", "coverage", "mean_interval_width", ...}; key names are a
// contract (the end-to-end test reads them).
nlohmann::ordered_json RenderJson(const std::vector<CaseResult>& cases,
                                  const Coverage& coverage = {});

bool AllPassed(const std::vector<CaseResult>& cases);

}  // namespace ppsearch::backtest
