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
  const auto sample = [](double rate, int cap, double rps) {
    return OpenLoopSample{
        .rate = rate, .cap = cap, .requests = 512, .request_rps = rps, .e2e_p50_s = 18.2};
  };
  EXPECT_FALSE(KeepsUp(sample(4.25, 64, 3.25)));
  EXPECT_EQ(HowBehind(sample(4.25, 64, 3.25)), Behind::kFillsTheCap);
  EXPECT_NEAR(BehindBy(sample(4.25, 64, 3.25)), 4.25 / (64 / 18.2) - 1, 1e-12);
  EXPECT_TRUE(KeepsUp(sample(4.25, 0, 3.25))) << "no cap: nothing waits for a slot";
  EXPECT_TRUE(KeepsUp(sample(4.25, 512, 3.25))) << "every request fits under the cap";
  EXPECT_TRUE(KeepsUp(sample(3.4, 64, 3.1)));
  EXPECT_EQ(BehindBy(sample(3.4, 64, 3.1)), 0);
  // Completing too few fails it without the cap's help.
  EXPECT_FALSE(KeepsUp(sample(4.25, 0, 3.0)));
  EXPECT_EQ(HowBehind(sample(4.25, 0, 3.0)), Behind::kCompletedTooFew);
  // By the rule it breaks first, whatever the pace says: the shortfall a
  // text beside it can explain.
  OpenLoopSample few = sample(4.25, 0, 3.0);
  few.first_token_pace = 0.2;
  EXPECT_NEAR(BehindBy(few), KeepingUpFloorRps(4.25, 512, 18.2) / 3.0 - 1, 1e-12);
  EXPECT_TRUE(std::isinf(CapRps(0, 18.2)));
}

// 3,000 requests sent at 25 requests/s to a server that serves 14: its
// queue adds to every end-to-end time (a p50 of 82 s), which the
// completions rule credits as the last answers' wait (3,000 / (120 s +
// 82 s) = 14.9 requests/s, 14.0 less the sends' spread, and it completed
// 14.0). Its first tokens came at 14 per second against 25 sent: a pace of
// 0.56. (The chat example's 4xPP1/TP8/EP1 without a cap, which the
// completions rule let through.)
TEST(KeepsUp, AQueueInsideTheServerShowsInTheFirstTokensPace) {
  OpenLoopSample s{.rate = 25, .cap = 0, .requests = 3000, .request_rps = 14.1, .e2e_p50_s = 82};
  EXPECT_EQ(HowBehind(s), Behind::kNo) << "the completions rule alone";
  s.first_token_pace = 14.0 / 25;
  EXPECT_EQ(HowBehind(s), Behind::kQueuedInTheServer);
  EXPECT_FALSE(KeepsUp(s));
  EXPECT_NEAR(BehindBy(s), (1 - 3 / std::sqrt(3000.0)) / (14.0 / 25) - 1, 1e-12);
  // A pace within the sends' spread of 1 keeps up, and an unknown one
  // (0) is not judged.
  s.first_token_pace = 1 - 0.9 * 3 / std::sqrt(3000.0);
  EXPECT_TRUE(KeepsUp(s));
  s.first_token_pace = 0;
  EXPECT_TRUE(KeepsUp(s));
  EXPECT_DOUBLE_EQ(KeepingUpPace(3000), 1 - 3 / std::sqrt(3000.0));
  EXPECT_DOUBLE_EQ(KeepingUpPace(16), 0.5) << "at most half";
}

}  // namespace
}  // namespace ppsearch::decide
