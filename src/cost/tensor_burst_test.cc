// The burst window of one compute phase, by hand.

#include "cost/tensor_burst.h"

#include <gtest/gtest.h>

namespace ppsearch::cost {
namespace {

TEST(BurstPhaseNs, WindowCoversTheFirstKernelsThenSplitsOne) {
  // Window 3 ns. Kernel 0: 2 ns at the burst rate, 1 ns of window left.
  // Kernel 1: burst 2 ns, so half its work fits: 1 + 0.5 x 4 = 3 ns.
  // Kernel 2: sustained, 6 ns. Sum 11 ns against 14 ns sustained.
  const std::vector<double> out = BurstPhaseNs({4, 4, 6}, {2, 2, 3}, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0], 2);
  EXPECT_DOUBLE_EQ(out[1], 3);
  EXPECT_DOUBLE_EQ(out[2], 6);
}

TEST(BurstPhaseNs, NoWindowIsTheSustainedTime) {
  const std::vector<double> out = BurstPhaseNs({4, 5}, {2, 2.5}, 0);
  EXPECT_DOUBLE_EQ(out[0], 4);
  EXPECT_DOUBLE_EQ(out[1], 5);
}

TEST(BurstPhaseNs, AWindowLongerThanThePhaseRunsItAllAtTheBurstRate) {
  const std::vector<double> out = BurstPhaseNs({4, 5}, {2, 2.5}, 100);
  EXPECT_DOUBLE_EQ(out[0] + out[1], 4.5);
}

TEST(BurstPhaseNs, AMemoryBoundKernelSpendsWindowWithoutGain) {
  // Kernel 0 is as fast at either rate (bandwidth-bound): it takes 3 of the
  // 4 ns window; kernel 1 gets 1 ns of burst: 1 + (1 - 1/2) x 4 = 3 ns.
  const std::vector<double> out = BurstPhaseNs({3, 4}, {3, 2}, 4);
  EXPECT_DOUBLE_EQ(out[0], 3);
  EXPECT_DOUBLE_EQ(out[1], 3);
}

TEST(BurstWindowAfterIdle, RefillsAsFastAsItDrainsUpToTheWindow) {
  EXPECT_DOUBLE_EQ(BurstWindowAfterIdle(1.5e6, 2.5e6), 1.5e6);
  EXPECT_DOUBLE_EQ(BurstWindowAfterIdle(7e6, 2.5e6), 2.5e6);
  EXPECT_DOUBLE_EQ(BurstWindowAfterIdle(0, 2.5e6), 0);
  EXPECT_DOUBLE_EQ(BurstWindowAfterIdle(7e6, 0), 0);
}

}  // namespace
}  // namespace ppsearch::cost
