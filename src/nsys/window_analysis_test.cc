#include "nsys/window_analysis.h"

#include <gtest/gtest.h>

#include <random>

#include "nsys/intervals.h"

namespace ppsearch::nsys {
namespace {

Kernel Compute(int64_t s, int64_t e) { return {{s, e}, std::nullopt}; }
Kernel AllReduce(int64_t s, int64_t e) { return {{s, e}, Collective::kAllReduce}; }

WindowBreakdown One(Interval window, std::vector<Kernel> kernels) {
  std::sort(kernels.begin(), kernels.end(),
            [](const Kernel& a, const Kernel& b) { return a.span.start_ns < b.span.start_ns; });
  GpuWindowAnalyzer a({window});
  for (const auto& k : kernels) a.AddKernel(k);
  return a.Finish().front();
}

TEST(UnionBuilderTest, MergesOverlappingAndTouchingIntervals) {
  UnionBuilder u;
  EXPECT_FALSE(u.Add({0, 5}));
  EXPECT_FALSE(u.Add({5, 9}));
  EXPECT_FALSE(u.Add({2, 4}));
  auto first = u.Add({12, 20});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->start_ns, 0);
  EXPECT_EQ(first->end_ns, 9);
  auto last = u.Finish();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->start_ns, 12);
  EXPECT_EQ(last->end_ns, 20);
  EXPECT_FALSE(u.Finish());
}

TEST(WindowSweepTest, NestedWindowsEachGetTheirOverlap) {
  const std::vector<Interval> windows = {{0, 100}, {10, 20}, {50, 200}};
  WindowSweep sweep(windows);
  std::vector<int64_t> got(3, 0);
  auto add = [&got](size_t w, int64_t n) { got[w] += n; };
  sweep.Add({5, 15}, add);
  sweep.Add({90, 150}, add);
  EXPECT_EQ(got, (std::vector<int64_t>{10 + 10, 5, 60}));
}

TEST(GpuWindowAnalyzerTest, NoOverlap) {
  const WindowBreakdown b = One({0, 1000}, {Compute(0, 400), AllReduce(500, 800)});
  EXPECT_EQ(b.exposed_ns, 300);
  EXPECT_EQ(b.overlapped_ns, 0);
  EXPECT_EQ(b.compute_only_ns, 400);
  EXPECT_EQ(b.idle_ns, 300);
  EXPECT_DOUBLE_EQ(b.Share(b.exposed_ns), 0.3);
  EXPECT_EQ(b.calls[static_cast<int>(Collective::kAllReduce)], 1);
  EXPECT_EQ(b.time_ns[static_cast<int>(Collective::kAllReduce)], 300);
}

// Compute kernels add their time, clipped to the window, to their class;
// communication kernels to no class.
TEST(GpuWindowAnalyzerTest, ComputeTimeByClassIsClippedToTheWindow) {
  Kernel gemm = Compute(-100, 300);  // 300 ns inside
  gemm.compute_class = ComputeClass::kGemm;
  Kernel moe = Compute(300, 500);
  moe.compute_class = ComputeClass::kMoe;
  Kernel attention = Compute(400, 450);  // concurrent with the MoE kernel: both count
  attention.compute_class = ComputeClass::kAttention;
  Kernel norm = Compute(900, 1200);  // 100 ns inside, class "other"
  const WindowBreakdown b = One({0, 1000}, {gemm, moe, attention, AllReduce(500, 800), norm});
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kGemm)], 300);
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kMoe)], 200);
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kAttention)], 50);
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kOther)], 100);
  EXPECT_EQ(b.compute_only_ns, 600);  // the union: 0-500 and 900-1000
}

TEST(GpuWindowAnalyzerTest, FullOverlap) {
  const WindowBreakdown b = One({0, 1000}, {Compute(0, 1000), AllReduce(200, 600)});
  EXPECT_EQ(b.exposed_ns, 0);
  EXPECT_EQ(b.overlapped_ns, 400);
  EXPECT_EQ(b.compute_only_ns, 600);
  EXPECT_EQ(b.idle_ns, 0);
}

TEST(GpuWindowAnalyzerTest, PartialOverlapAcrossStreams) {
  // Compute on two streams covers [0, 500), communication on two covers [400, 900).
  const WindowBreakdown b = One({0, 1000}, {Compute(0, 300),
                                            Compute(250, 500),
                                            AllReduce(400, 700),
                                            {{650, 900}, Collective::kAllGather}});
  EXPECT_EQ(b.exposed_ns, 400);
  EXPECT_EQ(b.overlapped_ns, 100);
  EXPECT_EQ(b.compute_only_ns, 400);
  EXPECT_EQ(b.idle_ns, 100);
  EXPECT_EQ(b.kernels, 4);
  EXPECT_EQ(b.time_ns[static_cast<int>(Collective::kAllGather)], 250);
}

