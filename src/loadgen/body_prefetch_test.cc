#include "loadgen/body_prefetch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

namespace ppsearch::loadgen {
namespace {

std::vector<LoopRequest> Requests(int n) {
  std::vector<LoopRequest> r(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) r[static_cast<size_t>(i)] = {i, 10 * i, -1};
  return r;
}

TEST(BodyPrefetchTest, BodiesComeInRequestOrderBuiltOnAnotherThread) {
  const auto requests = Requests(20);
  std::atomic<int> on_caller{0};
  const auto caller = std::this_thread::get_id();
  BodyPrefetch bodies(
      [&](const LoopRequest& r) {
        if (std::this_thread::get_id() == caller) ++on_caller;
        return "body " + std::to_string(r.id);
      },
      requests, 4, 1 << 20);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(bodies.TakeNext(), "body " + std::to_string(i));
  EXPECT_EQ(on_caller.load(), 0);
  EXPECT_EQ(bodies.TakeNext(), "") << "past the end";
}

TEST(BodyPrefetchTest, BuildsNoMoreThanAheadBeyondWhatWasTaken) {
  const auto requests = Requests(50);
  std::atomic<int> built{0};
  BodyPrefetch bodies(
      [&](const LoopRequest&) {
        ++built;
        return std::string(10, 'x');
      },
      requests, 5, 1 << 20);
  bodies.WaitFilled();
  EXPECT_EQ(built.load(), 5);
  bodies.TakeNext();
  bodies.TakeNext();
  // The builder refills to 5 ahead: 7 in all, and stays there.
  for (int i = 0; i < 200 && built.load() < 7; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(built.load(), 7);
}

TEST(BodyPrefetchTest, TheByteBudgetLimitsHowManyWaitButOneAlwaysDoes) {
  const auto requests = Requests(10);
  std::atomic<int> built{0};
  BodyPrefetch bodies(
      [&](const LoopRequest&) {
        ++built;
        return std::string(1000, 'x');
      },
      requests, 8, 2500);
  bodies.WaitFilled();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(built.load(), 3) << "stops once 2,500 bytes wait";
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bodies.TakeNext().size(), 1000u);
}

TEST(BodyPrefetchTest, DestroyingItEarlyStopsTheBuilder) {
  const auto requests = Requests(1000);
  std::atomic<int> built{0};
  {
    BodyPrefetch bodies(
        [&](const LoopRequest&) {
          ++built;
          return std::string("b");
        },
        requests, 2, 1 << 20);
    bodies.TakeNext();
  }
  EXPECT_LE(built.load(), 4);
}

}  // namespace
}  // namespace ppsearch::loadgen
