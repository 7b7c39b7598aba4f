#pragma once
// What people read of a comparison (compare/comparison.h): the text of
// `ppsearch compare`, its --json, and the confounder section that report.md
// and summary.json carry for an imported baseline. Pure.

#include <nlohmann/json.hpp>
#include <string>

#include "compare/comparison.h"

namespace ppsearch::report {

std::string RenderComparisonText(const compare::Comparison& c);
nlohmann::json ComparisonJson(const compare::Comparison& c);

// The confounder table, what was not checked and the verdict line, as
// markdown (report.md) or fixed-width text.
std::string RenderConfounders(const compare::ConfounderReport& r, bool markdown);
nlohmann::json ConfoundersJson(const compare::ConfounderReport& r);

}  // namespace ppsearch::report
