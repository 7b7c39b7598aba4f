#pragma once
// The backtest's outputs: a table per case (configurations, figures,
// comparisons) with a verdict footer, and the same as JSON.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backtest/backtest.h"

namespace ppsearch::backtest {

std::string RenderText(const std::vector<CaseResult>& cases);

// {"cases": [...], "figures", "figures_within", "signs", "signs_right", "passed"};
// key names are a contract (the end-to-end test reads them).
nlohmann::ordered_json RenderJson(const std::vector<CaseResult>& cases);

bool AllPassed(const std::vector<CaseResult>& cases);

}  // namespace ppsearch::backtest
