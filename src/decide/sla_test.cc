#include "decide/sla.h"

#include <gtest/gtest.h>

namespace ppsearch::decide {
namespace {

TEST(CheckSla, AFigureAboveItsLimitIsAMissAndEqualMeetsIt) {
  SlaLimits limits;
  limits[SlaMetric::kTpot] = 0.040;
  limits[SlaMetric::kTtft] = 2.0;
  SlaValues figures;
  figures[SlaMetric::kTpot] = 0.0412;
  figures[SlaMetric::kTtft] = 2.0;
  const SlaCheck check = CheckSla(limits, figures);
  EXPECT_FALSE(check.meets());
  ASSERT_EQ(check.misses.size(), 1u);
  EXPECT_EQ(check.misses[0].metric, SlaMetric::kTpot);
  EXPECT_NEAR(check.misses[0].over(), 0.03, 1e-12);
  EXPECT_EQ(MissText(check.misses[0]), "TPOT p99 41.20 ms > tpot_p99_ms 40 ms (+3.00%)");
  EXPECT_TRUE(check.unchecked.empty());
}

TEST(CheckSla, ALimitWithoutItsFigureIsUncheckedNotPassed) {
  SlaLimits limits;
  limits[SlaMetric::kE2e] = 30;
  limits[SlaMetric::kItl] = 0.05;
  SlaValues figures;
  figures[SlaMetric::kItl] = 0.01;
  const SlaCheck check = CheckSla(limits, figures);
  EXPECT_TRUE(check.meets());
  ASSERT_EQ(check.unchecked.size(), 1u);
  EXPECT_EQ(check.unchecked[0], SlaMetric::kE2e);
  EXPECT_EQ(LimitsText(limits), "itl_p99_ms 50 ms, e2e_p99_s 30 s");
}

TEST(RequestMeetsSla, EverySetLimitAgainstTheRequestsOwnFigure) {
  SlaLimits limits;
  limits[SlaMetric::kTtft] = 1.0;
  limits[SlaMetric::kTpot] = 0.02;
  SlaValues request;
  request[SlaMetric::kTtft] = 0.5;
  request[SlaMetric::kTpot] = 0.019;
  request[SlaMetric::kE2e] = 100;  // no e2e limit: not looked at
  EXPECT_TRUE(RequestMeetsSla(limits, request));
  request[SlaMetric::kTpot] = 0.021;
  EXPECT_FALSE(RequestMeetsSla(limits, request));
  // A one-token answer has no TPOT: nothing after the first token was late.
  request[SlaMetric::kTpot].reset();
  EXPECT_TRUE(RequestMeetsSla(limits, request));
  // Without a first token it cannot meet a TTFT limit.
  request[SlaMetric::kTtft].reset();
  EXPECT_FALSE(RequestMeetsSla(limits, request));
  EXPECT_TRUE(RequestMeetsSla(SlaLimits{}, request));
}

}  // namespace
}  // namespace ppsearch::decide
