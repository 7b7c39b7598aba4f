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
  // fa4 (and backends without a rule here): always the MHA form.
  EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRuleFor("fa4", 8192, false, false), 4096));
  EXPECT_FALSE(AbsorbedPrefill(MlaPrefillRule{}, 4096));
}

}  // namespace
}  // namespace ppsearch::cost
