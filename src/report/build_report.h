#pragma once
// `ppsearch report` as a library call: analyse a run directory from its
// evidence alone and (re)write its derived files, results.csv, summary.csv,
// summary.json, report.md and report.html. `ppsearch run` calls it when a sweep ends.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/decision.h"
#include "util/result.h"

namespace ppsearch::report {

// Outcome codes, equal to cli::ExitCode's values (checked in cmd_report.cc).
enum ReportExit : int {
  kReportOk = 0,             // a layout qualifies
  kReportIncomplete = 3,     // samples of the sweep are not completed in the manifest
  kReportNoneQualifies = 4,  // no layout meets the decision policy
};

struct ReportOutcome {
  std::string markdown;    // report.md
  std::string html;        // report.html: the same document, with charts
  nlohmann::json summary;  // summary.json
  analysis::Decision decision;
  std::vector<std::string> warnings;  // comparability and evidence warnings, for stderr
  std::vector<std::string> written;   // paths of the files written
  // Why none was written ("Read-only file system"): the run directory
  // cannot be written, as an archived run; "" when they were.
  std::string not_written;
  int exit_code = kReportOk;  // incomplete wins over none qualifies
};

// Errors (exit code 2 for a caller): the run directory or its metadata is
// missing or invalid; the message names the path and what is missing. A
// run directory that cannot be written (read-only, no permission) is not an
// error: the outcome says so in not_written and nothing is written. Any
// other failure to write a derived file is an error.
Result<ReportOutcome> BuildReport(const std::string& run_dir);

}  // namespace ppsearch::report
