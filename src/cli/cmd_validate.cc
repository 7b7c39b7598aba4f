// ppsearch validate SPEC [--set k=v ...]: every check that needs no network:
// parse the spec, load the model config and the hardware profile it names,
// and plan every layout of the sweep, reporting all errors at once (so a spec
// that validates is one `plan`, `simulate` and `run` accept).

#include <iostream>
#include <memory>
#include <vector>

#include "cli/command.h"
#include "cli/spec_options.h"
#include "plan/search_inputs.h"

namespace ppsearch::cli {
namespace {

// The errors `plan` and `run` would stop on, in the order they would meet them.
std::vector<std::string> PlanningErrors(const spec::Spec& spec) {
  std::vector<std::string> errors;
  for (const Error& e : plan::InputErrors(spec)) errors.push_back(e.message);
  if (!errors.empty()) return errors;
  Result<plan::SearchInputs> in = plan::LoadSearchInputs(spec);
  if (!in.ok()) return {in.error().message};
  for (const plan::LayoutPlan& layout : in->plan.layouts)
    for (const plan::Diagnostic& e : layout.errors) errors.push_back(e.message);
  return errors;
}

}  // namespace

void AddValidateCommand(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "validate",
      "Check a spec's syntax, keys, types and values, its model config and hardware profile, "
      "and every layout of its sweep; print the samples it holds");
  auto opts = std::make_shared<SpecOptions>();
  AddSpecOptions(sub, *opts);
  sub->callback([opts, &exit_code] {
    std::optional<spec::Spec> spec = LoadSpecOrReport(*opts, exit_code);
    if (!spec) return;
    const std::vector<std::string> errors = PlanningErrors(*spec);
    for (const std::string& e : errors) std::cerr << "error: " << e << "\n";
    if (!errors.empty()) {
      std::cerr << opts->spec_path << ": " << errors.size() << " error"
                << (errors.size() == 1 ? "" : "s") << "\n";
      exit_code = kExitConfigError;
      return;
    }
    const spec::SweepSpec& sweep = spec->sweep;
    std::cout << opts->spec_path << ": ok (" << sweep.layouts.size() << " layouts x "
              << sweep.concurrency.size() << " concurrency x " << sweep.repeats
              << " repeats = " << sweep.sample_count() << " samples)\n";
  });
}

}  // namespace ppsearch::cli
