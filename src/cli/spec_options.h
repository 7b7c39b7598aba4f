#pragma once
// The spec argument and --set overrides that every spec-reading command
// (validate, plan, simulate, run) takes, registered the same way everywhere.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::cli {

struct SpecOptions {
  std::string spec_path;
  std::vector<std::string> overrides;  // "key.path=value", in command-line order
};

// Adds the positional SPEC and the repeatable `--set key.path=value`.
// `spec_required` false: SPEC may be left out (run --resume takes the recorded one).
void AddSpecOptions(CLI::App* sub, SpecOptions& opts, bool spec_required = true);

// Loads the spec with its overrides.
Result<spec::Spec> LoadSpec(const SpecOptions& opts);

}  // namespace ppsearch::cli
