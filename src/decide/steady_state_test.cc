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
