#include "cost/mla_prefill.h"

#include <limits>

namespace ppsearch::cost {

MlaPrefillRule MlaPrefillRuleFor(const std::string& backend, int64_t threshold,
                                 bool disable_chunked_prefix_cache, bool disable_ragged) {
  constexpr int64_t kAnyPrefix = std::numeric_limits<int64_t>::max();
  MlaPrefillRule rule;
  if (backend == "triton") {
    rule.absorbed_below = kAnyPrefix;
  } else if (backend == "flashinfer" || backend == "fa3" || backend == "flashmla" ||
             backend == "cutlass_mla") {
    rule.always = disable_ragged && (backend == "flashinfer" || backend == "flashmla");
    rule.absorbed_below = disable_chunked_prefix_cache ? kAnyPrefix : threshold;
  }
  return rule;
}

bool AbsorbedPrefill(const MlaPrefillRule& rule, int64_t prefix_sum) {
  return rule.always || (prefix_sum > 0 && prefix_sum < rule.absorbed_below);
}

}  // namespace ppsearch::cost
