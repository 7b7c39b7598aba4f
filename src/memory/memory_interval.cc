#include "memory/memory_interval.h"

#include <algorithm>

namespace ppsearch::memory {

MemoryTermRange DefaultMemoryTermRange() {
  MemoryTermRange r;
  // Memory in use before the weights load, seen in public SGLang logs: TP8 on
  // H200, "Init torch distributed ends. mem usage=1.77-2.01 GB" and "Load
  // weight begin. avail mem=137.29 GB" of the 140.4 GiB device, 3.1 GiB in
  // all (https://github.com/sgl-project/sglang/pull/11716). The low end is
  // the model's own estimate; the high end that log's 3.1 GiB.
  r.runtime_low_mib = kRuntimeMib;
  r.runtime_high_mib = 3.1 * 1024;
  // The chunk activations are computed from the model's shapes but never
  // measured per stage: an estimate of +-25%.
  r.activation_low_scale = 0.75;
  r.activation_high_scale = 1.25;
  // The largest |error| of the KV pool tokens on the memory backtest
  // (validation/memory-sglang-logs, the table in validation/README.md):
  // QwQ-32B on 4 x L4, -8.03%, rounded up. tests/backtest_e2e_test.cc fails
  // when a shipped log misses by more.
  r.kv_model_form_share = 0.081;
  return r;
}

std::vector<StagePeakInterval> StagePeakIntervals(const MemoryInputs& in,
                                                  const MemoryTermRange& range) {
  const MemoryPlan central = PlanMemory(in);
  std::vector<StagePeakInterval> out(central.stages.size());
  for (size_t s = 0; s < out.size(); ++s)
    out[s].terms_low_mib = out[s].terms_high_mib = central.stages[s].peak_mib;
  // The state-pool rules the stages may be sized by: the planned one, and
  // with the version unknown on a pipeline that keeps state, the other.
  std::vector<StatePoolSettings> rules = {in.state_pool};
  const bool keeps_state =
      std::any_of(in.stages.begin(), in.stages.end(),
                  [](const StageFootprint& f) { return f.state_bytes_per_request > 0; });
  if (!in.state_pool.version_known && in.stages.size() > 1 && keeps_state) {
    rules.push_back(in.state_pool);
    rules.back().whole_model_per_stage = !in.state_pool.whole_model_per_stage;
  }
  for (const StatePoolSettings& rule : rules) {
    for (double runtime : {range.runtime_low_mib, range.runtime_high_mib}) {
      for (double scale : {range.activation_low_scale, range.activation_high_scale}) {
        MemoryInputs corner = in;
        corner.state_pool = rule;
        corner.runtime_mib = runtime;
        for (StageFootprint& f : corner.stages) f.activation.bytes *= scale;
        const MemoryPlan plan = PlanMemory(corner);
        for (size_t s = 0; s < out.size() && s < plan.stages.size(); ++s) {
          out[s].terms_low_mib = std::min(out[s].terms_low_mib, plan.stages[s].peak_mib);
          out[s].terms_high_mib = std::max(out[s].terms_high_mib, plan.stages[s].peak_mib);
        }
      }
    }
  }
  for (size_t s = 0; s < out.size(); ++s) {
    out[s].model_form_mib = range.kv_model_form_share * central.stages[s].kv_pool_mib;
    out[s].low_mib = out[s].terms_low_mib - out[s].model_form_mib;
    out[s].high_mib = out[s].terms_high_mib + out[s].model_form_mib;
  }
  return out;
}

}  // namespace ppsearch::memory
