#pragma once
// The shipped example search (examples/kimi-k3-pp-search.toml: Kimi K3 on
// 4 x 8 RTX 6000D), loaded once, for the tests and benchmarks that predict it.

#include "ppsearch_source_dir.h"
#include <string>

#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "spec/spec_parser.h"

namespace ppsearch::predict {

struct ExampleInputs {
  spec::Spec spec;
  model::ModelDesc model;
  hardware::HardwareProfile hw;
  plan::Plan plan;
  // The example's layout with this PP size (one per PP size), or nullptr.
  const plan::LayoutPlan* Layout(int pp) const {
    for (const auto& lp : plan.layouts)
      if (lp.layout.pp == pp) return &lp;
    return nullptr;
  }
};

inline const ExampleInputs& Example() {
  static const ExampleInputs in = [] {
    ExampleInputs i;
    i.spec = *spec::LoadSpec(std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml");
    i.model = *model::LoadModel(i.spec.engine.model_config);
    i.hw = *hardware::LoadHardwareProfile(i.spec.cluster.hardware);
    i.plan = plan::PlanSearch(i.spec, i.model, i.hw);
    return i;
  }();
  return in;
}

}  // namespace ppsearch::predict
