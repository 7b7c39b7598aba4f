// ppsearch backtest [DIR] [--json | --markdown]: calibrate on each case's
// measured configurations, predict every configuration and check the
// predictions against the case's published reference figures (backtest/).
// Without DIR, the shipped cases: validation/ beside the data directory.

#include <filesystem>
#include <iostream>
#include <memory>

#include "backtest/backtest.h"
#include "backtest/backtest_render.h"
#include "backtest/coverage.h"
#include "cli/command.h"
#include "uncertainty/model_error_file.h"
#include "util/files.h"

namespace ppsearch::cli {
namespace {

struct BacktestOptions {
  std::string dir;
  bool json = false;
  bool markdown = false;
  std::string fit_model_error;  // write the model-form fit here
};

Result<ExitCode> RunBacktest(const BacktestOptions& opts) {
  const std::string dir = opts.dir.empty()
                              ? (std::filesystem::path(DataDir()).parent_path() / "validation")
                                    .lexically_normal()
                                    .string()
                              : opts.dir;
  PPS_ASSIGN_OR_RETURN(const std::vector<std::string> paths, backtest::FindCases(dir));
  std::vector<backtest::CaseResult> results;
  for (const std::string& path : paths) {
    PPS_ASSIGN_OR_RETURN(const backtest::Case c, backtest::LoadCase(path));
    PPS_ASSIGN_OR_RETURN(backtest::CaseResult r, backtest::RunCase(c));
    results.push_back(std::move(r));
  }
  const backtest::Coverage coverage = backtest::LeaveOneCaseOut(results);
  if (!opts.fit_model_error.empty()) {
    const uncertainty::ModelFormFit fit = backtest::FitAll(results);
    PPS_RETURN_IF_ERROR(uncertainty::SaveModelForm(
        fit, opts.fit_model_error,
        "ppsearch backtest " + (opts.dir.empty() ? std::string("validation") : opts.dir) +
            " --fit-model-error " + opts.fit_model_error));
    std::cerr << "model-form scales fitted to " << fit.misses << " misses written to "
              << opts.fit_model_error << "\n";
  }
  if (opts.json)
    std::cout << backtest::RenderJson(results, coverage).dump(2) << "\n";
  else if (opts.markdown)
    std::cout << backtest::RenderMarkdown(results, coverage);
  else
    std::cout << backtest::RenderText(results, coverage);
  // Not an error: the report is complete, and the code says a check failed.
  return backtest::AllPassed(results) ? kExitOk : kExitCheckFailed;
}

}  // namespace

Runner AddBacktestCommand(CLI::App& app) {
  auto opts = std::make_shared<BacktestOptions>();
  CLI::App* sub = app.add_subcommand(
      "backtest",
      "Check the model against published measurements: calibrate on each case's measured "
      "configurations, predict the others, compare with the reference figures");
  sub->add_option("DIR", opts->dir,
                  "A case folder (with case.toml) or a folder of cases (default: the shipped "
                  "cases, validation/)");
  sub->add_flag("--json", opts->json, "Print the results as JSON");
  sub->add_flag("--markdown", opts->markdown, "Print the results as markdown tables");
  sub->add_option("--fit-model-error", opts->fit_model_error,
                  "Fit the model-form (discrepancy) scales to every case's misses and write "
                  "them to FILE (data/model_error.json is made this way)");
  return [opts] { return RunBacktest(*opts); };
}

}  // namespace ppsearch::cli
