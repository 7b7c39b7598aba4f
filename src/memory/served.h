#pragma once
// GPU memory of a server as it has run, not as planned: the pools, graphs
// and runtime are allocated at startup, but the activations are those of the
// largest batches it has run so far. PyTorch's caching allocator keeps the
// blocks of the largest live set and nvidia-smi shows them held, so a server
// that has only run short prompts, or whose prompts end one per chunk, shows
// less than the plan's full chunk. Both simulated engines (`run --engine sim`
// and serve-sim) report this, so a rehearsal's snapshots and a simulated
// run's agree for the same batches.

#include <cstdint>

#include "memory/memory_model.h"
#include "model/model.h"

namespace ppsearch::memory {

// The largest batches a server has run. Tokens and logit rows may come from
// different batches: the allocator keeps each size's blocks, so the two
// maxima bound what it holds.
struct ServedBatches {
  int64_t tokens = 0;      // the most tokens one batch computed
  int64_t logit_rows = 0;  // the most sequences one batch computed logits for
  bool operator==(const ServedBatches&) const = default;
};

// Re-estimates each stage's activations for batches of at most `served`
// (tokens capped at the batch each stage's shape holds, rows at the tokens),
// and keeps that as the stages' shape; no batch: no activations.
void EstimateActivationsFor(MemoryInputs& in, const model::ModelDesc& model,
                            const ServedBatches& served);

// `in` planned with the activations of `served`: what a server shows after
// running such batches. The pools are sized as `in` sizes them.
MemoryPlan PlanServedMemory(MemoryInputs in, const model::ModelDesc& model,
                            const ServedBatches& served);

}  // namespace ppsearch::memory
