#include "cost/mla_prefill.h"

#include <gtest/gtest.h>

namespace ppsearch::cost {
namespace {

TEST(MlaPrefillRule, FlashinferAbsorbsBetweenNoPrefixAndTheThreshold) {
  const MlaPrefillRule rule = MlaPrefillRuleFor("flashinfer", 8192, false, false);
  EXPECT_FALSE(AbsorbedPrefill(rule, 0));
  EXPECT_TRUE(AbsorbedPrefill(rule, 1));
  EXPECT_TRUE(AbsorbedPrefill(rule, 8191));
  EXPECT_FALSE(AbsorbedPrefill(rule, 8192));  // MHA over the chunked prefix again
  for (const char* backend : {"fa3", "flashmla", "cutlass_mla"}) {
    const MlaPrefillRule same = MlaPrefillRuleFor(backend, 8192, false, false);
    EXPECT_TRUE(AbsorbedPrefill(same, 4096)) << backend;
    EXPECT_FALSE(AbsorbedPrefill(same, 8192)) << backend;
  }
  // SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD moves the upper end.
  EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRuleFor("flashinfer", 2048, false, false), 4096));
}

TEST(MlaPrefillRule, FlagsAndOtherBackends) {
  // --disable-chunked-prefix-cache: any prefix absorbs.
  EXPECT_TRUE(AbsorbedPrefill(MlaPrefillRuleFor("fa3", 8192, true, false), 100000));
  // --flashinfer-mla-disable-ragged: flashinfer and flashmla always absorb,
  // fa3 ignores it.
  EXPECT_TRUE(AbsorbedPrefill(MlaPrefillRuleFor("flashinfer", 8192, false, true), 0));
  EXPECT_TRUE(AbsorbedPrefill(MlaPrefillRuleFor("flashmla", 8192, false, true), 0));
  EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRuleFor("fa3", 8192, false, true), 0));
  // triton: the MHA form only without a prefix.
  const MlaPrefillRule triton = MlaPrefillRuleFor("triton", 8192, false, false);
  EXPECT_FALSE(AbsorbedPrefill(triton, 0));
  EXPECT_TRUE(AbsorbedPrefill(triton, 100000));
  // fa4, aiter, ascend, nsa: always the MHA form.
  for (const char* backend : {"fa4", "aiter", "ascend", "nsa"}) {
    EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRuleFor(backend, 8192, false, false), 4096)) << backend;
    EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRuleFor(backend, 8192, true, false), 4096)) << backend;
  }
  EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRule{}, 4096));
}

// SGLang's handler registry falls back to triton's handler for a backend it
// has no handler for (deepseek_common attention_backend_handler.py
// AttentionBackendRegistry.get_handler): absorbed whenever there is a prefix.
TEST(MlaPrefillRule, UnregisteredBackendsTakeTritonsRule) {
  for (const char* backend : {"torch_native", "flex_attention", "wave"}) {
    const MlaPrefillRule rule = MlaPrefillRuleFor(backend, 8192, false, false);
    EXPECT_FALSE(AbsorbedPrefill(rule, 0)) << backend;
    EXPECT_TRUE(AbsorbedPrefill(rule, 1)) << backend;
    EXPECT_TRUE(AbsorbedPrefill(rule, 100000)) << backend;
  }
}

// trtllm_mla runs the MHA form on every extend batch unless the chunked
// prefix cache is off, when any prefix absorbs (handle_attention_trtllm_mla).
TEST(MlaPrefillRule, TrtllmMlaAbsorbsAnyPrefixOnlyWithoutTheChunkedPrefixCache) {
  const MlaPrefillRule on = MlaPrefillRuleFor("trtllm_mla", 8192, false, false);
  EXPECT_FALSE(AbsorbedPrefill(on, 0));
  EXPECT_FALSE(AbsorbedPrefill(on, 4096));
  EXPECT_FALSE(AbsorbedPrefill(on, 100000));
  const MlaPrefillRule off = MlaPrefillRuleFor("trtllm_mla", 8192, true, false);
  EXPECT_FALSE(AbsorbedPrefill(off, 0));
  EXPECT_TRUE(AbsorbedPrefill(off, 4096));
  EXPECT_TRUE(AbsorbedPrefill(off, 100000));
  EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRuleFor("trtllm_mla", 8192, false, true), 4096));
}

}  // namespace
}  // namespace ppsearch::cost
