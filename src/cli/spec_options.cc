#include "cli/spec_options.h"

#include <iostream>

#include "cli/command.h"
#include "spec/spec_parser.h"

namespace ppsearch::cli {

void AddSpecOptions(CLI::App* sub, SpecOptions& opts, bool spec_required) {
  sub->add_option("spec", opts.spec_path,
                  "Experiment spec (TOML), e.g. examples/kimi-k3-pp-search.toml")
      ->required(spec_required);
  // One value per --set: a vector option would otherwise also swallow the
  // positional SPEC that follows it.
  sub->add_option("--set", opts.overrides,
                  "Override a spec value, e.g. --set workload.requests=80 --set sweep.pp=[2,4]; "
                  "the value is read as TOML (a bare word is a string); repeatable")
      ->type_name("KEY=VALUE")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::optional<spec::Spec> LoadSpecOrReport(const SpecOptions& opts, int& exit_code) {
  Result<spec::Spec> loaded = spec::LoadSpec(opts.spec_path, opts.overrides);
  if (!loaded.ok()) {
    std::cerr << "error: " << loaded.error().message << "\n";
    exit_code = kExitConfigError;
    return std::nullopt;
  }
  return std::move(loaded).value();
}

}  // namespace ppsearch::cli
