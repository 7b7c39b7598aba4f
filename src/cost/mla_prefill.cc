#include "cost/mla_prefill.h"

#include <limits>

namespace ppsearch::cost {

MlaPrefillRule MlaPrefillRuleFor(const std::string& backend, int64_t threshold,
                                 bool disable_chunked_prefix_cache, bool disable_ragged) {
  constexpr int64_t kAnyPrefix = std::numeric_limits<int64_t>::max();
  MlaPrefillRule rule;
  if (backend == "flashinfer" || backend == "fa3" || backend == "flashmla" ||
      backend == "cutlass_mla") {
    rule.always = disable_ragged && (backend == "flashinfer" || backend == "flashmla");
    rule.absorbed_below = disable_chunked_prefix_cache ? kAnyPrefix : threshold;
  } else if (backend == "trtllm_mla") {
    rule.absorbed_below = disable_chunked_prefix_cache ? kAnyPrefix : 0;
  } else if (backend != "fa4" && backend != "aiter" && backend != "ascend" && backend != "nsa") {
    // triton's handler, registered for "triton" and the fallback of every
    // backend without one of its own.
    rule.absorbed_below = kAnyPrefix;
  }
  return rule;
}

bool AbsorbedPrefill(const MlaPrefillRule& rule, int64_t prefix_sum) {
  return rule.always || (prefix_sum > 0 && prefix_sum < rule.absorbed_below);
}

}  // namespace ppsearch::cost
