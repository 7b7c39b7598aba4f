// ppsearch report RUN_DIR [--json | --html]: rebuild results.csv, summary.csv,
// summary.json, report.md and report.html of a run directory from its
// evidence alone, and print the report (or summary.json, or the page).

#include <iostream>
#include <memory>

#include "cli/command.h"
#include "report/build_report.h"
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

void RunReport(const ReportOptions& opts, int& exit_code) {
  Result<report::ReportOutcome> outcome = report::BuildReport(opts.run_dir);
  if (!outcome.ok()) return ReportError(outcome.error(), exit_code);
  for (const std::string& w : outcome->warnings) std::cerr << "warning: " << w << "\n";
  if (opts.json)
    std::cout << JsonText(outcome->summary, 2) << "\n";
  else if (opts.html)
    std::cout << outcome->html;
  else
    std::cout << outcome->markdown;
  if (outcome->exit_code == kExitIncomplete)
    std::cerr << "error: the sweep is incomplete: "
              << outcome->summary["checks"]["missing_samples"].size() << " of "
              << outcome->summary["checks"]["samples_expected"]
              << " samples are not completed in the manifest (exit " << kExitIncomplete << ")\n";
  else if (outcome->exit_code == kExitNoneQualifies)
    std::cerr << "error: no layout qualifies under the decision policy (exit " << kExitNoneQualifies
              << ")\n";
  exit_code = outcome->exit_code;
}

}  // namespace

void AddReportCommand(CLI::App& app, int& exit_code) {
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
  sub->callback([opts, &exit_code] { RunReport(*opts, exit_code); });
}

}  // namespace ppsearch::cli
