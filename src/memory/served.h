#pragma once
// GPU memory of a server as it has run, not as planned: the pools, graphs
// and runtime are allocated at startup, but the activations are those of
// the batches it has run so far. nvidia-smi shows what PyTorch's caching
// allocator holds, and it holds the blocks of the largest live set a batch
// needed; a batch whose own live set does not fit is what runs out of
// memory (the allocator frees its cache and retries before it fails). So a
// server that has only run short prompts, or prompts that end one per
// chunk, shows less than the plan's full chunk. Both simulated engines
// (`run --engine sim` and serve-sim) report this, so a rehearsal's
// snapshots and a simulated run's agree for the same batches.

#include <cstdint>
#include <optional>
#include <vector>

#include "memory/memory_model.h"
#include "model/model.h"
#include "sim/batch.h"

namespace ppsearch::memory {

// The batches a server has run: its prefill batches as the front of their
// shapes (sim::AddToFront), and its largest decode step.
struct ServedBatches {
  std::vector<sim::BatchShape> prefill;
  int64_t decode = 0;  // sequences in one decode step (one DP rank's)
  bool operator==(const ServedBatches&) const = default;
};

// Re-estimates each stage's activations as the largest of those of the
// batches in `served`, each capped at the batch `in` plans for
// (chunked_prefill_size). A decode step the decode CUDA graph holds runs
// in the graph's own memory pool, which the reserve already counts
// (graph_mib); a larger one, or any without the graph, runs eagerly and
// counts as a batch of that many tokens and rows. No batch: no activations.
void EstimateActivationsFor(MemoryInputs& in, const model::ModelDesc& model,
                            const ServedBatches& served);

// `in` planned with the activations of `served`: what a server shows after
// running those batches. The pools are sized as `in` sizes them.
MemoryPlan PlanServedMemory(MemoryInputs in, const model::ModelDesc& model,
                            const ServedBatches& served);

// The first stage whose peak in `served` (PlanServedMemory's) passes the
// GPU: SGLang's allocator fails there with torch.OutOfMemoryError and the
// server dies. nullopt when every stage fits.
std::optional<int> StageOutOfMemory(const MemoryPlan& served, double gpu_total_mib);

}  // namespace ppsearch::memory
