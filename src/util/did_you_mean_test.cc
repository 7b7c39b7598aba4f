#include "util/did_you_mean.h"

#include <gtest/gtest.h>

namespace ppsearch {
namespace {

TEST(EditDistance, CountsEditsIgnoringCase) {
  EXPECT_EQ(EditDistance("worklaod", "workload"), 2u);
  EXPECT_EQ(EditDistance("H200", "h200"), 0u);
  EXPECT_EQ(EditDistance("", "ep"), 2u);
  EXPECT_EQ(EditDistance("h20", "b200"), 2u);
}

// At most min(2, max(1, n / 3)) edits for a candidate of n characters.
TEST(DidYouMean, SuggestsWithinAThirdOfTheCandidateAndTwoEdits) {
  EXPECT_EQ(ClosestName("tp", {"pp", "ep"}), "pp");  // a tie: the earlier candidate
  EXPECT_EQ(ClosestName("worklaod", {"sweep", "workload"}), "workload");
  EXPECT_EQ(ClosestName("h20", {"b200", "h100"}), "");  // 2 edits of 4 characters
  EXPECT_EQ(ClosestName("e", {"ep"}), "ep");            // one edit is always near enough
  EXPECT_EQ(ClosestName("x", {"ep"}), "");
  EXPECT_EQ(ClosestName("xy", {"ep"}), "");
  EXPECT_EQ(ClosestName("Input_TPS", {"input_tps", "ttft_p50"}), "input_tps");
  EXPECT_EQ(ClosestName("budget_sampel", {"budget_s", "budget_samples"}), "budget_samples");
  EXPECT_EQ(ClosestName("anything", {}), "");
  // Five edits of seventeen characters: another sample, not a slip.
  EXPECT_EQ(ClosestName("pp8-tp1-ep1_c64_r9", {"pp1-tp8-ep1_c8_r1"}), "");
  EXPECT_EQ(ClosestName("pp1-tp8-ep1_c8_r2", {"pp1-tp8-ep1_c8_r1"}), "pp1-tp8-ep1_c8_r1");
}

TEST(DidYouMean, WritesTheHintOrNothing) {
  EXPECT_EQ(DidYouMean("valdate", {"plan", "validate"}), " (did you mean 'validate'?)");
  EXPECT_EQ(DidYouMean("zzz", {"plan", "validate"}), "");
}

}  // namespace
}  // namespace ppsearch
