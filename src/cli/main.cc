// ppsearch: find the best PP/TP/EP layout for an MoE model on a GPU cluster.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <iterator>
#include <string>

#include "cli/command.h"
#include "ppsearch_version.h"
#include "util/did_you_mean.h"

namespace {

struct CommandEntry {
  const char* name;
  ppsearch::cli::AddCommandFn add;
  bool listed;  // false: started by ppsearch itself, not named to users
};

// Subtools in one table, in the order `--help` lists them.
constexpr CommandEntry kCommands[] = {
    {"validate", ppsearch::cli::AddValidateCommand, true},
    {"plan", ppsearch::cli::AddPlanCommand, true},
    {"model", ppsearch::cli::AddModelCommand, true},
    {"simulate", ppsearch::cli::AddSimulateCommand, true},
    {"search", ppsearch::cli::AddSearchCommand, true},
    {"run", ppsearch::cli::AddRunCommand, true},
    {"adaptive-eval", ppsearch::cli::AddAdaptiveEvalCommand, true},
    {"calibrate", ppsearch::cli::AddCalibrateCommand, true},
    {"backtest", ppsearch::cli::AddBacktestCommand, true},
    {"probe", ppsearch::cli::AddProbeCommand, true},
    {"nsys", ppsearch::cli::AddNsysCommand, true},
    {"report", ppsearch::cli::AddReportCommand, true},
    {"compare", ppsearch::cli::AddCompareCommand, true},
    {"serve-sim", ppsearch::cli::AddServeSimCommand, true},
    {"bench", ppsearch::cli::AddBenchCommand, true},
    {"smi-sim", ppsearch::cli::AddSmiSimCommand, true},
    {"router-sim", ppsearch::cli::AddRouterSimCommand, true},
    {"redact-log", ppsearch::cli::AddRedactLogCommand, false},
};

// "error: unknown command 'valdate' (did you mean 'validate'?)" for a first
// argument that names no subcommand; "" when it names one (or is an option).
std::string UnknownCommandMessage(const std::string& word) {
  if (word.empty() || word[0] == '-') return "";
  std::string names;
  std::vector<std::string> listed;
  for (const auto& command : kCommands) {
    if (word == command.name) return "";
    if (!command.listed) continue;
    names += (names.empty() ? "" : ", ") + std::string(command.name);
    listed.emplace_back(command.name);
  }
  return "error: unknown command '" + word + "'" + ppsearch::DidYouMean(word, listed) +
         "; commands: " + names + " (ppsearch --help)";
}

// The one place a command's outcome becomes the exit code: an error is
// printed once, its kind decides the code.
int Finish(const ppsearch::Result<ppsearch::cli::ExitCode>& outcome) {
  if (outcome.ok()) return *outcome;
  std::cerr << "error: " << outcome.error().message << "\n";
  return ppsearch::cli::ExitCodeFor(outcome.error());
}

int Main(int argc, char** argv) {
  CLI::App app{
      "ppsearch: find the best pipeline/tensor/expert parallel layout for serving an "
      "MoE model with SGLang, by measurement or by calibrated simulation"};
  app.set_version_flag("--version",
                       std::string("ppsearch ") + PPSEARCH_VERSION + " (" + PPSEARCH_GIT_SHA + ")");
  app.require_subcommand(1);
  ppsearch::cli::Runner runners[std::size(kCommands)];
  for (size_t i = 0; i < std::size(kCommands); ++i) runners[i] = kCommands[i].add(app);
  if (argc > 1) {
    const std::string unknown = UnknownCommandMessage(argv[1]);
    if (!unknown.empty()) {
      std::cerr << unknown << "\n";
      return ppsearch::cli::kExitConfigError;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : ppsearch::cli::kExitConfigError;
  }
  for (size_t i = 0; i < std::size(kCommands); ++i) {
    if (!app.got_subcommand(kCommands[i].name)) continue;
    const int code = Finish(runners[i]());
    if (ppsearch::cli::ProcessEndsWithoutUnwinding()) {
      std::fflush(nullptr);
      std::_Exit(code);
    }
    return code;
  }
  return ppsearch::cli::kExitOk;  // unreachable: parse requires one subcommand
}

}  // namespace

int main(int argc, char** argv) {
  // Expected failures are returned values; an exception reaching here is a
  // bug, reported instead of an abort.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "internal error: unknown exception\n";
  }
  return ppsearch::cli::kExitFailure;
}
