#pragma once
// What every search command loads first: the spec (with --set overrides),
// the model config it names, the hardware profile, and the layout plan; plus
// the --layout / --concurrency selectors that narrow a search to some points.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/spec_options.h"
#include "hardware/hardware.h"
#include "model/model.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::cli {

struct SearchInputs {
  spec::Spec spec;
  model::ModelDesc model;
  hardware::HardwareProfile hardware;
  plan::Plan plan;
};

struct PointSelection {
  std::vector<std::string> layouts;  // "8/4/4" or "PP8/TP4/EP4"
  std::vector<int> concurrency;
};

void AddPointSelection(CLI::App* sub, PointSelection& selection);

// "PP8/TP4/EP4", "pp8/tp4/ep4" or "8/4/4" -> {8, 4, 4}.
Result<spec::LayoutSpec> ParseLayoutArg(const std::string& text);

// Loads spec, model and hardware, narrows to the selection and plans.
Result<SearchInputs> LoadSearchInputs(const SpecOptions& spec_options,
                                      const PointSelection& selection);

}  // namespace ppsearch::cli
