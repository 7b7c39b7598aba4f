#include "cli/spec_options.h"

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

Result<spec::Spec> LoadSpec(const SpecOptions& opts) {
  return spec::LoadSpec(opts.spec_path, opts.overrides);
}

}  // namespace ppsearch::cli
