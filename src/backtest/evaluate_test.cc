// Figures and implied signs, worked by hand on made-up predictions.

#include "backtest/evaluate.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsearch::backtest {
namespace {

Case ThreeConfigurations() {
  Case c;
  c.tolerance = 0.15;
  for (const char* name : {"pp1", "pp4", "tp32"}) {
    Configuration x;
    x.name = name;
    c.configurations.push_back(x);
  }
  auto ref = [&](FigureKind kind, std::string a, std::string b, double value) {
    Reference r;
    r.kind = kind;
    r.a = std::move(a);
    r.b = std::move(b);
    r.value = value;
    c.references.push_back(r);
  };
  ref(FigureKind::kTpsRatio, "pp4", "pp1", 3.20);   // pp4 = 3.20 pp1
  ref(FigureKind::kTpsRatio, "tp32", "pp1", 2.54);  // tp32 = 2.54 pp1, so pp4 > tp32
  ref(FigureKind::kTtftP50, "pp1", "", 48.5);
  ref(FigureKind::kTtftP50, "pp4", "", 15.5);
  return c;
}

ConfigurationPrediction P(const std::string& name, double tps, double ttft) {
  ConfigurationPrediction p;
  p.name = name;
  p.input_tps = tps;
  p.ttft_p50_s = ttft;
  return p;
}

TEST(Evaluate, ARatiosParameterBandPairsTheSameMemberInBothAndOnlyHeldOutFiguresCount) {
  Case c = ThreeConfigurations();
  c.configurations[0].calibrate = true;  // pp1
  std::vector<ConfigurationPrediction> p = {P("pp1", 1000, 50), P("pp4", 2800, 17),
                                            P("tp32", 2700, 19)};
  // Each member moves pp1 and pp4 alike: the ratio does not move at all.
  p[0].member_input_tps = {900, 1000, 1100};
  p[1].member_input_tps = {2520, 2800, 3080};
  p[1].member_ttft_p50_s = {16, 17, 18};
  p[0].member_ttft_p50_s = {49, 50, 51};
  p[1].site.layout.pp = 4;
  p[0].site.layout.pp = 1;
  const std::vector<FigureResult> f = ReferenceFigures(c, p);
  ASSERT_GE(f.size(), 4u);
  EXPECT_TRUE(f[0].has_interval);  // pp4 / pp1
  EXPECT_NEAR(f[0].parameter.low, 2.8, 1e-12);
  EXPECT_NEAR(f[0].parameter.high, 2.8, 1e-12);
  EXPECT_NEAR(f[0].extrapolation.pp_depth, std::log(4.0), 1e-12);
  EXPECT_TRUE(f[0].held_out);
  EXPECT_FALSE(f[1].has_interval);  // tp32 has no members
  EXPECT_FALSE(f[2].held_out);      // TTFT of pp1, the calibrated configuration
  EXPECT_TRUE(f[3].held_out);       // TTFT of pp4
}

TEST(Evaluate, FiguresAreRatiosAndTtftWithTheirErrors) {
  std::vector<ConfigurationPrediction> p = {P("pp1", 1000, 50), P("pp4", 2800, 17),
                                            P("tp32", 2700, 19)};
  std::vector<FigureResult> f = ReferenceFigures(ThreeConfigurations(), p);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].label, "input TPS pp4 / pp1");
  EXPECT_DOUBLE_EQ(f[0].predicted, 2.8);
  EXPECT_NEAR(f[0].error, 2.8 / 3.2 - 1, 1e-12);  // -12.5%: within 15%
  EXPECT_TRUE(f[0].within);
  EXPECT_NEAR(f[1].error, 2.7 / 2.54 - 1, 1e-12);  // +6.3%
  EXPECT_TRUE(f[1].within);
  EXPECT_EQ(f[2].label, "TTFT p50 pp1");
  EXPECT_TRUE(f[2].within);                       // 50 / 48.5: +3.1%
  EXPECT_NEAR(f[3].error, 17 / 15.5 - 1, 1e-12);  // +9.7%
}

TEST(Evaluate, TpotIsAnAbsoluteFigureInMillisecondsAndAStatedMissIsAccepted) {
  Case c;
  c.tolerance = 0.25;
  Configuration cal, far;
  cal.name = "c16";
  cal.calibrate = true;
  far.name = "c64";
  c.configurations = {cal, far};
  Reference tpot;
  tpot.kind = FigureKind::kTpotMs;
  tpot.a = "c64";
  tpot.value = 32.99;
  c.references.push_back(tpot);
  ConfigurationPrediction p16 = P("c16", 950, 0.3), p64 = P("c64", 2270, 1.0);
  p64.tpot_ms = 27.24;
  p64.member_tpot_ms = {26.0, 27.0, 28.0, 29.0};
  std::vector<FigureResult> f = ReferenceFigures(c, {p16, p64});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].label, "TPOT p50 c64");
  EXPECT_EQ(f[0].unit, "ms");
  EXPECT_NEAR(f[0].error, 27.24 / 32.99 - 1, 1e-12);  // -17.4%: within 25%
  EXPECT_TRUE(f[0].within);
  EXPECT_TRUE(f[0].accepted());
  EXPECT_TRUE(f[0].held_out);
  EXPECT_TRUE(f[0].has_interval);
  // Outside tolerance with a stated reason: reported, accepted; the same
  // reason on a figure that is within is stale, and fails.
  c.tolerance = 0.10;
  c.references[0].miss = "why, with its source";
  f = ReferenceFigures(c, {p16, p64});
  EXPECT_FALSE(f[0].within);
  EXPECT_EQ(f[0].known_miss, "why, with its source");
  EXPECT_TRUE(f[0].accepted());
  c.tolerance = 0.25;
  EXPECT_FALSE(ReferenceFigures(c, {p16, p64})[0].accepted());
}

