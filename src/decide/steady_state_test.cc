#include "decide/steady_state.h"

#include <gtest/gtest.h>

namespace ppsearch::decide {
namespace {

TEST(SteadyState, FourWavesOrMoreAreSteady) {
  EXPECT_EQ(NotSteady(8, 40), "");   // 5 waves
  EXPECT_EQ(NotSteady(10, 40), "");  // exactly 4
  EXPECT_EQ(NotSteady(16, 40), "40 requests are 2.5 waves of 16, fewer than 4");
  EXPECT_EQ(NotSteady(64, 40), "40 requests are 0.6 waves of 64, fewer than 4");
  EXPECT_EQ(NotSteady(0, 40), "");  // an open loop without a cap
}

// An open loop's wave is what it holds in flight once settled: 32
// requests/s for 51.72 s each is 1,655 (Little's law), so 1,000 requests
// are 0.6 of it; at most the cap, so under a cap of 64 they are 15.6.
TEST(SteadyState, AnOpenLoopsWaveIsItsRateTimesItsEndToEndTimeAtMostTheCap) {
  EXPECT_EQ(NotSteadyOpen(32, 0, 1000, 51.72),
            "1,000 requests are 0.6 waves of the 1,655 in flight at 32.0 requests/s for an "
            "end-to-end p50 of 51.72 s, fewer than 4");
  EXPECT_EQ(NotSteadyOpen(32, 64, 1000, 51.72), "");
  EXPECT_EQ(NotSteadyOpen(32, 512, 1000, 51.72),
            "1,000 requests are 2.0 waves of the 512 in flight at 32.0 requests/s for an "
            "end-to-end p50 of 51.72 s (the cap of 512), fewer than 4");
  EXPECT_EQ(NotSteadyOpen(1, 0, 1000, 51.72), "") << "19.3 waves of 52";
  EXPECT_EQ(NotSteadyOpen(32, 0, 1000, 0), "") << "no end-to-end time: nothing to judge";
  // Requests that never overlap are each a wave: one request is one.
  EXPECT_EQ(NotSteadyOpen(0.001, 0, 1, 5.8),
            "1 requests are 1.0 waves of the 1 in flight at 0.001 requests/s for an end-to-end "
            "p50 of 5.80 s, fewer than 4");
  EXPECT_EQ(NotSteadyOpen(0.001, 0, 4, 5.8), "");
  EXPECT_EQ(NotSteadyOpen(1e6, 0, 3, 1.8),
            "3 requests are 0.000 waves of the 1,800,000 in flight at 1,000,000.0 requests/s for "
            "an end-to-end p50 of 1.80 s, fewer than 4");
}

TEST(SteadyState, TheLineNamesEachShortSampleOrSaysAllHoldIt) {
  const std::vector<LoopSample> k3 = {{"C=8", 8, 40}, {"C=16", 16, 40}};
  EXPECT_EQ(ShortOfSteadyState(k3), "C=16: 40 requests are 2.5 waves of 16, fewer than 4");
  EXPECT_EQ(SteadyStateLine(k3, "load point"),
            "steady state: " + SteadyRule() +
                "; short of it at C=16: 40 requests are 2.5 waves of 16, fewer than 4");
  EXPECT_EQ(SteadyStateLine({{"c64", 64, 512}, {"c4", 4, 16}}, "configuration"),
            "steady state: " + SteadyRule() + "; every configuration holds it");
  EXPECT_EQ(ShortOfSteadyState({{"c64", 64, 128}, {"c4", 4, 8}}),
            "c64: 128 requests are 2.0 waves of 64, fewer than 4; c4: 8 requests are 2.0 waves "
            "of 4, fewer than 4");
  // Open loops are not judged: nothing to state.
  EXPECT_EQ(SteadyStateLine({{"2.00 req/s", 0, 10}}, "load point"), "");
}

}  // namespace
}  // namespace ppsearch::decide
