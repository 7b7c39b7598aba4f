#pragma once
// Which form SGLang's MLA attention takes for a prefill (extend) batch.
// DeepseekV2AttentionMLA dispatches per batch on the sum of its requests'
// cached prefix lengths (models/deepseek_common attention backend handlers,
// sgl-project/sglang@0000e9b46):
//   flashinfer, fa3, flashmla, cutlass_mla: the MHA form (K and V expanded
//     through kv_b, the prefix's latent re-expanded) when the sum is 0 or at
//     least SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD (8,192) and the chunked
//     prefix cache is enabled; the absorbed form (attention over the latent
//     cache, like decode) in between; flashinfer and flashmla with
//     --flashinfer-mla-disable-ragged always absorb;
//   trtllm_mla: the MHA form, except that with
//     --disable-chunked-prefix-cache a batch with any prefix absorbs
//     (handle_attention_trtllm_mla);
//   fa4, aiter, ascend, nsa: the MHA form for every extend batch (their
//     handlers; nsa's choice is its backend's, not modelled here);
//   triton, and every backend SGLang registers no handler for: the MHA form
//     only without a prefix (AttentionBackendRegistry.get_handler falls back
//     to handle_attention_triton).

#include <cstdint>
#include <string>

namespace ppsearch::cost {

// A batch absorbs when `always`, or when its prefix sum is in (0, below).
// The default absorbs nothing: the MHA form for every batch.
struct MlaPrefillRule {
  int64_t absorbed_below = 0;
  bool always = false;
};

inline constexpr int64_t kChunkedPrefixCacheThreshold = 8192;

// `threshold` is SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD's value.
MlaPrefillRule MlaPrefillRuleFor(const std::string& backend, int64_t threshold,
                                 bool disable_chunked_prefix_cache, bool disable_ragged);

bool AbsorbedPrefill(const MlaPrefillRule& rule, int64_t prefix_sum);

}  // namespace ppsearch::cost
