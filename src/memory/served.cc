#include "memory/served.h"

#include <algorithm>

#include "memory/activation.h"

namespace ppsearch::memory {

void EstimateActivationsFor(MemoryInputs& in, const model::ModelDesc& model,
                            const ServedBatches& served) {
  for (StageFootprint& stage : in.stages) {
    ActivationShape& shape = stage.activation_shape;
    shape.chunk_tokens = std::clamp<int64_t>(served.tokens, 0, shape.chunk_tokens);
    shape.logit_rows =
        std::clamp<int64_t>(served.logit_rows, 1, std::max<int64_t>(shape.chunk_tokens, 1));
    if (shape.chunk_tokens == 0) {
      stage.activation = StageActivation{};
      stage.activation.peak = "no batch yet";
      continue;
    }
    stage.activation = EstimateStageActivation(model, shape);
  }
}

MemoryPlan PlanServedMemory(MemoryInputs in, const model::ModelDesc& model,
                            const ServedBatches& served) {
  EstimateActivationsFor(in, model, served);
  return PlanMemory(in);
}

}  // namespace ppsearch::memory
