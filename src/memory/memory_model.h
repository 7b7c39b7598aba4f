#pragma once
// Predicted GPU memory per rank, sized the way SGLang sizes it
// (server_args.py _handle_gpu_memory_settings, kv_cache_configurator.py):
// a static fraction of the memory free after NCCL init holds the weights and
// the KV/state pools; the rest is left for activations and CUDA graphs. The
// activations are this model's, per stage (memory/activation.h), not SGLang's
// flat allowance, so a stage's peak and headroom follow its layers.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "memory/activation.h"
#include "memory/state_pool.h"

namespace ppsearch::memory {

// CUDA context plus NCCL communicator buffers per rank before weights load:
// an estimate (about 1.5 GiB is typical for a multi-node NCCL job).
constexpr double kRuntimeMib = 1500;

// What one pipeline stage's ranks hold (from the planner).
struct StageFootprint {
  double weight_mib = 0;               // per rank
  double kv_bytes_per_token = 0;       // per rank, this stage's layers
  double state_bytes_per_request = 0;  // per rank, linear-attention state of this stage's layers
  // Of weight_mib: the embedding (stage 0) and the LM head with the final
  // norm (the stages that build it), to say why a stage is the tightest.
  double embedding_mib = 0;
  double lm_head_mib = 0;
  int num_layers = 0;
  StageActivation activation;  // per rank, one prefill chunk at its peak
  // The chunk `activation` was estimated for (memory/served.h re-estimates
  // it for the batches a server has run).
  ActivationShape activation_shape;
};

struct MemoryInputs {
  double gpu_total_mib = 0;
  int tp = 1;
  int pp = 1;
  int64_t chunked_prefill_size = 8192;
  int64_t context_len = 0;                    // model max context (or --context-length)
  std::optional<double> mem_fraction_static;  // user's value; else SGLang's rule
  std::optional<int> max_running_requests;    // user's value; else derived
  // --max-total-tokens: an upper bound on the KV pool's tokens; SGLang
  // allocates the smaller of it and what the memory leaves
  // (model_runner_kv_cache_mixin.py, init_memory / _resolve_token_capacity).
  std::optional<int64_t> max_total_tokens;
  int cuda_graph_max_bs = 0;  // decode graph; 0: SGLang's default for the GPU
  // What SGLang's reserve depends on (memory/sglang_reserve.h). The planner
  // resolves the graphs from the SGLang flags: the decode graph is on unless
  // disabled; the prefill graph is on by default only at pp 1.
  bool mla = false;  // MLA attention (its prefill graph reserve is 1.5 GiB)
  bool decode_graph = true;
  bool prefill_graph = false;
  int64_t prefill_graph_max_bs = 0;  // 0: SGLang's default
  bool deepep = false;               // --moe-a2a-backend deepep
  bool dp_attention = false;         // --enable-dp-attention
  int dp_size = 1;
  double workspace_mib = 0;  // see kDefaultWorkspaceMib; plan::StageMemoryInputs sets it
  // CUDA context and NCCL buffers before the weights load; kRuntimeMib
  // unless an interval (memory/memory_interval.h) moves it.
  double runtime_mib = kRuntimeMib;
  std::vector<StageFootprint> stages;
  // How SGLang sizes the linear-attention state pool (memory/state_pool.h);
  // read only when a stage keeps state.
  StatePoolSettings state_pool;
  // Request-table rows beyond the running requests and the padding row: a
  // PD decode server's pre-allocation slots (disaggregation/decode.py
  // DecodeReqToTokenPool, size + pre_alloc_size + 1).
  int request_table_extra_rows = 0;
  // A PD decode server (--disaggregation-mode decode): its state pool holds
  // at least (running + pre-allocated) x state_pool.decode_slots_per_request
  // slots, raised past what the budget sized where that is fewer.
  bool pd_decode = false;
};

struct StageMemory {
  double weight_mib = 0;
  double kv_pool_mib = 0;
  double state_pool_mib = 0;
  double runtime_mib = 0;       // CUDA context, NCCL buffers
  double activation_mib = 0;    // chunk activations and workspace at their peak
  std::string activation_peak;  // what sets it (StageActivation::peak)
  double graph_mib = 0;
  double workspace_mib = 0;  // runtime memory beyond the computed terms (calibrated)
  double peak_mib = 0;
  double headroom_mib = 0;  // gpu total - peak
  // req_to_token_pool: one int32 row of the context length (+4) per running
  // request and a padding row (mem_cache/memory_pool.py ReqToTokenPool),
  // allocated outside mem_fraction_static on every rank.
  double request_table_mib = 0;
};

struct MemoryPlan {
  double mem_fraction_static = 0;
  double pre_load_free_mib = 0;
  int64_t max_total_tokens = 0;  // KV pool capacity, MIN over stages
  int max_running_requests = 0;  // resolved (feeds pp_max_micro_batch_size)
  int state_slots = 0;           // max_mamba_cache_size (a stage allocates one more, for padding)
  std::vector<StageMemory> stages;
  double peak_mib_max = 0;
  double peak_spread_mib = 0;  // max - min peak over stages
  // The weights leave a KV pool of at least one token under
  // mem_fraction_static, and on every stage the weights, activations, CUDA
  // graphs and runtime leave the GPU room for one. When false, `refusal`
  // says why in SGLang's words.
  bool fits = true;
  std::string refusal;
  bool sglang_refuses = false;  // SGLang itself refuses to start (else it would run out of memory)
  // The stage with the least headroom (with no pool: the least room for
  // one), and what makes it so ("LM head weights", "KDA state", ...).
  int tightest_stage = 0;
  std::string tightest_reason;
  int state_slots_per_request = 0;  // _calculate_mamba_ratio; 0 without state
  // Whether the refusal is the linear-attention state pool's, not the KV
  // pool's: its flags (a strategy SGLang asserts against), or its size (no
  // slot, or too few for one request).
  enum class StateRefusal { kNone, kSetting, kSize };
  StateRefusal state_refusal = StateRefusal::kNone;
};

// Memory in use beyond the static pools and the computed chunk activations:
// the caching allocator's held blocks and fragmentation, NCCL channel
// buffers per communicator, graph pools beyond their estimate. No formula
// gives it; this is the prior's centre of the calibration parameter
// runtime_workspace_mib, which a measured peak determines.
constexpr double kDefaultWorkspaceMib = 4000;

// What SGLang keeps out of mem_fraction_static by default, MiB: its own
// activation, NCCL, CUDA-graph and DeepEP allowance (not this model's
// activations); the terms are in memory/sglang_reserve.h.
double DefaultReservedMib(const MemoryInputs& in);

// SGLang's default mem_fraction_static for the GPU and layout.
double DefaultMemFractionStatic(const MemoryInputs& in);

MemoryPlan PlanMemory(const MemoryInputs& in);

// Machine-readable forms; key names are a contract (plan --json, serve-sim's
// /server_info). A stage: weight_mib, kv_pool_mib, state_pool_mib,
// runtime_mib, activation_mib, activation_peak, graph_mib, workspace_mib,
// request_table_mib, peak_mib, headroom_mib.
nlohmann::json StageMemoryToJson(const StageMemory& stage);
nlohmann::json MemoryPlanToJson(const MemoryPlan& plan);

// SGLang's refusal when the heaviest rank's weights leave mem_fraction_static
// no KV pool (v0.5.18 mem_cache/kv_cache_configurator.py, a ValueError at
// startup), with the smallest fraction that would leave one.
std::string NoKvRoomMessage(double mem_fraction_static, double pre_load_free_mib,
                            double weight_mib);

}  // namespace ppsearch::memory
