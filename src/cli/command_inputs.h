#pragma once
// What every search command loads first: the spec (with --set overrides),
// the model config it names, the hardware profile, and the layout plan; plus
// the --layout / --concurrency selectors that narrow a search to some points.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "analysis/points.h"
#include "cli/spec_options.h"
#include "inputs/search_inputs.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::cli {

using inputs::SearchInputs;

struct PointSelection {
  std::vector<std::string> layouts;  // "8/4/4" or "PP8/TP4/EP4"
  std::vector<int> concurrency;
};

void AddPointSelection(CLI::App* sub, PointSelection& selection);

// The rows of the CSV of medians the spec imports as its baseline
// (baseline.import_csv; none without one). A file that cannot be read or
// parsed is an error at the spec's key: `validate` and a new `run` refuse it
// before anything is written.
Result<std::vector<analysis::PointSummary>> ReadImportedCsv(const spec::Spec& spec);

// inputs::LoadSearchInputs with the selection's layouts parsed.
Result<SearchInputs> LoadSearchInputs(const SpecOptions& spec_options,
                                      const PointSelection& selection);

}  // namespace ppsearch::cli
