#include "evidence/verdict.h"

#include <gtest/gtest.h>

namespace ppsearch::evidence {
namespace {

TEST(Verdict, NamesRoundTripAndUnknownNamesAreNone) {
  for (Verdict v : kVerdicts) EXPECT_EQ(ParseVerdict(VerdictName(v)), v) << VerdictName(v);
  EXPECT_EQ(VerdictNames().size(), std::size(kVerdicts));
  EXPECT_EQ(VerdictNames()[1], "engine_failed_to_start");
  EXPECT_FALSE(ParseVerdict("OK"));
  EXPECT_FALSE(ParseVerdict(""));
}

TEST(Verdict, TheEngineDecidesStartDeathTimeoutAndPreflight) {
  EXPECT_TRUE(IsEngineVerdict(Verdict::kEngineFailedToStart));
  EXPECT_TRUE(IsEngineVerdict(Verdict::kEngineDied));
  EXPECT_TRUE(IsEngineVerdict(Verdict::kTimeout));
  EXPECT_TRUE(IsEngineVerdict(Verdict::kPreflightFailed));
  EXPECT_FALSE(IsEngineVerdict(Verdict::kOk));
  EXPECT_FALSE(IsEngineVerdict(Verdict::kRequestsFailed));
  EXPECT_FALSE(IsEngineVerdict(Verdict::kLogFindings));
}

}  // namespace
}  // namespace ppsearch::evidence
