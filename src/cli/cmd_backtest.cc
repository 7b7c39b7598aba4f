// ppsearch backtest DIR [--json | --markdown]: calibrate on each case's measured
// configurations, predict every configuration and check the predictions
// against the case's published reference figures (backtest/).

#include <iostream>
#include <memory>

#include "backtest/backtest.h"
#include "backtest/render.h"
#include "cli/command.h"

namespace ppsearch::cli {
namespace {

struct BacktestOptions {
  std::string dir;
  bool json = false;
  bool markdown = false;
};

void RunBacktest(const BacktestOptions& opts, int& exit_code) {
  Result<std::vector<std::string>> paths = backtest::FindCases(opts.dir);
  if (!paths.ok()) return ReportError(paths.error(), exit_code);
  std::vector<backtest::CaseResult> results;
  for (const std::string& path : *paths) {
    Result<backtest::Case> c = backtest::LoadCase(path);
    if (!c.ok()) return ReportError(c.error(), exit_code);
    Result<backtest::CaseResult> r = backtest::RunCase(*c);
    if (!r.ok()) return ReportError(r.error(), exit_code);
    results.push_back(std::move(r).value());
  }
  if (opts.json)
    std::cout << backtest::RenderJson(results).dump(2) << "\n";
  else if (opts.markdown)
    std::cout << backtest::RenderMarkdown(results);
  else
    std::cout << backtest::RenderText(results);
  // Not an error: the report is complete, and the code says a check failed.
  exit_code = backtest::AllPassed(results) ? kExitOk : kExitCheckFailed;
}

}  // namespace

void AddBacktestCommand(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<BacktestOptions>();
  CLI::App* sub = app.add_subcommand(
      "backtest",
      "Check the model against published measurements: calibrate on each case's measured "
      "configurations, predict the others, compare with the reference figures");
  sub->add_option("DIR", opts->dir, "A case folder (with case.toml) or a folder of cases")
      ->required();
  sub->add_flag("--json", opts->json, "Print the results as JSON");
  sub->add_flag("--markdown", opts->markdown, "Print the results as markdown tables");
  sub->callback([opts, &exit_code] { RunBacktest(*opts, exit_code); });
}

}  // namespace ppsearch::cli
