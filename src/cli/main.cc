// ppsearch: find the best PP/TP/EP layout for an MoE model on a GPU cluster.

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "ppsearch_version.h"

namespace {

struct CommandEntry {
  const char* name;
  ppsearch::cli::AddCommandFn add;
};

// Subtools in one table, in the order `--help` lists them.
constexpr CommandEntry kCommands[] = {
    {"validate", ppsearch::cli::AddValidateCommand},
    {"plan", ppsearch::cli::AddPlanCommand},
    {"model", ppsearch::cli::AddModelCommand},
    {"simulate", ppsearch::cli::AddSimulateCommand},
    {"run", ppsearch::cli::AddRunCommand},
    {"calibrate", ppsearch::cli::AddCalibrateCommand},
    {"report", ppsearch::cli::AddReportCommand},
    {"serve-sim", ppsearch::cli::AddServeSimCommand},
    {"bench", ppsearch::cli::AddBenchCommand},
    {"smi-sim", ppsearch::cli::AddSmiSimCommand},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ppsearch: find the best pipeline/tensor/expert parallel layout for serving an "
      "MoE model with SGLang, by measurement or by calibrated simulation"};
  app.set_version_flag("--version",
                       std::string("ppsearch ") + PPSEARCH_VERSION + " (" + PPSEARCH_GIT_SHA + ")");
  app.require_subcommand(1);
  int exit_code = ppsearch::cli::kExitOk;
  for (const auto& command : kCommands) command.add(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : ppsearch::cli::kExitConfigError;
  }
  return exit_code;
}