TEST(GpuWindowAnalyzerTest, KernelsStraddlingTheWindowEdgesAreClipped) {
  const WindowBreakdown b = One({100, 200}, {Compute(50, 150), AllReduce(180, 260)});
  EXPECT_EQ(b.compute_only_ns, 50);
  EXPECT_EQ(b.exposed_ns, 20);
  EXPECT_EQ(b.idle_ns, 30);
  EXPECT_EQ(b.calls[static_cast<int>(Collective::kAllReduce)], 1);
  EXPECT_EQ(b.time_ns[static_cast<int>(Collective::kAllReduce)], 20);
}

TEST(GpuWindowAnalyzerTest, EmptyWindowIsAllIdle) {
  const WindowBreakdown b = One({5000, 6000}, {Compute(0, 400), AllReduce(7000, 8000)});
  EXPECT_EQ(b.idle_ns, 1000);
  EXPECT_EQ(b.kernels, 0);
  EXPECT_DOUBLE_EQ(b.Share(b.idle_ns), 1.0);
}

TEST(ForwardWindowSplitterTest, IdleGapsSplitForwardPasses) {
  ForwardWindowSplitter s(100);
  EXPECT_FALSE(s.AddKernel(Compute(0, 50)));
  EXPECT_FALSE(s.AddKernel(AllReduce(60, 90)));  // gap 10 < 100: same pass
  auto first = s.AddKernel(Compute(300, 400));   // gap 210: a new pass
  ASSERT_TRUE(first);
  EXPECT_EQ(first->window.start_ns, 0);
  EXPECT_EQ(first->window.end_ns, 90);
  EXPECT_EQ(first->exposed_ns, 30);
  EXPECT_EQ(first->idle_ns, 10);
  auto last = s.Finish();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->compute_only_ns, 100);
}

// Every window of random kernels on several streams, against a count of
// every nanosecond: the parts match and add up to the window.
TEST(GpuWindowAnalyzerPropertyTest, PartsMatchBruteForceAndSumToOne) {
  std::mt19937_64 rng(20240602);
  std::uniform_int_distribution<int64_t> at(0, 1500), len(1, 200), kind(0, 3);
  for (int round = 0; round < 150; ++round) {
    std::vector<Kernel> kernels;
    const int n = static_cast<int>(len(rng) % 40);
    for (int i = 0; i < n; ++i) {
      const int64_t s = at(rng);
      const int64_t k = kind(rng);
      kernels.push_back({{s, s + len(rng)},
                         k == 0   ? std::optional<Collective>(Collective::kAllReduce)
                         : k == 1 ? std::optional<Collective>(Collective::kSendRecv)
                                  : std::nullopt});
    }
    std::sort(kernels.begin(), kernels.end(),
              [](const Kernel& a, const Kernel& b) { return a.span.start_ns < b.span.start_ns; });
    std::vector<Interval> windows;
    for (int w = 0; w < 5; ++w) {
      const int64_t s = at(rng);
      windows.push_back({s, s + 1 + len(rng) * 3});
    }
    std::sort(windows.begin(), windows.end(),
              [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
    GpuWindowAnalyzer a(windows);
    for (const auto& k : kernels) a.AddKernel(k);
    const std::vector<WindowBreakdown> got = a.Finish();
    ASSERT_EQ(got.size(), windows.size());
    for (size_t w = 0; w < windows.size(); ++w) {
      int64_t exposed = 0, overlapped = 0, compute_only = 0, idle = 0;
      for (int64_t t = windows[w].start_ns; t < windows[w].end_ns; ++t) {
        bool comm = false, compute = false;
        for (const auto& k : kernels)
          if (k.span.start_ns <= t && t < k.span.end_ns) (k.collective ? comm : compute) = true;
        (comm && compute ? overlapped : comm ? exposed : compute ? compute_only : idle) += 1;
      }
      const WindowBreakdown& b = got[w];
      EXPECT_EQ(b.exposed_ns, exposed) << "round " << round << " window " << w;
      EXPECT_EQ(b.overlapped_ns, overlapped) << "round " << round << " window " << w;
      EXPECT_EQ(b.compute_only_ns, compute_only) << "round " << round << " window " << w;
      EXPECT_EQ(b.idle_ns, idle) << "round " << round << " window " << w;
      EXPECT_NEAR(b.Share(b.exposed_ns) + b.Share(b.overlapped_ns) + b.Share(b.compute_only_ns) +
                      b.Share(b.idle_ns),
                  1.0, 1e-12);
    }
  }
}

}  // namespace
}  // namespace ppsearch::nsys
