// ppsearch validate SPEC [--set k=v ...]: parse the spec and count what it
// would run, without planning (ppsearch plan checks layouts against the model
// and cluster).

#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/spec_options.h"

namespace ppsearch::cli {

void AddValidateCommand(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "validate", "Check a spec's syntax, keys, types and values; print the samples it holds");
  auto opts = std::make_shared<SpecOptions>();
  AddSpecOptions(sub, *opts);
  sub->callback([opts, &exit_code] {
    std::optional<spec::Spec> spec = LoadSpecOrReport(*opts, exit_code);
    if (!spec) return;
    const spec::SweepSpec& sweep = spec->sweep;
    std::cout << opts->spec_path << ": ok (" << sweep.layouts.size() << " layouts x "
              << sweep.concurrency.size() << " concurrency x " << sweep.repeats
              << " repeats = " << sweep.sample_count() << " samples)\n";
  });
}

}  // namespace ppsearch::cli
