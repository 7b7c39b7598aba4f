#include "memory/memory_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "memory/sglang_reserve.h"
#include "util/format.h"

namespace ppsearch::memory {
namespace {

constexpr double kMib = 1024.0 * 1024.0;

// One named share of a stage's peak, MiB.
struct Share {
  std::string label;
  double mib = 0;
};

std::vector<Share> SharesOf(const StageFootprint& f, const StageMemory& m) {
  return {
      {"embedding", f.embedding_mib},
      {"LM head weights", f.lm_head_mib},
      {fmt::format("layer weights, {} layers", f.num_layers),
       f.weight_mib - f.embedding_mib - f.lm_head_mib},
      {"KV cache", m.kv_pool_mib},
      {"linear-attention state", m.state_pool_mib},
      {"request table", m.request_table_mib},
      {m.activation_peak.empty() ? "activations" : "activations, " + m.activation_peak,
       m.activation_mib},
  };
}

// The stage with the least headroom, and why it is tighter than the next
// tightest stage: the share of its peak that exceeds the same share there by
// the most (more layers, the LM head, a larger KV share, its activations).
void FindTightestStage(const MemoryInputs& in, MemoryPlan& plan) {
  if (plan.stages.empty() || plan.stages.size() != in.stages.size()) return;
  const size_t n = plan.stages.size();
  size_t tight = 0;
  for (size_t s = 1; s < n; ++s)
    if (plan.stages[s].headroom_mib < plan.stages[tight].headroom_mib) tight = s;
  plan.tightest_stage = static_cast<int>(tight);
  if (n == 1) {
    plan.tightest_reason = "the only stage";
    return;
  }
  size_t next = tight == 0 ? 1 : 0;
  for (size_t s = 0; s < n; ++s)
    if (s != tight && plan.stages[s].headroom_mib < plan.stages[next].headroom_mib) next = s;
  const std::vector<Share> mine = SharesOf(in.stages[tight], plan.stages[tight]);
  const std::vector<Share> theirs = SharesOf(in.stages[next], plan.stages[next]);
  double best_excess = 0.5;  // below half a MiB the stages are alike
  for (size_t k = 0; k < mine.size(); ++k) {
    const double excess = mine[k].mib - theirs[k].mib;
    if (excess <= best_excess) continue;
    best_excess = excess;
    plan.tightest_reason =
        fmt::format("{}: +{} MiB over stage {}", mine[k].label,
                    FormatThousands(static_cast<int64_t>(std::llround(excess))), next);
  }
  if (plan.tightest_reason.empty()) plan.tightest_reason = "all stages alike";
}

}  // namespace

double DefaultReservedMib(const MemoryInputs& in) {
  // handle_gpu_memory_settings (memory_hook.py), in MB of the device
  // capacity: 512 + activation_tokens * 1.5 + tp * pp / 8 * 1024 + graph
  // reserve, at least 10 GiB on GPUs above 60 GiB, then DeepEP's buffers on
  // top of that floor. SGLang's 1.5 MB per token is its allowance for any
  // model; the stage peaks below use this model's own activations
  // (memory/activation.h).
  const double activation_tokens = std::max<double>(in.chunked_prefill_size, 2048);
  double reserved =
      512 + activation_tokens * 1.5 + in.tp * in.pp / 8.0 * 1024 + GraphReserveMib(in);
  if (in.gpu_total_mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  return reserved + DeepEpReserveMib(in);
}

double DefaultMemFractionStatic(const MemoryInputs& in) {
  return std::round((in.gpu_total_mib - DefaultReservedMib(in)) / in.gpu_total_mib * 1000) / 1000;
}

MemoryPlan PlanMemory(const MemoryInputs& in) {
  MemoryPlan plan;
  plan.mem_fraction_static = in.mem_fraction_static.value_or(DefaultMemFractionStatic(in));
  // Free memory after NCCL init, MIN-reduced over the world.
  plan.pre_load_free_mib = in.gpu_total_mib - in.runtime_mib;
  const double slack_mib = plan.pre_load_free_mib * (1 - plan.mem_fraction_static);

  // The byte budget is set by the heaviest rank: _profile_available_bytes
  // (model_executor/model_runner_kv_cache_mixin.py) reads the free memory
  // after the weights load with get_available_gpu_memory(distributed=True,
  // cpu_group=get_world_group().cpu_group), an all-reduce MIN over every
  // rank of every stage. Each stage divides it by its own per-token size
  // (its own layers), and the token count is MIN-reduced over the world
  // again, so lighter stages leave memory unused.
  double max_weight = 0;
  for (const auto& s : in.stages) max_weight = std::max(max_weight, s.weight_mib);
  const double budget_mib = plan.pre_load_free_mib - max_weight - slack_mib;
  if (budget_mib <= 0) {
    plan.fits = false;
    plan.sglang_refuses = true;
    plan.refusal = NoKvRoomMessage(plan.mem_fraction_static, plan.pre_load_free_mib, max_weight);
  }

  // The linear-attention state pool comes out of the same budget first
  // (memory/state_pool.h): slots of the largest stage's state per request.
  double max_state = 0;
  for (const auto& s : in.stages) max_state = std::max(max_state, s.state_bytes_per_request);
  double kv_budget_mib = std::max(budget_mib, 0.0);
  int64_t state_slots = 0;
  if (max_state > 0 && !in.state_pool.rule_refusal.empty() && plan.fits) {
    plan.fits = false;
    plan.sglang_refuses = true;
    plan.state_refusal = MemoryPlan::StateRefusal::kSetting;
    plan.refusal = in.state_pool.rule_refusal;
  }
  if (max_state > 0) {
    const StatePoolSize pool =
        SizeStatePool(in.state_pool, budget_mib, max_state, in.max_running_requests, in.dp_size);
    state_slots = pool.slots;
    kv_budget_mib = std::max(kv_budget_mib - pool.charged_mib, 0.0);
    if (!pool.refusal.empty() && plan.fits) {
      plan.fits = false;
      plan.sglang_refuses = true;
      plan.state_refusal = MemoryPlan::StateRefusal::kSize;
      plan.refusal = pool.refusal;
    }
  }
  int64_t tokens = INT64_MAX;
  for (const auto& s : in.stages)
    if (s.kv_bytes_per_token > 0)
      tokens = std::min<int64_t>(tokens,
                                 static_cast<int64_t>(kv_budget_mib * kMib / s.kv_bytes_per_token));
  const bool caches_tokens = tokens != INT64_MAX;
  if (!caches_tokens) tokens = 0;
  // init_memory estimates max_running_requests from the profiled pool, then
  // applies the user's cap when it is below what the memory leaves (a larger
  // cap is ignored with a warning).
  const int64_t profiled = tokens;
  if (caches_tokens && in.max_total_tokens) tokens = std::min(tokens, *in.max_total_tokens);
  plan.max_total_tokens = tokens;
  // A pool of no token is no pool: pool_configurator.py refuses it too.
  if (caches_tokens && tokens <= 0 && plan.fits) {
    plan.fits = false;
    plan.sglang_refuses = true;
    plan.refusal = fmt::format(
        "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
        "mem_fraction_static={:g}",
        plan.mem_fraction_static);
  }

  int64_t estimated = in.context_len > 0 ? profiled * 512 / in.context_len : 4096;
  estimated = std::clamp<int64_t>(estimated, 2048, 4096);
  // resolve_max_num_reqs: a user's cap is the whole server's; each DP
  // attention rank takes its share (requested_per_worker), and everything
  // below (the KV pool, the state slots, the request table) is per rank.
  int64_t mrr = in.max_running_requests
                    ? std::max<int64_t>(*in.max_running_requests / std::max(in.dp_size, 1), 1)
                    : estimated;
  mrr = std::min<int64_t>(mrr, std::max<int64_t>(tokens / 2, 1));
  if (max_state > 0) {
    // resolve_max_num_reqs: each running request holds this many state slots.
    const int per_request = std::max(in.state_pool.slots_per_request, 1);
    const int64_t cap = state_slots / per_request;
    if (cap <= 0 && plan.fits) {
      plan.fits = false;
      plan.sglang_refuses = true;
      plan.state_refusal = MemoryPlan::StateRefusal::kSize;
      plan.refusal = fmt::format(
          "Hybrid (mamba/linear-attention) state cache is too small to serve any requests. "
          "max_mamba_cache_size={}, mamba_ratio={}, resulting max_num_reqs={}. Try: (1) reduce "
          "--max-running-requests, (2) increase --mem-fraction-static, or (3) use GPUs with more "
          "memory.",
          state_slots, per_request, cap);
    }
    mrr = std::min<int64_t>(mrr, std::max<int64_t>(cap, 1));
    plan.state_slots_per_request = per_request;
  }
  plan.max_running_requests = static_cast<int>(mrr);
  if (max_state > 0 && in.pd_decode) {
    // HybridMambaDecodeReqToTokenPool: max(the budget's slots, (running +
    // pre-allocated) x slots per request). The KV pool is already sized, so
    // raised slots come out of the headroom.
    const int64_t needed = (mrr + in.request_table_extra_rows) *
                           std::max<int64_t>(in.state_pool.decode_slots_per_request, 1);
    state_slots = std::max(state_slots, needed);
  }
  plan.state_slots = static_cast<int>(state_slots);
  // One int32 row of the context (+4 tokens of decode headroom,
  // allocation_sizing.py) per request slot and a padding row.
  const double request_table_mib =
      in.context_len > 0 ? static_cast<double>(mrr + 1 + in.request_table_extra_rows) *
                               static_cast<double>(in.context_len + 4) * 4 / kMib
                         : 0;

  double lo = 1e300;
  for (const auto& s : in.stages) {
    StageMemory m;
    m.weight_mib = s.weight_mib;
    m.kv_pool_mib = tokens * s.kv_bytes_per_token / kMib;
    // Each stage allocates the slots, and a padding slot, for its own layers.
    m.state_pool_mib = max_state > 0 ? (state_slots + 1) * s.state_bytes_per_request / kMib : 0;
    m.request_table_mib = request_table_mib;
    m.runtime_mib = in.runtime_mib;
    // This stage's own chunk activations and workspace at their peak (the
    // caching allocator keeps the peak of what a chunk used).
    m.activation_mib = s.activation.bytes / kMib;
    m.activation_peak = s.activation.peak;
    // SGLang's own estimate of the captured graphs (decode, prefill, DP
    // attention padding); nothing when the graphs are off.
    m.graph_mib = GraphReserveMib(in);
    m.workspace_mib = in.workspace_mib;
    m.peak_mib = m.runtime_mib + m.weight_mib + m.kv_pool_mib + m.state_pool_mib +
                 m.request_table_mib + m.activation_mib + m.graph_mib + m.workspace_mib;
    m.headroom_mib = in.gpu_total_mib - m.peak_mib;
    plan.peak_mib_max = std::max(plan.peak_mib_max, m.peak_mib);
    lo = std::min(lo, m.peak_mib);
    plan.stages.push_back(m);
  }
  plan.peak_spread_mib = plan.stages.empty() ? 0 : plan.peak_mib_max - lo;
  FindTightestStage(in, plan);
  // mem_fraction_static may leave SGLang a pool, yet a stage's weights,
  // activations, graphs and runtime may already fill the GPU: then no
  // fraction leaves room for a KV cache there.
  for (size_t i = 0; i < plan.stages.size() && plan.fits; ++i) {
    const StageMemory& t = plan.stages[i];
    const double without_pools = t.runtime_mib + t.weight_mib + t.activation_mib + t.graph_mib;
    if (without_pools < in.gpu_total_mib) continue;
    plan.fits = false;
    plan.refusal = fmt::format(
        "stage {} needs {:.0f} MiB without any KV cache (weights {:.0f}, activations {:.0f}, "
        "CUDA graphs {:.0f}, CUDA context and NCCL {:.0f}) of the GPU's {:.0f} MiB; no "
        "--mem-fraction-static leaves room for the KV cache",
        i, without_pools, t.weight_mib, t.activation_mib, t.graph_mib, t.runtime_mib,
        in.gpu_total_mib);
  }
  return plan;
}

nlohmann::json StageMemoryToJson(const StageMemory& s) {
  return {{"weight_mib", s.weight_mib},
          {"kv_pool_mib", s.kv_pool_mib},
          {"state_pool_mib", s.state_pool_mib},
          {"runtime_mib", s.runtime_mib},
          {"activation_mib", s.activation_mib},
          {"activation_peak", s.activation_peak},
          {"graph_mib", s.graph_mib},
          {"workspace_mib", s.workspace_mib},
          {"request_table_mib", s.request_table_mib},
          {"peak_mib", s.peak_mib},
          {"headroom_mib", s.headroom_mib}};
}

nlohmann::json MemoryPlanToJson(const MemoryPlan& plan) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageMemory& s : plan.stages) stages.push_back(StageMemoryToJson(s));
  return {{"mem_fraction_static", plan.mem_fraction_static},
          {"pre_load_free_mib", plan.pre_load_free_mib},
          {"max_total_tokens", plan.max_total_tokens},
          {"max_running_requests", plan.max_running_requests},
          {"state_slots", plan.state_slots},
          {"state_slots_per_request", plan.state_slots_per_request},
          {"peak_mib_max", plan.peak_mib_max},
          {"peak_spread_mib", plan.peak_spread_mib},
          {"fits", plan.fits},
          {"refusal", plan.refusal},
          {"tightest_stage", plan.tightest_stage},
          {"tightest_reason", plan.tightest_reason},
          {"stages", stages}};
}

std::string NoKvRoomMessage(double mem_fraction_static, double pre_load_free_mib,
                            double weight_mib) {
  // kv_cache_configurator.py _profile_available_bytes: available is the free
  // memory after the weights loaded (MIN over ranks), pre the free memory
  // before; the smallest fraction that leaves a positive pool is 1 - available / pre.
  const double minimum = pre_load_free_mib > 0 ? weight_mib / pre_load_free_mib : 1;
  return fmt::format(
      "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={:g}. "
      "Raise --mem-fraction-static above {:.3f} (minimum viable = 1 - available/pre = {:.4f}).",
      mem_fraction_static, std::ceil(minimum * 1000) / 1000, minimum);
}

}  // namespace ppsearch::memory
