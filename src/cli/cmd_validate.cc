// ppsearch validate SPEC [--set k=v ...]: every check that needs no network:
// parse the spec, load the model config and the hardware profile it names,
// plan every layout of the sweep and read the baseline CSV it imports,
// reporting all errors at once (so a spec that validates is one `plan`,
// `simulate` and `run` accept).

#include <iostream>
#include <memory>
#include <vector>

#include "cli/command.h"
#include "cli/command_inputs.h"
#include "cli/spec_options.h"
#include "inputs/search_inputs.h"
#include "launch/sudo.h"
#include "plan/disaggregation.h"
#include "run/runner.h"
#include "spec/new_run.h"

namespace ppsearch::cli {
namespace {

// What a new run refuses beyond the parser, and the local files `run`
// reads before its first sample: each engine patch (hashed into run.json)
// and the sudo password file of the steps run through sudo.
std::vector<std::string> RunFileErrors(const spec::Spec& spec) {
  // As `run` without --run-id meets them (spec/new_run.h).
  std::vector<std::string> errors = spec::NewRunProblems(spec, true);
  if (Result<std::vector<evidence::RunPatch>> patches = run::PatchRecords(spec); !patches.ok())
    errors.push_back(patches.error().message);
  if (Result<launch::Sudo> sudo = launch::Sudo::FromSpec(spec.cluster.sudo); !sudo.ok())
    errors.push_back(sudo.error().message);
  return errors;
}

// The errors `plan` and `run` would stop on, in the order they would meet them.
std::vector<std::string> PlanningErrors(const spec::Spec& spec) {
  std::vector<std::string> errors;
  for (const Error& e : inputs::InputErrors(spec)) errors.push_back(e.message);
  if (!errors.empty()) return errors;
  Result<inputs::SearchInputs> in = inputs::LoadSearchInputs(spec);
  if (!in.ok()) return {in.error().message};
  for (const plan::LayoutPlan& layout : in->plan.layouts)
    for (const plan::Diagnostic& e : layout.errors) errors.push_back(e.message);
  if (Result<std::vector<analysis::PointSummary>> baseline = ReadImportedCsv(spec); !baseline.ok())
    errors.push_back(baseline.error().message);
  for (const std::string& e : RunFileErrors(spec)) errors.push_back(e);
  return errors;
}

}  // namespace

Runner AddValidateCommand(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "validate",
      "Check a spec's syntax, keys, types and values, its model config and hardware profile, "
      "and every layout of its sweep; print the samples it holds");
  auto opts = std::make_shared<SpecOptions>();
  AddSpecOptions(sub, *opts);
  return [opts]() -> Result<ExitCode> {
    PPS_ASSIGN_OR_RETURN(const spec::Spec spec, LoadSpec(*opts));
    std::vector<std::string> errors;
    if (spec::IsDisaggregated(spec)) {
      for (const Error& e : inputs::InputErrors(spec)) errors.push_back(e.message);
      if (errors.empty()) {
        PPS_ASSIGN_OR_RETURN(std::optional<inputs::DisaggregatedInputs> in,
                             inputs::LoadDisaggregatedInputs(opts->spec_path, opts->overrides));
        for (const plan::Diagnostic& e : in->plan.AllErrors()) errors.push_back(e.message);
        for (const std::string& e : RunFileErrors(spec)) errors.push_back(e);
      }
    } else {
      errors = PlanningErrors(spec);
    }
    if (!errors.empty()) {
      // One error line each, then how many on a line of its own, without the prefix.
      Error all = ErrorLines(errors);
      all.message += "\n" + opts->spec_path + ": " + std::to_string(errors.size()) + " error" +
                     (errors.size() == 1 ? "" : "s");
      return all;
    }
    const spec::SweepSpec& sweep = spec.sweep;
    if (spec::IsDisaggregated(spec)) {
      PPS_ASSIGN_OR_RETURN(std::optional<spec::Disaggregation> deployment,
                           spec::LoadDisaggregation(opts->spec_path, opts->overrides));
      const spec::LayoutSpec& p = deployment->prefill.layout;
      const spec::LayoutSpec& d = deployment->decode.layout;
      std::cout << opts->spec_path << ": ok (disaggregated: prefill " << p.Label() << ", decode "
                << d.Label()
                << "; plan, validate, simulate, run and backtest understand it so far)\n";
      return kExitOk;
    }
    std::cout << opts->spec_path << ": ok (" << sweep.layouts.size() << " layouts x "
              << sweep.concurrency.size() << " concurrency x " << sweep.repeats
              << " repeats = " << sweep.sample_count() << " samples)\n";
    return kExitOk;
  };
}

}  // namespace ppsearch::cli
