#pragma once
// Subcommands: each file cmd_<name>.cc defines one Add<Name>Command that
// registers its options on a CLI11 sub-app and sets the exit code when run.
// main.cc holds the table; only main decides the process exit code.

#include <CLI/CLI.hpp>

#include "util/result.h"

namespace ppsearch::cli {

// Documented in README.md ("Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,        // I/O or internal failure
  kExitConfigError = 2,    // bad spec, model config, hardware profile or arguments
  kExitIncomplete = 3,     // sweep incomplete (samples missing or interrupted)
  kExitNoneQualifies = 4,  // no layout meets the decision policy
  kExitCheckFailed = 5,    // a check against reference figures failed (backtest)
};

// The exit code of an error, by its kind: the one mapping of kinds to codes.
int ExitCodeFor(const Error& error);
// Prints "error: <message>" to stderr and sets `exit_code` from its kind.
void ReportError(const Error& error, int& exit_code);

using AddCommandFn = void (*)(CLI::App& app, int& exit_code);

void AddValidateCommand(CLI::App& app, int& exit_code);
void AddPlanCommand(CLI::App& app, int& exit_code);
void AddModelCommand(CLI::App& app, int& exit_code);
void AddSimulateCommand(CLI::App& app, int& exit_code);
void AddRunCommand(CLI::App& app, int& exit_code);
void AddCalibrateCommand(CLI::App& app, int& exit_code);
void AddBacktestCommand(CLI::App& app, int& exit_code);
void AddNsysCommand(CLI::App& app, int& exit_code);
void AddReportCommand(CLI::App& app, int& exit_code);
void AddCompareCommand(CLI::App& app, int& exit_code);
void AddServeSimCommand(CLI::App& app, int& exit_code);
void AddBenchCommand(CLI::App& app, int& exit_code);
void AddSmiSimCommand(CLI::App& app, int& exit_code);

}  // namespace ppsearch::cli
