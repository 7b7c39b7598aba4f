#include "decide/rules.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsearch::decide {
namespace {

TEST(RelativeScores, GeometricMeanOfValueOverBestPerLevel) {
  // Layout 0 wins level 0 by 10% and loses level 1 by 10%; layout 1 the reverse.
  const std::vector<std::vector<double>> tps = {{110, 100}, {100, 110}, {105, 105}};
  const std::vector<double> s = RelativeScores(tps, /*lower_is_better=*/false);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], std::sqrt(1.0 * (100.0 / 110.0)), 1e-12);
  EXPECT_NEAR(s[1], s[0], 1e-12);
  EXPECT_NEAR(s[2], 105.0 / 110.0, 1e-12);
}

TEST(RelativeScores, LowerIsBetterUsesBestOverValue) {
  const std::vector<double> s = RelativeScores({{2.0}, {4.0}}, /*lower_is_better=*/true);
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  EXPECT_DOUBLE_EQ(s[1], 0.5);
}

TEST(RelativeScores, NonPositiveLevelsAreLeftOut) {
  const std::vector<double> s = RelativeScores({{100, 0}, {50, 80}}, false);
  EXPECT_DOUBLE_EQ(s[0], 1.0);                     // only level 0 counts
  EXPECT_NEAR(s[1], std::sqrt(0.5 * 1.0), 1e-12);  // 80 is best at level 1
  EXPECT_DOUBLE_EQ(RelativeScores({{0}}, false)[0], 0.0);
}

TEST(Headroom, AtLeastTheMinimumQualifies) {
  EXPECT_DOUBLE_EQ(HeadroomMib(85651, 81355), 4296);
  EXPECT_TRUE(MeetsHeadroom(4296, 4296));
  EXPECT_FALSE(MeetsHeadroom(4295.5, 4296));
}

TEST(ParetoOptimal, KeepsThePointsNoOtherBeatsAndKeepsEqualOnes) {
  // (throughput: more is better, TTFT: less is better)
  const std::vector<std::pair<double, double>> points = {
      {100, 5.0}, {120, 6.0}, {90, 4.0}, {110, 7.0}, {120, 5.5}, {80, 4.0}, {90, 4.0}};
  // {110, 7} loses to {120, 6}; {120, 6} to {120, 5.5}; {80, 4} to {90, 4};
  // the two {90, 4} beat each other in nothing.
  EXPECT_EQ(ParetoOptimal(points),
            (std::vector<bool>{true, false, true, false, true, false, true}));
  EXPECT_TRUE(ParetoOptimal({}).empty());
}

// 512 requests sent at 4.25 requests/s, each 18.2 s end to end: keeping up
// completes 512 / (120.5 s + 18.2 s) = 3.69 requests/s, 3.20 less the
// sends' spread (13%), and the sample completed 3.25. But 64 requests in
// flight for 18.2 s complete at most 64 / 18.2 = 3.52 requests/s: at 4.25
// the cap stays full and requests wait for a slot. (The chat example's
// 4xPP1/TP8/EP1, which the rule alone let through.)
TEST(KeepsUp, AnOfferedRateAboveWhatTheCapLetsCompleteFallsBehind) {
  EXPECT_NEAR(KeepingUpFloorRps(4.25, 512, 18.2),
              (1 - 3 / std::sqrt(512.0)) * 512 / (512 / 4.25 + 18.2), 1e-12);
  EXPECT_GT(3.25, KeepingUpFloorRps(4.25, 512, 18.2));
  EXPECT_DOUBLE_EQ(CapRps(64, 18.2), 64 / 18.2);
  EXPECT_FALSE(KeepsUp(4.25, 64, 512, 3.25, 18.2));
  EXPECT_TRUE(KeepsUp(4.25, 0, 512, 3.25, 18.2)) << "no cap: nothing waits for a slot";
  EXPECT_TRUE(KeepsUp(4.25, 512, 512, 3.25, 18.2)) << "every request fits under the cap";
  EXPECT_TRUE(KeepsUp(3.4, 64, 512, 3.1, 18.2));
  // Completing too few fails it without the cap's help.
  EXPECT_FALSE(KeepsUp(4.25, 0, 512, 3.0, 18.2));
  EXPECT_TRUE(std::isinf(CapRps(0, 18.2)));
}

}  // namespace
}  // namespace ppsearch::decide
