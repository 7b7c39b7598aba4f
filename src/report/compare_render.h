#pragma once
// What people read of a comparison (compare/comparison.h): the text of
// `ppsearch compare`, its --json, and the confounder section that report.md
// and summary.json carry for an imported baseline. Pure.

#include <nlohmann/json.hpp>
#include <string>

#include "compare/comparison.h"
#include "evidence/run_summary.h"
#include "report/document.h"

namespace ppsearch::report {

std::string RenderComparisonText(const compare::Comparison& c);
nlohmann::json ComparisonJson(const compare::Comparison& c);

// The confounder table, what was not checked and the verdict line: as a
// report section's blocks (report.md and report.html), or as terminal text.
std::vector<Block> ConfounderBlocks(const compare::ConfounderReport& r);
std::string RenderConfounders(const compare::ConfounderReport& r);
// The check as summary.json and --json write it (evidence::ConfounderCheckJson).
evidence::ConfounderCheck ConfounderCheckOf(const compare::ConfounderReport& r);

}  // namespace ppsearch::report
