#include "uncertainty/propagate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "uncertainty/uncertainty_testing.h"

namespace ppsearch::uncertainty {
namespace {

// A stand-in predictor: throughput proportional to the expert GEMM rate,
// TTFT inversely, memory fixed, scaled per job.
MemberValues Toy(size_t job, const cost::Calibration& c) {
  const double moe = c.Get(cost::Param::kMoeGemm);
  MemberValues v;
  v.input_tps = 1000.0 * moe * static_cast<double>(job + 1);
  v.ttft_p50_s = 10.0 / moe;
  v.ttft_p95_s = 12.0 / moe;
  v.peak_gpu_mib = 70000;
  return v;
}

// Each member's value lands in its member's slot, the interval is the
// 10th-90th percentile of the members, and the central value is carried.
TEST(PropagateTest, IntervalsAreThePercentilesOfTheMembersValues) {
  const Ensemble e =
      DrawEnsemble(OneUncertain(cost::Param::kMoeGemm, 0.1), ExampleHardware(), {32, 3});
  MemberValues central;
  central.input_tps = 1;
  central.ttft_p50_s = 2;
  central.ttft_p95_s = 3;
  central.peak_gpu_mib = 4;
  const std::vector<PointJob> jobs = {{{8, 4, 4, {}}, 8, central}};
  const std::vector<PointUncertainty> u = Propagate(jobs, e, Toy);
  ASSERT_EQ(u.size(), 1u);
  ASSERT_EQ(u[0].members.size(), 32u);
  std::vector<double> tps;
  for (size_t m = 0; m < 32; ++m) {
    EXPECT_EQ(u[0].members[m].input_tps, Toy(0, e.members[m]).input_tps);
    tps.push_back(u[0].members[m].input_tps);
  }
  EXPECT_EQ(u[0].input_tps.low, IntervalOf(tps).low);
  EXPECT_EQ(u[0].input_tps.high, IntervalOf(tps).high);
  EXPECT_LT(u[0].input_tps.low, u[0].input_tps.high);
  EXPECT_EQ(u[0].peak_gpu_mib.low, 70000);
  EXPECT_EQ(u[0].peak_gpu_mib.high, 70000);
  EXPECT_EQ(u[0].central.ttft_p50_s, 2);
  EXPECT_EQ(u[0].layout.pp, 8);
  EXPECT_EQ(u[0].concurrency, 8);
}

TEST(PropagateTest, ResultsDoNotDependOnTheThreadCount) {
  const Ensemble e = DrawEnsemble(cost::Calibration(), ExampleHardware(), {5, 2});
  const std::vector<PointJob> jobs = {{{8, 4, 4, {}}, 8, {}}, {{2, 16, 4, {}}, 16, {}}};
  const auto one = Propagate(jobs, e, Toy, 1);
  const auto three = Propagate(jobs, e, Toy, 3);
  ASSERT_EQ(one.size(), 2u);
  for (size_t j = 0; j < one.size(); ++j) {
    EXPECT_EQ(one[j].layout, three[j].layout);
    EXPECT_EQ(one[j].concurrency, three[j].concurrency);
    ASSERT_EQ(one[j].members.size(), 5u);
    for (size_t m = 0; m < 5; ++m) {
      EXPECT_EQ(one[j].members[m].input_tps, three[j].members[m].input_tps);
      EXPECT_EQ(one[j].members[m].ttft_p95_s, three[j].members[m].ttft_p95_s);
    }
    EXPECT_EQ(one[j].input_tps.low, three[j].input_tps.low);
  }
  EXPECT_EQ(one[1].concurrency, 16);
  EXPECT_EQ(one[0].layout.pp, 8);
}

TEST(PropagateTest, IntervalIsThe10thTo90thPercentile) {
  std::vector<double> v;
  for (int i = 0; i <= 10; ++i) v.push_back(i * 10.0);  // 0..100
  const Interval i = IntervalOf(v);
  EXPECT_DOUBLE_EQ(i.low, 10);
  EXPECT_DOUBLE_EQ(i.high, 90);
  EXPECT_TRUE(i.Overlaps({90, 120}));
  EXPECT_FALSE(i.Overlaps({90.5, 120}));
  EXPECT_EQ(IntervalOf({}).low, 0);
}

}  // namespace
}  // namespace ppsearch::uncertainty