// A deployment's pool figures: the prefill pool's input and the decode
// pool's output tok/s per node, with no interval and outside the
// model-form fit (FigureResult::deployment).
TEST(Evaluate, APoolsFigureIsItsTokensPerNodeAndCarriesNoInterval) {
  Case c;
  c.tolerance = 0.25;
  Configuration d;
  d.name = "4p9d";
  d.deployment = true;
  c.configurations = {d};
  Reference prefill, decode;
  prefill.kind = FigureKind::kPrefillTpsPerNode;
  prefill.a = "4p9d";
  prefill.value = 57674;
  decode.kind = FigureKind::kDecodeTpsPerNode;
  decode.a = "4p9d";
  decode.value = 22282;
  c.references = {prefill, decode};
  ConfigurationPrediction p = P("4p9d", 0, 0);
  p.deployment = true;
  p.prefill_tps_per_node = 50000;
  p.decode_tps_per_node = 30000;
  std::vector<FigureResult> f = ReferenceFigures(c, {p});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].label, "prefill input TPS/node 4p9d");
  EXPECT_EQ(f[0].unit, "tok/s");
  EXPECT_NEAR(f[0].error, 50000.0 / 57674 - 1, 1e-12);  // -13.3%: within
  EXPECT_TRUE(f[0].within);
  EXPECT_EQ(f[1].label, "decode output TPS/node 4p9d");
  EXPECT_NEAR(f[1].error, 30000.0 / 22282 - 1, 1e-12);  // +34.6%: outside
  EXPECT_FALSE(f[1].within);
  // 1,000,000 prompt tokens, the pool busy half of a 10 s window, 32 GPUs
  // of 8 per node: 1e6 / 5 s / 4 nodes = 50,000 tok/s per node.
  EXPECT_DOUBLE_EQ(PerNodeWhileBusy(1e6, 0.5, 10'000'000'000, 32, 8), 50000);
  EXPECT_EQ(PerNodeWhileBusy(1e6, 0, 10'000'000'000, 32, 8), 0);  // never busy
  for (const FigureResult& x : f) {
    EXPECT_TRUE(x.deployment);
    EXPECT_FALSE(x.has_interval);
    EXPECT_TRUE(x.held_out);
  }
}

TEST(Evaluate, RatioChainsAndTtftImplyEveryPair) {
  // tp32 predicted above pp4: the ratio chain (3.20 > 2.54) says otherwise.
  std::vector<ConfigurationPrediction> p = {P("pp1", 1000, 50), P("pp4", 2600, 17),
                                            P("tp32", 2700, 19)};
  std::vector<SignResult> s = ImpliedSigns(ThreeConfigurations(), p);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].better, "pp4");
  EXPECT_EQ(s[0].worse, "pp1");
  EXPECT_TRUE(s[0].right);
  EXPECT_EQ(s[1].better, "tp32");
  EXPECT_EQ(s[1].worse, "pp1");
  EXPECT_EQ(s[2].better, "pp4");
  EXPECT_EQ(s[2].worse, "tp32");
  EXPECT_FALSE(s[2].right);
  EXPECT_EQ(s[3].metric, "TTFT p50");
  EXPECT_EQ(s[3].better, "pp4");
  EXPECT_TRUE(s[3].right);
  // A TTFT with a stated miss orders nothing: the miss is counted once, as
  // its figure.
  Case stated = ThreeConfigurations();
  stated.references[3].miss = "why, with its source";
  s = ImpliedSigns(stated, p);
  ASSERT_EQ(s.size(), 3u);
  for (const SignResult& x : s) EXPECT_EQ(x.metric, "input TPS");
}

TEST(Evaluate, BeatsAddsOnlyPairsNotAlreadyImplied) {
  Case c = ThreeConfigurations();
  Reference beats;
  beats.kind = FigureKind::kBeats;
  beats.a = "pp4";
  beats.b = "pp1";  // the ratios imply it already
  c.references.push_back(beats);
  std::vector<ConfigurationPrediction> p = {P("pp1", 1000, 50), P("pp4", 2600, 17),
                                            P("tp32", 2700, 19)};
  EXPECT_EQ(ImpliedSigns(c, p).size(), 4u);
  EXPECT_TRUE(ReferenceFigures(c, p).size() == 4u);  // beats is no figure
}

TEST(Evaluate, ResidualsBecomeFigures) {
  calibrate::PointResidual r;
  r.concurrency = 8;
  r.measured_tps = 3257.96;
  r.predicted_tps = 3300;
  r.measured_ttft_p50_s = 39.19;
  r.predicted_ttft_p50_s = 47;  // +19.9%
  std::vector<FigureResult> f = ResidualFigures({r}, {"pp1-tp32-ep4"}, 0.15);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].label, "pp1-tp32-ep4 input TPS (fit, c=8)");
  EXPECT_TRUE(f[0].within);
  EXPECT_EQ(f[1].label, "pp1-tp32-ep4 TTFT p50 (fit, c=8)");
  EXPECT_FALSE(f[1].within);
}

}  // namespace
}  // namespace ppsearch::backtest
