#include "memory/memory_model.h"

#include <algorithm>
#include <cmath>

namespace ppsearch::memory {
namespace {

constexpr double kMib = 1024.0 * 1024.0;
// Share of the post-weight budget given to linear-attention state slots before
// KV tokens (SGLang's hybrid pools split the budget between the two; the
// exact split varies by version, so this is an estimate).
constexpr double kStateBudgetShare = 0.5;

int DecodeGraphMaxBs(const MemoryInputs& in) {
  if (in.cuda_graph_max_bs > 0) return in.cuda_graph_max_bs;
  // server_args.py: < 160 GB GPUs capture up to 256 (tp < 4) or 512.
  return in.tp < 4 ? 256 : 512;
}

}  // namespace

double DefaultMemFractionStatic(const MemoryInputs& in) {
  // _handle_gpu_memory_settings (v0.5.18), in MB of the device capacity:
  // 512 + activation_tokens * 1.5 + tp * pp / 8 * 1024 + graph reserve,
  // at least 10 GiB on GPUs above 60 GiB.
  const double activation_tokens = std::max<double>(in.chunked_prefill_size, 2048);
  double reserved =
      512 + activation_tokens * 1.5 + in.tp * in.pp / 8.0 * 1024 + DecodeGraphMaxBs(in) * 2.0;
  if (in.gpu_total_mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  return std::round((in.gpu_total_mib - reserved) / in.gpu_total_mib * 1000) / 1000;
}

MemoryPlan PlanMemory(const MemoryInputs& in) {
  MemoryPlan plan;
  plan.mem_fraction_static = in.mem_fraction_static.value_or(DefaultMemFractionStatic(in));
  // Free memory after NCCL init, MIN-reduced over the world.
  plan.pre_load_free_mib = in.gpu_total_mib - kRuntimeMib;
  const double slack_mib = plan.pre_load_free_mib * (1 - plan.mem_fraction_static);

  // The byte budget is set by the heaviest rank (MIN of free memory over all
  // ranks), then each stage divides it by its own per-token size and the token
  // count is MIN-reduced over stages.
  double max_weight = 0;
  for (const auto& s : in.stages) max_weight = std::max(max_weight, s.weight_mib);
  const double budget_mib = plan.pre_load_free_mib - max_weight - slack_mib;
  plan.fits = budget_mib > 0;

  double max_state = 0;
  for (const auto& s : in.stages) max_state = std::max(max_state, s.state_bytes_per_request);
  // kv_cache_configurator resolve_max_num_reqs: clamp(capacity / context * 512, 2048, 4096),
  // capped by capacity // 2; linear-attention state slots cap it too.
  int state_slots = 1 << 30;
  double kv_budget_mib = std::max(budget_mib, 0.0);
  if (max_state > 0) {
    state_slots = static_cast<int>(kv_budget_mib * kStateBudgetShare * kMib / max_state);
    state_slots = std::min(state_slots, 4096);
    kv_budget_mib -= state_slots * max_state / kMib;
  }
  int64_t tokens = INT64_MAX;
  for (const auto& s : in.stages)
    if (s.kv_bytes_per_token > 0)
      tokens = std::min<int64_t>(tokens,
                                 static_cast<int64_t>(kv_budget_mib * kMib / s.kv_bytes_per_token));
  const bool caches_tokens = tokens != INT64_MAX;
  if (!caches_tokens) tokens = 0;
  plan.max_total_tokens = tokens;
  // A pool of no token is no pool: SGLang refuses to start.
  if (caches_tokens && tokens <= 0) plan.fits = false;

  int64_t estimated = in.context_len > 0 ? tokens * 512 / in.context_len : 4096;
  estimated = std::clamp<int64_t>(estimated, 2048, 4096);
  int64_t mrr = in.max_running_requests ? *in.max_running_requests : estimated;
  mrr = std::min<int64_t>(mrr, std::max<int64_t>(tokens / 2, 1));
  if (max_state > 0) mrr = std::min<int64_t>(mrr, std::max(state_slots, 1));
  plan.max_running_requests = static_cast<int>(mrr);
  plan.state_slots = max_state > 0 ? state_slots : 0;

  double lo = 1e300;
  for (const auto& s : in.stages) {
    StageMemory m;
    m.weight_mib = s.weight_mib;
    m.kv_pool_mib = tokens * s.kv_bytes_per_token / kMib;
    m.state_pool_mib = plan.state_slots * s.state_bytes_per_request / kMib;
    m.runtime_mib = kRuntimeMib;
    // SGLang reserves 1.5 MB per chunk token for activations; the caching
    // allocator keeps the peak of what a chunk really used, of that order.
    m.activation_mib = std::max<double>(in.chunked_prefill_size, 2048) * 1.5;
    m.graph_mib = DecodeGraphMaxBs(in) * 2.0;
    m.peak_mib = m.runtime_mib + m.weight_mib + m.kv_pool_mib + m.state_pool_mib +
                 m.activation_mib + m.graph_mib;
    m.headroom_mib = in.gpu_total_mib - m.peak_mib;
    plan.peak_mib_max = std::max(plan.peak_mib_max, m.peak_mib);
    lo = std::min(lo, m.peak_mib);
    plan.stages.push_back(m);
  }
  plan.peak_spread_mib = plan.stages.empty() ? 0 : plan.peak_mib_max - lo;
  return plan;
}

}  // namespace ppsearch::memory
