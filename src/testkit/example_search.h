#pragma once
// The shipped example search (examples/kimi-k3-pp-search.toml: Kimi K3 on
// 4 x 8 RTX 6000D), loaded once through inputs::LoadSearchInputs, for the
// tests and benchmarks that predict it.

#include <string>

#include "inputs/search_inputs.h"
#include "ppsearch_source_dir.h"

namespace ppsearch::testkit {

struct ExampleInputs : inputs::SearchInputs {
  // The example's layout with this PP size (one per PP size), or nullptr.
  const plan::LayoutPlan* Layout(int pp) const {
    for (const auto& lp : plan.layouts)
      if (lp.layout.pp == pp) return &lp;
    return nullptr;
  }
};

inline const ExampleInputs& Example() {
  static const ExampleInputs in{*inputs::LoadSpecFileInputs(std::string(PPSEARCH_SOURCE_DIR) +
                                                            "/examples/kimi-k3-pp-search.toml")};
  return in;
}

}  // namespace ppsearch::testkit
