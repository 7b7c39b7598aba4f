#include "predict/search_points.h"

#include <gtest/gtest.h>

#include <cmath>

#include "stats/stats.h"
#include "testkit/example_search.h"

namespace ppsearch::predict {
using testkit::Example;
using testkit::ExampleInputs;
namespace {

// Default values; log-space variance sigma^2 on `p` alone.
cost::Calibration OneUncertain(cost::Param p, double sigma) {
  cost::Calibration c;
  c.log_covariance.assign(cost::kParamCount * cost::kParamCount, 0.0);
  c.log_covariance[cost::Index(p) * cost::kParamCount + cost::Index(p)] = sigma * sigma;
  return c;
}

// The example narrowed to PP4 at C = 8.
ExampleInputs Pp4AtC8() {
  ExampleInputs in = Example();
  in.spec.sweep.concurrency = {8};
  in.spec.sweep.layouts = {in.Layout(4)->layout};
  in.plan = plan::PlanSearch(in.spec, in.model, in.hardware);
  return in;
}

double TpsWithMoe(const ExampleInputs& in, double moe_gemm_eff) {
  cost::Calibration c;
  c.Set(cost::Param::kMoeGemm, moe_gemm_eff);
  return PredictSearch(in, c, SearchOptions::CentralOnly()).points[0].prediction.metrics.input_tps;
}

// One uncertain parameter whose effect on throughput is monotone (a faster
// expert GEMM): the interval is the prediction at that parameter's 10th and
// 90th quantiles, up to the 32 draws' resolution.
TEST(PredictSearch, OneMonotoneParameterGivesThePredictionAtItsQuantiles) {
  const ExampleInputs in = Pp4AtC8();
  const double sigma = 0.1;
  const cost::Calibration cal = OneUncertain(cost::Param::kMoeGemm, sigma);
  const double nominal = cal.Get(cost::Param::kMoeGemm);
  const SearchPrediction s = PredictSearch(in, cal, {});
  ASSERT_EQ(s.points.size(), 1u);
  ASSERT_EQ(s.intervals.size(), 1u);
  const uncertainty::PointUncertainty& u = s.intervals[0];
  const PointPrediction& central = s.points[0].prediction;
  ASSERT_EQ(u.members.size(), 32u);
  auto at_quantile = [&](double q) {
    return TpsWithMoe(in, nominal * std::exp(sigma * stats::NormalQuantile(q)));
  };
  // Throughput rises with the parameter, so its low end is the parameter's low quantile.
  EXPECT_LT(at_quantile(0.08), at_quantile(0.13));
  EXPECT_GE(u.input_tps.low, at_quantile(0.08));
  EXPECT_LE(u.input_tps.low, at_quantile(0.13));
  EXPECT_GE(u.input_tps.high, at_quantile(0.87));
  EXPECT_LE(u.input_tps.high, at_quantile(0.92));
  EXPECT_LT(u.input_tps.low, central.metrics.input_tps);
  EXPECT_GT(u.input_tps.high, central.metrics.input_tps);
  // A faster GEMM shortens the first token's wait.
  EXPECT_LT(u.ttft_p50_s.low, u.ttft_p50_s.high);
  EXPECT_EQ(u.central.input_tps, central.metrics.input_tps);
  // Only moe_gemm_eff is uncertain here, and memory does not depend on it:
  // a zero-width interval at the value.
  EXPECT_EQ(u.peak_gpu_mib.low, central.memory.peak_mib_max);
  EXPECT_EQ(u.peak_gpu_mib.high, central.memory.peak_mib_max);
}

// Every valid point once, in plan order; the cap check only where PP > 1;
// the summary ranks the layouts the headroom rule keeps.
TEST(PredictSearch, PointsCapCheckAndSummary) {
  const ExampleInputs& in = Example();
  SearchOptions options;
  options.cap_check = true;
  options.ensemble = {8, 3};
  const SearchPrediction s = PredictSearch(in, cost::Calibration(), options);
  ASSERT_EQ(s.points.size(), in.plan.layouts.size() * in.spec.sweep.concurrency.size());
  ASSERT_EQ(s.intervals.size(), s.points.size());
  for (size_t i = 0; i < s.points.size(); ++i) {
    const SearchPoint& p = s.points[i];
    EXPECT_EQ(p.plan, &in.plan.layouts[i / in.spec.sweep.concurrency.size()]);
    EXPECT_EQ(p.prediction.concurrency, in.spec.sweep.concurrency[i % 2]);
    EXPECT_EQ(p.cap1_input_tps > 0, p.plan->layout.pp > 1);
    EXPECT_EQ(s.intervals[i].layout, p.plan->layout);
    EXPECT_EQ(s.intervals[i].central.input_tps, p.prediction.metrics.input_tps);
  }
  EXPECT_FALSE(s.summary.ranking.empty());
  // No draws: central values only.
  const SearchPrediction none =
      PredictSearch(in, cost::Calibration(), SearchOptions::CentralOnly());
  EXPECT_TRUE(none.intervals.empty());
  EXPECT_EQ(none.IntervalOf(0), nullptr);
  EXPECT_EQ(none.points[3].prediction.metrics.input_tps, s.points[3].prediction.metrics.input_tps);
}

}  // namespace
}  // namespace ppsearch::predict

