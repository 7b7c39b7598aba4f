#pragma once
// The derived files of a run directory that tools read: results.csv (one
// row per sample), summary.csv (one row per layout x concurrency) and
// summary.json (the same plus the decision and the checks). Columns and
// units are listed in docs/formats.md; schema_version is the first
// column of every CSV row and a key of the JSON.

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/run.h"
#include "compare/confounders.h"

namespace ppsearch::report {

inline constexpr int kReportSchemaVersion = 1;

std::string ResultsCsv(const analysis::RunAnalysis& a);
std::string SummaryCsv(const analysis::RunAnalysis& a);
// `baseline_check` as in RenderReportMarkdown: checks.baseline_confounders.
nlohmann::json SummaryJson(const analysis::RunAnalysis& a,
                           const compare::ConfounderReport* baseline_check = nullptr);

}  // namespace ppsearch::report
