// ppsearch report RUN_DIR [--json | --html]: rebuild results.csv, summary.csv,
// summary.json, report.md and report.html of a run directory from its
// evidence alone, and print the report (or summary.json, or the page). A
// run directory that cannot be written (an archive) is printed all the
// same, with one line on stderr saying nothing was rewritten.

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "evidence/evidence.h"
#include "report/build_report.h"
#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::cli {
namespace {

static_assert(static_cast<int>(report::kReportOk) == kExitOk);
static_assert(static_cast<int>(report::kReportIncomplete) == kExitIncomplete);
static_assert(static_cast<int>(report::kReportNoneQualifies) == kExitNoneQualifies);

struct ReportOptions {
  std::string run_dir;
  bool json = false;
  bool html = false;
};

// A run still going holds its directory's lock: a report written now would
// be replaced by the run's own at its end, or, finishing after it, replace
// that one with a report of fewer samples. A directory that cannot be
// written is read without the lock (BuildReport says it wrote nothing).
Result<std::unique_ptr<DirLock>> HoldRunDir(const std::string& run_dir) {
  const evidence::RunPaths paths{run_dir};
  std::error_code ec;
  if (!std::filesystem::exists(paths.run_json(), ec)) return std::unique_ptr<DirLock>();
  Result<std::unique_ptr<DirLock>> held =
      LockDirectory(run_dir, paths.lock(), "run directory " + run_dir);
  if (!held.ok() && held.error().kind == ErrorKind::kIo) return std::unique_ptr<DirLock>();
  return held;
}

Result<ExitCode> RunReport(const ReportOptions& opts) {
  PPS_ASSIGN_OR_RETURN(const std::unique_ptr<DirLock> lock, HoldRunDir(opts.run_dir));
  Result<report::ReportOutcome> outcome = report::BuildReport(opts.run_dir);
  if (!outcome.ok()) return outcome.error();
  for (const std::string& w : outcome->warnings) std::cerr << "warning: " << w << "\n";
  if (!outcome->not_written.empty())
    std::cerr << "note: " << opts.run_dir << " cannot be written (" << outcome->not_written
              << "): results.csv, summary.csv, summary.json, report.md and report.html were not "
                 "rewritten\n";
  if (opts.json)
    std::cout << JsonText(outcome->summary, 2) << "\n";
  else if (opts.html)
    std::cout << outcome->html;
  else
    std::cout << outcome->markdown;
  // The report is printed either way; these outcomes are still errors.
  if (outcome->exit_code == kExitIncomplete)
    return MakeError(fmt::format("the sweep is incomplete: {} of {} samples are not completed in "
                                 "the manifest (exit {})",
                                 outcome->summary["checks"]["missing_samples"].size(),
                                 outcome->summary["checks"]["samples_expected"].dump(),
                                 static_cast<int>(kExitIncomplete)),
                     ErrorKind::kIncomplete);
  if (outcome->exit_code == kExitNoneQualifies)
    return MakeError(fmt::format("no layout qualifies under the decision policy (exit {})",
                                 static_cast<int>(kExitNoneQualifies)),
                     ErrorKind::kNoQualifier);
  return static_cast<ExitCode>(outcome->exit_code);
}

}  // namespace

Runner AddReportCommand(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "report",
      "Rebuild results.csv, summary.csv, summary.json, report.md and report.html of a run "
      "directory from its "
      "evidence; exit 3 if the sweep is incomplete, 4 if no layout qualifies");
  auto opts = std::make_shared<ReportOptions>();
  sub->add_option("RUN_DIR", opts->run_dir, "The run directory, results/<RUN_ID>")->required();
  auto* json =
      sub->add_flag("--json", opts->json, "Print summary.json instead of the markdown report");
  sub->add_flag("--html", opts->html,
                "Print report.html (the self-contained page with charts) instead of the markdown "
                "report")
      ->excludes(json);
  return [opts] { return RunReport(*opts); };
}

}  // namespace ppsearch::cli
