#include "uncertainty/model_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ppsearch::uncertainty {
namespace {

Site At(int pp, int tp, const std::string& hw = "h20", int64_t tokens = 131072) {
  Site s;
  s.layout.pp = pp;
  s.layout.tp = tp;
  s.layout.ep = 1;
  s.gpus_per_node = 8;
  s.hardware = hw;
  s.input_tokens = tokens;
  return s;
}

TEST(ModelErrorTest, DistancesAreLogRatiosOfDepthNodesAndLength) {
  // PP8/TP32 on 8-GPU nodes (4 nodes per TP group) against PP1/TP8 (1 node),
  // 16K against 128K tokens, another profile.
  const Extrapolation d = Distance(At(8, 32, "rtx-6000d", 16384), At(1, 8));
  EXPECT_NEAR(d.pp_depth, std::log(8.0), 1e-12);
  EXPECT_NEAR(d.node_span, std::log(4.0), 1e-12);
  EXPECT_NEAR(d.input_length, std::log(8.0), 1e-12);
  EXPECT_EQ(d.hardware, 1.0);
  EXPECT_TRUE(Distance(At(2, 4), At(2, 4)).Zero());
  // TP4 and TP8 both fit in one node: no node-span distance.
  EXPECT_EQ(Distance(At(1, 4), At(1, 8)).node_span, 0.0);
}

TEST(ModelErrorTest, DecodeDistancesAreLogRatiosOfConcurrencyAndOutputLength) {
  // Concurrency 4 with 2,000 output tokens against a fit at concurrency 9
  // with 1,000: ln(9/4), ln 2; a prefill-only site (one output token)
  // against a decode one is ln 1000 away.
  Site a = At(1, 2);
  a.concurrency = 4;
  a.output_tokens = 2000;
  Site b = At(1, 4);
  b.concurrency = 9;
  b.output_tokens = 1000;
  const Extrapolation d = Distance(a, b);
  EXPECT_NEAR(d.concurrency, std::log(9.0 / 4), 1e-12);
  EXPECT_NEAR(d.output_length, std::log(2.0), 1e-12);
  Site prefill = b;
  prefill.output_tokens = 1;
  EXPECT_NEAR(Distance(prefill, b).output_length, std::log(1000.0), 1e-12);
  // Between one-token sites concurrency is only the queue: no distance.
  Site prefill4 = a;
  prefill4.output_tokens = 1;
  EXPECT_EQ(Distance(prefill, prefill4).concurrency, 0.0);
  // Unknown (0) concurrency or output length: no distance.
  Site unknown = b;
  unknown.concurrency = 0;
  unknown.output_tokens = 0;
  EXPECT_EQ(Distance(unknown, a).concurrency, 0.0);
  EXPECT_EQ(Distance(unknown, a).output_length, 0.0);
}

TEST(ModelErrorTest, SigmaAddsTheTermsInQuadrature) {
  cost::ModelFormScales s;
  s.s0 = 0.03;
  s.pp_depth = 0.05;
  s.hardware = 0.04;
  Extrapolation d;
  d.pp_depth = 2;
  d.hardware = 1;
  // sqrt(0.03^2 + (0.05*2)^2 + 0.04^2) = sqrt(0.0009 + 0.01 + 0.0016) = sqrt(0.0125)
  EXPECT_NEAR(ModelFormSigma(s, d), std::sqrt(0.0125), 1e-12);
  EXPECT_NEAR(ModelFormSigma(s, {}), 0.03, 1e-12);
}

TEST(ModelErrorTest, WidenAddsLogVariancesOnEachSide) {
  const SplitInterval w = Widen(100, {90, 120}, 0.1);
  const double m = kZ90 * 0.1;
  EXPECT_NEAR(w.model_form_rel, m, 1e-12);
  EXPECT_NEAR(w.total.low, 100 * std::exp(-std::hypot(std::log(100.0 / 90), m)), 1e-9);
  EXPECT_NEAR(w.total.high, 100 * std::exp(std::hypot(std::log(1.2), m)), 1e-9);
  EXPECT_EQ(w.parameter.low, 90);
  // A point with no parameter spread still gets the model form's band.
  const SplitInterval z = Widen(100, {100, 100}, 0.1);
  EXPECT_NEAR(z.total.low, 100 * std::exp(-m), 1e-9);
  EXPECT_NEAR(z.total.high, 100 * std::exp(m), 1e-9);
  EXPECT_NEAR(ModelFormShare(z, 100), 1.0, 1e-12);
}

// What compares two points of one search keeps the distances that differ
// between them; the compared intervals are widened by that sigma alone.
TEST(ModelErrorTest, ComparedIntervalsKeepOnlyTheDistancesThatTellLayoutsApart) {
  Extrapolation d;
  d.pp_depth = 1;
  d.node_span = 2;
  d.concurrency = 3;
  d.input_length = d.hardware = d.output_length = d.uncalibrated = 1;
  const Extrapolation c = Compared(d);
  EXPECT_EQ(c.pp_depth, 1);
  EXPECT_EQ(c.node_span, 2);
  EXPECT_EQ(c.concurrency, 3);
  EXPECT_EQ(c.input_length + c.hardware + c.output_length + c.uncalibrated, 0);
  PointUncertainty u;
  u.central.input_tps = 100;
  u.parameter.input_tps = {100, 100};
  ApplyModelForm(u, 0.5, 0.1);
  EXPECT_NEAR(u.input_tps.high, 100 * std::exp(kZ90 * 0.5), 1e-9);
  EXPECT_NEAR(u.compared_input_tps.high, 100 * std::exp(kZ90 * 0.1), 1e-9);
  EXPECT_NEAR(u.compared_input_tps.low, 100 * std::exp(-kZ90 * 0.1), 1e-9);
  EXPECT_NEAR(u.compared_model_form_rel, kZ90 * 0.1, 1e-12);
}

TEST(ModelErrorTest, CalibrationDistanceIsFromTheNearestFittedLayout) {
  cost::Calibration c;
  c.fitted_layouts = {"PP1/TP8/EP1", "PP4/TP8/EP1"};
  c.fitted_hardware = "h20";
  c.fitted_gpus_per_node = 8;
  c.fitted_input_tokens = 131072;
  cost::ModelFormScales s;
  s.s0 = s.pp_depth = s.node_span = s.input_length = s.hardware = 0.05;
  EXPECT_NEAR(FromCalibration(At(8, 8), c, s).pp_depth, std::log(2.0), 1e-12);
  EXPECT_EQ(FromCalibration(At(8, 8), c, s).uncalibrated, 0.0);
  // The defaults name no fitted layout: nothing was measured, the
  // uncalibrated distance alone.
  const Extrapolation none = FromCalibration(At(8, 8), cost::Calibration(), s);
  EXPECT_EQ(none.uncalibrated, 1.0);
  EXPECT_EQ(none.pp_depth + none.node_span + none.input_length + none.hardware + none.concurrency +
                none.output_length,
            0.0);
  s.uncalibrated = 0.2;
  EXPECT_NEAR(ModelFormSigma(s, none), std::hypot(0.05, 0.2), 1e-12);
  // A decode fit at concurrency 1 and 16: a decode point at 8 is ln 2 from
  // the nearer one.
  s.SetPerUnit({0.05, 0.05, 0.05, 0.05, 0.05, 0.05});
  c.fitted_concurrency = {1, 16};
  c.fitted_output_tokens = 1024;
  Site at8 = At(4, 8);
  at8.concurrency = 8;
  at8.output_tokens = 1024;
  EXPECT_NEAR(FromCalibration(at8, c, s).concurrency, std::log(2.0), 1e-12);
}

TEST(ModelErrorTest, NoMissesLeaveTheFloors) {
  const ModelFormFit f = FitModelForm({});
  EXPECT_DOUBLE_EQ(f.scales.s0, 0.02);
  EXPECT_DOUBLE_EQ(f.scales.pp_depth, 0.02);
  EXPECT_FALSE(f.identified[0]);
}

TEST(ModelErrorTest, FitRecoversKnownScales) {
  // Misses drawn with s0 = 0.03 and 0.08 per unit of PP depth.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0, 1);
  std::vector<Miss> misses;
  for (int i = 0; i < 400; ++i) {
    Miss m;
    m.d.pp_depth = (i % 4) * std::log(2.0);
    m.log_error = z(rng) * std::hypot(0.03, 0.08 * m.d.pp_depth);
    misses.push_back(m);
  }
  const ModelFormFit f = FitModelForm(misses);
  EXPECT_NEAR(f.scales.s0, 0.03, 0.005);
  EXPECT_NEAR(f.scales.pp_depth, 0.08, 0.01);
  EXPECT_TRUE(f.identified[0]);
  EXPECT_FALSE(f.identified[3]);
  // Unidentified: the largest identified per-unit scale.
  EXPECT_DOUBLE_EQ(f.scales.hardware, f.scales.pp_depth);
}

TEST(ModelErrorTest, FitWithoutLeavesTheGroupOut) {
  std::vector<Miss> misses = {{0.5, {}, "a"}, {0.01, {}, "b"}, {-0.01, {}, "b"}};
  EXPECT_LT(FitWithout(misses, "a").s0, 0.03);
  EXPECT_GT(FitWithout(misses, "b").s0, 0.3);
}

}  // namespace
}  // namespace ppsearch::uncertainty
