#pragma once
// report.md: the report a team writes after a layout search, in the shape of
// the mission's (result table, memory table, checks stated with numbers,
// communication domains, decision with reasons, flags not to carry forward,
// baseline comparability, how to reproduce), plus the simulator's prediction
// and time breakdown. Pure: a function of the analysis and the prediction.
// report.html renders the same Document (report/html.h).

#include <string>
#include <vector>

#include "analysis/prediction.h"
#include "analysis/run.h"
#include "compare/confounders.h"
#include "report/document.h"

namespace ppsearch::report {

// `profile_lines`: the "Profile evidence" section (report/profile_evidence_section.h).
// `baseline_check`: the confounder check of an imported baseline (null when
// none is imported), rendered under "Baseline comparability".
Document ReportDocument(const analysis::RunAnalysis& a, const analysis::RunPrediction& prediction,
                        const std::vector<std::string>& profile_lines = {},
                        const compare::ConfounderReport* baseline_check = nullptr);

// RenderMarkdown(ReportDocument(a, a.prediction, profile_lines, baseline_check)).
std::string RenderReportMarkdown(const analysis::RunAnalysis& a,
                                 const std::vector<std::string>& profile_lines = {},
                                 const compare::ConfounderReport* baseline_check = nullptr);

// Sections, one sentence per line (no leading "- "), exposed for tests.
std::vector<std::string> CheckLines(const analysis::RunAnalysis& a);
std::vector<std::string> CommunicationLines(const analysis::RunAnalysis& a);

// "varies by less than 0.7%": the smallest tenth of a percent strictly above
// the spread (0.0063 -> "0.7%", 0.007 -> "0.8%").
std::string LessThanPercent(double fraction);

}  // namespace ppsearch::report
