#include "report/build_report.h"

#include "analysis/run.h"
#include "evidence/evidence.h"
#include "report/charts.h"
#include "report/evidence_tables.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/profile_evidence.h"
#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::report {

Result<ReportOutcome> BuildReport(const std::string& run_dir) {
  PPS_ASSIGN_OR_RETURN(analysis::RunAnalysis a, analysis::AnalyseRun(run_dir));
  ReportOutcome out;
  PPS_ASSIGN_OR_RETURN(std::vector<std::string> profile_lines, ProfileEvidenceLines(run_dir));
  const RunPrediction prediction = PredictRun(a);
  const Document doc = ReportDocument(a, prediction, profile_lines);
  out.markdown = RenderMarkdown(doc);
  out.html = RenderHtml(doc, RenderCharts(ChartInputsFromRun(a, prediction)));
  out.summary = SummaryJson(a);
  out.decision = a.decision;
  out.warnings = a.comparability;
  out.warnings.insert(out.warnings.end(), a.warnings.begin(), a.warnings.end());
  const evidence::RunPaths paths{run_dir};
  const std::vector<std::pair<std::string, std::string>> files = {
      {paths.file("results.csv"), ResultsCsv(a)},
      {paths.file("summary.csv"), SummaryCsv(a)},
      {paths.file("summary.json"), JsonText(out.summary, 2) + "\n"},
      {paths.file("report.md"), out.markdown},
      {paths.file("report.html"), out.html},
  };
  for (const auto& [path, contents] : files) {
    PPS_RETURN_IF_ERROR(WriteFileAtomic(path, contents));
    out.written.push_back(path);
  }
  if (a.incomplete())
    out.exit_code = kReportIncomplete;
  else if (!a.decision.any_qualifies())
    out.exit_code = kReportNoneQualifies;
  return out;
}

}  // namespace ppsearch::report