namespace ppsearch::predict {
namespace {

// The burst's share is what the point loses without it: the same point
// predicted on the profile with its [tensor_burst] taken out. PP1 (TP32,
// the slowest collectives, so the longest refill before each phase) leans
// on it more than PP8; a profile without a burst has no share.
TEST(TensorBurstShare, IsWhatThePointLosesWithoutTheBurstAndZeroWithoutOne) {
  const ExampleInputs& in = Example();
  ASSERT_GT(in.hardware.TensorBurstRatio(), 1) << "the example's rtx-6000d has a burst";
  PointRequest request;
  request.concurrency = 8;
  const cost::Calibration none;
  auto share_of = [&](const ExampleInputs& inputs, int pp) {
    const PointPrediction p = PredictSearchPoint(inputs, *inputs.Layout(pp), none, request);
    return TensorBurstShare(inputs, *inputs.Layout(pp), none, request,
                            stats::FiguresOf(p.metrics, p.layout.gpus()));
  };
  const double pp1 = share_of(in, 1), pp8 = share_of(in, 8);
  EXPECT_GT(pp1, 0.01);
  EXPECT_LT(pp1, 0.5);
  EXPECT_GT(pp8, 0);
  EXPECT_GT(pp1, pp8);

  ExampleInputs sustained = in;
  sustained.hardware.burst_window_ms = 0;
  sustained.hardware.burst_bf16_tflops = 0;
  const double without =
      PredictSearchPoint(sustained, *sustained.Layout(1), none, request).metrics.input_tps;
  const double with = PredictSearchPoint(in, *in.Layout(1), none, request).metrics.input_tps;
  EXPECT_NEAR(pp1, 1 - without / with, 1e-12);
  EXPECT_EQ(share_of(sustained, 1), 0);
  EXPECT_EQ(TensorBurstShare(in, *in.Layout(1), none, request, stats::Figures{}), 0)
      << "nothing predicted";

  // In an open loop the input TPS is the arrival rate's whether the burst is
  // there or not (their difference is noise, either sign); the share is of
  // TTFT p50, what the burst takes off the wait for the first token.
  ExampleInputs open = in;
  open.spec.workload.request_rate = 0.1;
  ExampleInputs open_sustained = sustained;
  open_sustained.spec.workload.request_rate = 0.1;
  const stats::Figures open_with =
      stats::FiguresOf(PredictSearchPoint(open, *open.Layout(1), none, request).metrics, 32);
  const stats::Figures open_without = stats::FiguresOf(
      PredictSearchPoint(open_sustained, *open_sustained.Layout(1), none, request).metrics, 32);
  EXPECT_NEAR(open_with.input_tps, open_without.input_tps, 0.02 * open_with.input_tps);
  const double open_share = share_of(open, 1);
  EXPECT_NEAR(open_share, 1 - open_with.ttft_p50_s / open_without.ttft_p50_s, 1e-12);
  EXPECT_GT(open_share, 0.01);
  EXPECT_STREQ(TensorBurstFigure(false), "input_tps");
  EXPECT_STREQ(TensorBurstFigure(true), "ttft_p50_s");
}

}  // namespace
}  // namespace ppsearch::predict
