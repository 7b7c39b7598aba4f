#pragma once
// Predicted GPU memory per rank, sized the way SGLang sizes it
// (server_args.py _handle_gpu_memory_settings, kv_cache_configurator.py):
// a static fraction of the memory free after NCCL init holds the weights and
// the KV/state pools; the rest is left for activations and CUDA graphs.

#include <cstdint>
#include <optional>
#include <vector>

namespace ppsearch::memory {

// What one pipeline stage's ranks hold (from the planner).
struct StageFootprint {
  double weight_mib = 0;               // per rank
  double kv_bytes_per_token = 0;       // per rank, this stage's layers
  double state_bytes_per_request = 0;  // per rank, linear-attention state of this stage's layers
};

struct MemoryInputs {
  double gpu_total_mib = 0;
  int tp = 1;
  int pp = 1;
  int64_t chunked_prefill_size = 8192;
  int64_t context_len = 0;                    // model max context (or --context-length)
  std::optional<double> mem_fraction_static;  // user's value; else SGLang's rule
  std::optional<int> max_running_requests;    // user's value; else derived
  int cuda_graph_max_bs = 0;                  // 0: SGLang's default for the GPU class
  std::vector<StageFootprint> stages;
};

struct StageMemory {
  double weight_mib = 0;
  double kv_pool_mib = 0;
  double state_pool_mib = 0;
  double runtime_mib = 0;     // CUDA context, NCCL buffers
  double activation_mib = 0;  // chunk activations and workspace at their peak
  double graph_mib = 0;
  double peak_mib = 0;
  double headroom_mib = 0;  // gpu total - peak
};

struct MemoryPlan {
  double mem_fraction_static = 0;
  double pre_load_free_mib = 0;
  int64_t max_total_tokens = 0;  // KV pool capacity, MIN over stages
  int max_running_requests = 0;  // resolved (feeds pp_max_micro_batch_size)
  int state_slots = 0;
  std::vector<StageMemory> stages;
  double peak_mib_max = 0;
  double peak_spread_mib = 0;  // max - min peak over stages
  bool fits = true;            // weights leave room for a KV pool of at least one token
};

// CUDA context plus NCCL communicator buffers per rank before weights load:
// an estimate (about 1.5 GiB is typical for a multi-node NCCL job).
constexpr double kRuntimeMib = 1500;

// SGLang's default mem_fraction_static for the GPU and layout.
double DefaultMemFractionStatic(const MemoryInputs& in);

MemoryPlan PlanMemory(const MemoryInputs& in);

}  // namespace ppsearch::memory
