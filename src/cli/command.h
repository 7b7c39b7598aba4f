#pragma once
// Subcommands: each file cmd_<name>.cc defines one Add<Name>Command that
// registers its options on a CLI11 sub-app and returns the command's runner.
// main.cc holds the table, calls the runner of the subcommand that was
// parsed, and alone turns its outcome into the process exit code: an Error is
// printed once, as error: <message>, and mapped by its kind (ExitCodeFor); a
// value is the code of an outcome that is not an error (a plan printed with
// invalid layouts, a backtest that missed, an interrupted sweep).

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

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
ExitCode ExitCodeFor(const Error& error);

// Several errors reported at once (every invalid layout of a spec): one Error
// that main prints as one error line per message, in order.
Error ErrorLines(const std::vector<std::string>& messages, ErrorKind kind = ErrorKind::kConfig);

// serve-sim after a node died, or with HTTP workers still holding
// connections: a runner that leaves threads running calls this before it
// returns, and main ends the process with std::_Exit once it has reported
// the outcome, without unwinding what those threads use.
void EndProcessWithoutUnwinding();
bool ProcessEndsWithoutUnwinding();

// What a subcommand does once its options are parsed.
using Runner = std::function<Result<ExitCode>()>;
using AddCommandFn = Runner (*)(CLI::App& app);

Runner AddValidateCommand(CLI::App& app);
Runner AddPlanCommand(CLI::App& app);
Runner AddSearchCommand(CLI::App& app);
Runner AddModelCommand(CLI::App& app);
Runner AddSimulateCommand(CLI::App& app);
Runner AddRunCommand(CLI::App& app);
Runner AddAdaptiveEvalCommand(CLI::App& app);
Runner AddCalibrateCommand(CLI::App& app);
Runner AddBacktestCommand(CLI::App& app);
Runner AddNsysCommand(CLI::App& app);
Runner AddReportCommand(CLI::App& app);
Runner AddCompareCommand(CLI::App& app);
Runner AddServeSimCommand(CLI::App& app);
Runner AddBenchCommand(CLI::App& app);
Runner AddProbeCommand(CLI::App& app);
Runner AddSmiSimCommand(CLI::App& app);
Runner AddRouterSimCommand(CLI::App& app);
Runner AddRedactLogCommand(CLI::App& app);

}  // namespace ppsearch::cli
