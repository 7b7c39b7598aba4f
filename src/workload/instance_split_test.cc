// A router's split of a load over instances: even, the remainder to the first.

#include "workload/instance_split.h"

#include <gtest/gtest.h>

#include <numeric>

namespace ppsearch::workload {
namespace {

TEST(SplitEvenly, EvenOddAndSmallerThanTheParts) {
  EXPECT_EQ(SplitEvenly(8, 2), (std::vector<int>{4, 4}));
  EXPECT_EQ(SplitEvenly(9, 2), (std::vector<int>{5, 4}));
  EXPECT_EQ(SplitEvenly(10, 4), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(SplitEvenly(1, 2), (std::vector<int>{1, 0}));
  EXPECT_EQ(SplitEvenly(7, 1), (std::vector<int>{7}));
  for (int total = 0; total < 40; ++total)
    for (int parts = 1; parts < 6; ++parts) {
      const std::vector<int> split = SplitEvenly(total, parts);
      EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0), total);
      EXPECT_LE(split.front() - split.back(), 1);
    }
}

TEST(SplitInProportion, FollowsTheWeightsAndKeepsTheTotal) {
  EXPECT_EQ(SplitInProportion(10, {2, 1}), (std::vector<int>{7, 3}));
  EXPECT_EQ(SplitInProportion(5, {1, 0}), (std::vector<int>{5, 0}));
  EXPECT_EQ(SplitInProportion(64, {4, 4}), (std::vector<int>{32, 32}));
  EXPECT_EQ(SplitInProportion(7, {0, 0}), (std::vector<int>{0, 0}));
  EXPECT_EQ(SplitInProportion(11, {3, 3, 2}), (std::vector<int>{5, 4, 2}));
}

}  // namespace
}  // namespace ppsearch::workload
