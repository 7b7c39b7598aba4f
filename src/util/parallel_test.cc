#include "util/parallel.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace ppsearch {
namespace {

TEST(ParallelFor, EveryIndexRunsOnceAndTheResultIsTheSameOnAnyNumberOfThreads) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<int> runs(1000, 0);
    std::vector<size_t> told;
    std::vector<int> told_of(runs.size(), 0);
    ParallelFor(
        runs.size(), threads, [&](size_t i) { runs[i] += static_cast<int>(i % 7) + 1; },
        [&](size_t i, size_t k) {
          told.push_back(k);
          ++told_of[i];
        });
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i], static_cast<int>(i % 7) + 1) << i;
    // Told once per item, in order, never two at a time.
    ASSERT_EQ(told.size(), runs.size()) << threads;
    for (size_t k = 0; k < told.size(); ++k) ASSERT_EQ(told[k], k + 1);
    for (size_t i = 0; i < told_of.size(); ++i) ASSERT_EQ(told_of[i], 1) << i;
  }
}

TEST(ParallelFor, UsesTheThreadsItIsGivenAndNothingForNoWork) {
  std::vector<std::thread::id> who(64);
  ParallelFor(who.size(), 2, [&](size_t i) {
    who[i] = std::this_thread::get_id();
    // Long enough that the second thread claims some items.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  bool other = false;
  for (const auto& id : who) other = other || id != std::this_thread::get_id();
  EXPECT_TRUE(other) << "every item ran on the calling thread";
  int calls = 0;
  ParallelFor(0, 4, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace ppsearch
