#include "memory/served.h"

#include <algorithm>

#include "memory/activation.h"
#include "memory/sglang_reserve.h"

namespace ppsearch::memory {

void EstimateActivationsFor(MemoryInputs& in, const model::ModelDesc& model,
                            const ServedBatches& served) {
  std::vector<sim::BatchShape> shapes = served.prefill;
  const bool eager_decode =
      served.decode > 0 && (!in.decode_graph || served.decode > DecodeGraphMaxBs(in));
  if (eager_decode) shapes.push_back({served.decode, served.decode});
  for (StageFootprint& stage : in.stages) {
    StageActivation largest;
    largest.peak = served.decode > 0 && !eager_decode ? "decode steps in the CUDA graph's pool"
                                                      : "no batch yet";
    for (const sim::BatchShape& s : shapes) {
      ActivationShape shape = stage.activation_shape;
      shape.chunk_tokens = std::min(s.tokens, in.chunked_prefill_size);
      if (shape.chunk_tokens <= 0) continue;
      shape.logit_rows = std::clamp<int64_t>(s.logit_rows, 1, shape.chunk_tokens);
      StageActivation a = EstimateStageActivation(model, shape);
      if (a.bytes > largest.bytes) largest = std::move(a);
    }
    stage.activation = std::move(largest);
  }
}

MemoryPlan PlanServedMemory(MemoryInputs in, const model::ModelDesc& model,
                            const ServedBatches& served) {
  EstimateActivationsFor(in, model, served);
  return PlanMemory(in);
}

std::optional<int> StageOutOfMemory(const MemoryPlan& served, double gpu_total_mib) {
  for (size_t s = 0; s < served.stages.size(); ++s)
    if (served.stages[s].peak_mib > gpu_total_mib) return static_cast<int>(s);
  return std::nullopt;
}

}  // namespace ppsearch::memory
