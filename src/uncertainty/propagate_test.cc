#include "uncertainty/propagate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "stats/stats.h"
#include "uncertainty/uncertainty_test_util.h"

namespace ppsearch::uncertainty {
namespace {

predict::PointOptions At(int concurrency) {
  predict::PointOptions po;
  po.concurrency = concurrency;
  po.seed = Example().spec.workload.seed;
  return po;
}

double TpsWithMoe(const plan::LayoutPlan& lp, double moe_gemm_eff) {
  const ExampleInputs& in = Example();
  cost::Calibration c;
  c.Set(cost::Param::kMoeGemm, moe_gemm_eff);
  return predict::PredictPoint(lp, in.spec, in.model, in.hw, c, At(8)).metrics.input_tps;
}

// One uncertain parameter whose effect on throughput is monotone (a faster
// expert GEMM): the interval is the prediction at that parameter's 10th and
// 90th quantiles, up to the 32 draws' resolution.
TEST(PropagateTest, OneMonotoneParameterGivesThePredictionAtItsQuantiles) {
  const ExampleInputs& in = Example();
  const plan::LayoutPlan& lp = *in.Layout(4);
  const double sigma = 0.1;
  const cost::Calibration cal = OneUncertain(cost::Param::kMoeGemm, sigma);
  const double nominal = cal.Get(cost::Param::kMoeGemm);
  const predict::PointPrediction central =
      predict::PredictPoint(lp, in.spec, in.model, in.hw, cal, At(8));
  const std::vector<PointUncertainty> u =
      Propagate({{&lp, At(8), ValuesOf(central)}}, {&in.spec, &in.model, &in.hw},
                DrawEnsemble(cal, in.hw, {}));
  ASSERT_EQ(u.size(), 1u);
  ASSERT_EQ(u[0].members.size(), 32u);
  auto at_quantile = [&](double q) {
    return TpsWithMoe(lp, nominal * std::exp(sigma * stats::NormalQuantile(q)));
  };
  // Throughput rises with the parameter, so its low end is the parameter's low quantile.
  EXPECT_LT(at_quantile(0.08), at_quantile(0.13));
  EXPECT_GE(u[0].input_tps.low, at_quantile(0.08));
  EXPECT_LE(u[0].input_tps.low, at_quantile(0.13));
  EXPECT_GE(u[0].input_tps.high, at_quantile(0.87));
  EXPECT_LE(u[0].input_tps.high, at_quantile(0.92));
  EXPECT_LT(u[0].input_tps.low, central.metrics.input_tps);
  EXPECT_GT(u[0].input_tps.high, central.metrics.input_tps);
  // A faster GEMM shortens the first token's wait.
  EXPECT_LT(u[0].ttft_p50_s.low, u[0].ttft_p50_s.high);
  EXPECT_EQ(u[0].central.input_tps, central.metrics.input_tps);
  // Only moe_gemm_eff is uncertain here, and memory does not depend on it:
  // a zero-width interval at the value.
  EXPECT_EQ(u[0].peak_gpu_mib.low, central.memory.peak_mib_max);
  EXPECT_EQ(u[0].peak_gpu_mib.high, central.memory.peak_mib_max);
}

TEST(PropagateTest, ResultsDoNotDependOnTheThreadCount) {
  const ExampleInputs& in = Example();
  const Ensemble e = DrawEnsemble(cost::Calibration(), in.hw, {5, 2});
  const std::vector<PointJob> jobs = {{in.Layout(8), At(8), {}}, {in.Layout(2), At(16), {}}};
  const auto one = Propagate(jobs, {&in.spec, &in.model, &in.hw}, e, 1);
  const auto three = Propagate(jobs, {&in.spec, &in.model, &in.hw}, e, 3);
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
