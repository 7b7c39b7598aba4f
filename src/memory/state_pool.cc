#include "memory/state_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ppsearch::memory {
namespace {

constexpr double kBytesInMib = 1024.0 * 1024.0;

// kv_cache_configurator.py: MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO, the
// slots a request holds with the radix cache on (its live state and what the
// cache retains), before the extra buffer's ping-pong slots;
// MAMBA_CACHE_BASE_RATIO_DROP_ON_SKIP, what SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK
// takes off it (and gives back to no_buffer, which has no ping-pong to
// absorb the prefill-to-decode peak).
constexpr int kBaseSlotsPerRequest = 3;
constexpr int kBaseDropOnSkip = 1;

}  // namespace

SlotRule ResolveSlotRule(const SlotRuleInputs& in) {
  SlotRule out;
  if (!in.radix_cache) return out;  // a request holds its live state only
  out.strategy = in.strategy;
  bool overlap = !in.overlap_disabled_by_user;
  if (out.strategy == "auto") {
    if ((overlap || in.page_size > 1) && in.extra_buffer_supported) {
      out.strategy = "extra_buffer";
    } else {
      out.strategy = "no_buffer";
      overlap = false;
    }
  }
  // server_args.py _validate_mamba_no_buffer / _validate_mamba_extra_buffer
  // assert on the strategy before PP turns the overlap scheduler off.
  if (out.strategy == "no_buffer" && in.page_size > 1)
    out.refusal = "no_buffer only supports page_size=1.";
  else if (out.strategy == "no_buffer" && overlap)
    out.refusal =
        "no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.";
  else if (out.strategy != "no_buffer" && !in.extra_buffer_supported)
    out.refusal = out.strategy +
                  " is not supported for this model on its linear-attention backend (the extra "
                  "buffer needs linear-attn-backend triton); use no_buffer.";
  else if (out.strategy == "extra_buffer_lazy" && in.pd_refuses_lazy)
    out.refusal =
        "extra_buffer_lazy unsupported under PD disaggregation; use --mamba-radix-cache-strategy "
        "extra_buffer.";
  // _pipeline_parallel_overlap_disable, after the strategy was chosen.
  if (in.pp > 1) overlap = false;
  int extra = 0;
  if (out.strategy == "extra_buffer") {
    extra = overlap ? 2 : 1;
    out.decode_slots_per_request = 1 + extra;
  } else if (out.strategy == "extra_buffer_lazy") {
    extra = 1;
    // The decode server's pool sizes the ping-pong by the overlap alone.
    out.decode_slots_per_request = 1 + (overlap ? 2 : 1);
    if (!overlap && out.refusal.empty())
      out.refusal =
          "Lazy extra buffer requires overlap schedule (--disable-overlap-schedule is "
          "incompatible)";
  }
  if (in.skip_decode_lock && out.strategy == "no_buffer") extra = kBaseDropOnSkip;
  out.slots_per_request =
      kBaseSlotsPerRequest - (in.skip_decode_lock ? kBaseDropOnSkip : 0) + extra;
  return out;
}

StatePoolSize SizeStatePool(const StatePoolSettings& s, double budget_mib,
                            double largest_stage_bytes_per_request,
                            std::optional<int> max_running_requests, int dp) {
  StatePoolSize out;
  out.bytes_per_slot =
      s.whole_model_per_stage ? s.whole_model_bytes_per_request : largest_stage_bytes_per_request;
  if (out.bytes_per_slot <= 0) return out;
  dp = std::max(dp, 1);
  const double per = out.bytes_per_slot;
  if (s.max_cache_size) {
    out.slots = *s.max_cache_size / dp;
  } else if (!s.radix_cache && max_running_requests) {
    out.slots = *max_running_requests / dp;
  } else {
    const double ratio = s.full_memory_ratio;
    const double budget_bytes = budget_mib * kBytesInMib * ratio / (1 + ratio);
    // 0.5.17 counts the padding slot in the solve; earlier versions did not.
    const double slots = s.whole_model_per_stage ? budget_bytes / per : (budget_bytes - per) / per;
    out.slots = static_cast<int64_t>(std::floor(slots));
  }
  if (out.slots <= 0) {
    out.refusal = fmt::format(
        "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
        "max_mamba_cache_size={} (total_rest_memory={:.2f} GB, mamba_cache_per_req={:.2f} MB). "
        "Try: (1) reduce --max-running-requests, (2) increase --mem-fraction-static, "
        "(3) reduce --speculative-num-draft-tokens, or (4) use GPUs with more memory.",
        out.slots, budget_mib / 1024, per / kBytesInMib);
    out.slots = 0;
    return out;
  }
  const int64_t charged_slots = s.whole_model_per_stage ? out.slots : out.slots + 1;
  out.charged_mib = static_cast<double>(charged_slots) * per / kBytesInMib;
  return out;
}

}  // namespace ppsearch::memory
