#pragma once
// SGLang's pool of linear-attention request states (KDA, Mamba): how many
// states it holds, what it takes from the KV budget and how many requests
// it lets run, as v0.5.18 sizes it (python/sglang/srt/):
//   mem_cache/kv_cache_configurator.py _handle_max_mamba_cache: the pool
//     takes ratio / (1 + ratio) of the budget the weights leave
//     (--mamba-full-memory-ratio, 0.9), in slots of one request's state,
//     plus one padding slot; a user's --max-mamba-cache-size, or with the
//     radix cache off a user's --max-running-requests, sets the slots instead;
//   _calculate_mamba_ratio: the state slots each running request holds;
//   resolve_max_num_reqs: running requests <= slots // that ratio.
// Under PP every rank charges the budget for the largest stage's share of
// the model's state layers (PR #33666, 0.5.17); earlier versions charged
// every stage for the whole model's, so a deep pipeline got a small pool.
// Each stage then allocates the slots for its own layers only.

#include <cstdint>
#include <optional>
#include <string>

namespace ppsearch::memory {

// What decides the state slots one running request holds.
struct SlotRuleInputs {
  bool radix_cache = true;  // false under --disable-radix-cache
  // --mamba-radix-cache-strategy (alias --mamba-scheduler-strategy): auto,
  // no_buffer, extra_buffer or extra_buffer_lazy.
  std::string strategy = "auto";
  bool overlap_disabled_by_user = false;  // --disable-overlap-schedule
  int page_size = 1;
  int pp = 1;
  // Whether the model and its linear-attention backend support the extra
  // buffer (overrides.py _MAMBA_EXTRA_BUFFER_ARCHS, with the triton backend).
  bool extra_buffer_supported = true;
  // SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK (0.5.17 and later): the base drops
  // from 3 slots to 2; no_buffer gets the slot back (3 whatever the lock).
  bool skip_decode_lock = false;
  // A PD server (--disaggregation-mode prefill or decode) of SGLang 0.5.17
  // or later, which refuses the lazy extra buffer.
  bool pd_refuses_lazy = false;
};

struct SlotRule {
  int slots_per_request = 1;
  // What a PD decode server's pool holds per running or pre-allocated
  // request (disaggregation/decode.py HybridMambaDecodeReqToTokenPool): its
  // live state, plus the extra buffer's ping-pong (2 with the overlap
  // scheduler on, 1 with it off) where the extra buffer is on.
  int decode_slots_per_request = 1;
  std::string strategy;  // as resolved ("" with the radix cache off)
  // Set when SGLang refuses the combination at startup, in its words.
  std::string refusal;
};

// _mamba_radix_cache_resolution then _calculate_mamba_ratio. With the radix
// cache off a request holds one slot. "auto" picks extra_buffer when the
// overlap scheduler is wanted (or pages are larger than one token) and the
// model supports it, else no_buffer; PP turns the overlap scheduler off
// only after that choice (server_args.py runs the model's adjustments
// first). Then 3 slots, plus the extra buffer's ping-pong: 2 with the
// overlap scheduler on, 1 with it off (lazy: 1, and it needs the overlap);
// SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK takes 1 off the 3 except under no_buffer.
SlotRule ResolveSlotRule(const SlotRuleInputs& in);

// The settings PlanMemory sizes the pool with.
struct StatePoolSettings {
  double full_memory_ratio = 0.9;         // --mamba-full-memory-ratio
  std::optional<int64_t> max_cache_size;  // --max-mamba-cache-size, whole server
  int slots_per_request = 1;              // ResolveSlotRule
  int decode_slots_per_request = 1;       // ResolveSlotRule, a PD decode server's
  std::string rule_refusal;               // ResolveSlotRule's: SGLang would not start
  bool radix_cache = true;
  // SGLang before 0.5.17 charged every stage for the whole model's states.
  bool whole_model_per_stage = false;
  // Whether the spec named the SGLang version; without it a pipeline's pool
  // could be either, and the memory interval spans both.
  bool version_known = true;
  double whole_model_bytes_per_request = 0;  // per rank, every state layer
};

struct StatePoolSize {
  int64_t slots = 0;          // max_mamba_cache_size (the padding slot not counted)
  double charged_mib = 0;     // taken from the KV budget on every rank
  double bytes_per_slot = 0;  // what one slot charges
  std::string refusal;        // SGLang's error when no slot fits
};

// The pool on a budget of `budget_mib` (what the weights leave under
// mem_fraction_static, MIN over ranks), whose largest stage keeps
// `largest_stage_bytes_per_request` per request and rank.
// `max_running_requests` is the user's (nullopt: unset), `dp` the DP
// attention ranks that split a whole server's counts.
StatePoolSize SizeStatePool(const StatePoolSettings& s, double budget_mib,
                            double largest_stage_bytes_per_request,
                            std::optional<int> max_running_requests, int dp);

}  // namespace ppsearch::memory
