#include "report/build_report.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "analysis/run.h"
#include "compare/load.h"
#include "evidence/evidence.h"
#include "report/charts.h"
#include "report/evidence_tables.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/profile_evidence_section.h"
#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::report {
namespace {

// The confounder check `ppsearch compare` makes, of this run (A) against its
// imported baseline (B): the baseline run's own metadata when it can still
// be read, else the rows of the CSV (or of the run's copied summary.csv).
std::optional<compare::ConfounderReport> BaselineConfounders(const analysis::RunAnalysis& a) {
  if (!a.baseline_imported) return std::nullopt;
  return compare::FindConfounders(
      compare::DescribeEvidence(a.evidence, a.evidence.run_dir),
      compare::DescribeImport(a.spec().baseline, a.baseline_rows, a.baseline_source));
}

// Why `dir` cannot take the rebuilt files, "" when it can. access(2) says
// EROFS for a read-only mount even to root, and EACCES to a user without
// write permission: an archived run either way.
std::string NotWritable(const std::string& dir) {
  if (::access(dir.c_str(), W_OK) == 0) return "";
  const int error = errno;
  if (error != EROFS && error != EACCES && error != EPERM) return "";
  return std::strerror(error);
}

}  // namespace

Result<ReportOutcome> BuildReport(const std::string& run_dir) {
  PPS_ASSIGN_OR_RETURN(analysis::RunAnalysis a, analysis::AnalyseRun(run_dir));
  const std::optional<compare::ConfounderReport> check = BaselineConfounders(a);
  ReportOutcome out;
  PPS_ASSIGN_OR_RETURN(std::vector<std::string> profile_lines, ProfileEvidenceLines(run_dir));
  const Document doc = ReportDocument(a, a.prediction, profile_lines, check ? &*check : nullptr);
  out.markdown = RenderMarkdown(doc);
  out.html = RenderHtml(doc, RenderCharts(ChartInputsFromRun(a, a.prediction)));
  out.summary = SummaryJson(a, check ? &*check : nullptr);
  out.decision = a.decision;
  out.warnings = a.comparability;
  if (check && !check->comparable)
    out.warnings.push_back("baseline " + a.baseline_source + ": " + check->verdict);
  out.warnings.insert(out.warnings.end(), a.warnings.begin(), a.warnings.end());
  const evidence::RunPaths paths{run_dir};
  const std::vector<std::pair<std::string, std::string>> files = {
      {paths.results_csv(), ResultsCsv(a)},
      {paths.summary_csv(), SummaryCsv(a)},
      {paths.summary_json(), JsonText(out.summary, 2) + "\n"},
      {paths.report_md(), out.markdown},
      {paths.report_html(), out.html},
  };
  out.not_written = NotWritable(run_dir);
  for (const auto& [path, contents] : files) {
    if (!out.not_written.empty()) break;
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
