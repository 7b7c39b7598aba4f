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

}  // namespace
}  // namespace ppsearch::decide
