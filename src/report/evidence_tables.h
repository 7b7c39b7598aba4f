#pragma once
// The derived files of a run directory that tools read: results.csv (one
// row per sample), summary.csv (one row per layout x concurrency) and
// summary.json (the same plus the decision and the checks), each the rows
// of a run's analysis handed to its format's owner in evidence/
// (results_csv, medians_csv, summary_json). Columns, keys and units are
// listed in docs/formats.md.

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/run.h"
#include "compare/confounders.h"

namespace ppsearch::report {

std::string ResultsCsv(const analysis::RunAnalysis& a);
std::string SummaryCsv(const analysis::RunAnalysis& a);
// `baseline_check` as in RenderReportMarkdown: checks.baseline_confounders.
nlohmann::json SummaryJson(const analysis::RunAnalysis& a,
                           const compare::ConfounderReport* baseline_check = nullptr);

}  // namespace ppsearch::report
