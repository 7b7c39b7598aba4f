#include "backtest/coverage.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsearch::backtest {
namespace {

// A held-out ratio figure at PP depth ln(4) with a parameter band of +-2%.
FigureResult HeldOut(double reference, double predicted) {
  FigureResult f = MakeFigure("input TPS pp4 / pp1", "x", reference, predicted, 0.15);
  f.has_interval = true;
  f.held_out = true;
  f.parameter = {predicted * 0.98, predicted * 1.02};
  f.extrapolation.pp_depth = std::log(4.0);
  return f;
}

CaseResult CaseOf(const std::string& path, std::vector<FigureResult> figures) {
  CaseResult c;
  c.path = c.name = path;
  c.figures = std::move(figures);
  return c;
}

TEST(CoverageTest, AFiguresOwnMissNeverWidensItsInterval) {
  // Case a misses by 40%; case b by 1%. Left out, a's interval is b's fit
  // (narrow), so a's figure falls outside; b's interval is a's (wide).
  std::vector<CaseResult> cases = {CaseOf("a", {HeldOut(1.4, 1.0)}),
                                   CaseOf("b", {HeldOut(1.01, 1.0)})};
  const Coverage c = LeaveOneCaseOut(cases);
  EXPECT_EQ(c.figures, 2);
  EXPECT_EQ(c.inside, 1);
  EXPECT_DOUBLE_EQ(c.coverage, 0.5);
  EXPECT_FALSE(cases[0].figures[0].inside);
  EXPECT_TRUE(cases[1].figures[0].inside);
  EXPECT_LT(cases[0].figures[0].model_form_rel, cases[1].figures[0].model_form_rel);
  // a's scales are those fitted to b's misses alone.
  const cost::ModelFormScales b_only = uncertainty::FitModelForm(MissesOf(cases[1])).scales;
  EXPECT_DOUBLE_EQ(c.left_out[0].second.pp_depth, b_only.pp_depth);
  const FigureResult& f = cases[1].figures[0];
  EXPECT_NEAR(c.mean_interval_width,
              ((f.interval.high - f.interval.low) / f.predicted +
               (cases[0].figures[0].interval.high - cases[0].figures[0].interval.low) / 1.0) /
                  2,
              1e-12);
}

TEST(CoverageTest, FitResidualsCountAsMissesAtACalibratedPointButNotTowardCoverage) {
  FigureResult residual = MakeFigure("pp1 input TPS (fit, c=1)", "tok/s", 1000, 970, 0.15);
  FigureResult repeated = HeldOut(48.5, 50);
  repeated.held_out = false;  // a reference on the calibrated configuration alone
  std::vector<CaseResult> cases = {CaseOf("a", {residual, repeated, HeldOut(1.1, 1.0)})};
  const std::vector<uncertainty::Miss> misses = MissesOf(cases[0]);
  ASSERT_EQ(misses.size(), 2u);  // the residual and the held-out figure
  EXPECT_TRUE(misses[0].d.Zero());
  EXPECT_NEAR(misses[0].log_error, std::log(1000.0 / 970), 1e-12);
  const Coverage c = LeaveOneCaseOut(cases);
  EXPECT_EQ(c.figures, 1);
  EXPECT_TRUE(cases[0].figures[1].has_interval);  // shown, with its interval
  EXPECT_FALSE(cases[0].figures[0].has_interval);
}

TEST(CoverageTest, AStatedMissIsShownButNeitherCountedNorFitted) {
  // b's 40% miss has a cause its case names: a's interval does not widen for
  // it, and coverage counts a's figure alone.
  FigureResult stated = HeldOut(1.4, 1.0);
  stated.known_miss = "the cause, with its source";
  std::vector<CaseResult> cases = {CaseOf("a", {HeldOut(1.01, 1.0)}), CaseOf("b", {stated})};
  EXPECT_TRUE(MissesOf(cases[1]).empty());
  const Coverage c = LeaveOneCaseOut(cases);
  EXPECT_EQ(c.figures, 1);
  EXPECT_EQ(c.stated, 1);
  EXPECT_EQ(c.inside, 1);
  EXPECT_DOUBLE_EQ(c.left_out[0].second.pp_depth, uncertainty::FitModelForm({}).scales.pp_depth);
  EXPECT_GT(cases[1].figures[0].interval.high, 0);  // still shown with its interval
}

// A figure predicted with no calibration: an absolute one, at the
// uncalibrated distance, with a parameter band of +-2%.
FigureResult Uncalibrated(double reference, double predicted) {
  FigureResult f = MakeFigure("pp1 input TPS (measured, c=8)", "tok/s", reference, predicted, 0.15);
  f.has_interval = true;
  f.held_out = true;
  f.parameter = {predicted * 0.98, predicted * 1.02};
  f.extrapolation.uncalibrated = 1;
  return f;
}

// The uncalibrated figures' misses are fitted with the others (they alone
// identify the uncalibrated scale) and counted apart: a 25% miss
// uncalibrated widens the uncalibrated intervals, not the calibrated ones.
TEST(CoverageTest, UncalibratedFiguresFitTheirOwnScaleAndAreCountedApart) {
  std::vector<CaseResult> cases = {CaseOf("a", {HeldOut(1.01, 1.0)}),
                                   CaseOf("b", {HeldOut(1.02, 1.0)}),
                                   CaseOf("c", {HeldOut(0.99, 1.0)})};
  cases[0].uncalibrated = {Uncalibrated(1300, 1000)};
  cases[1].uncalibrated = {Uncalibrated(800, 1000)};
  cases[2].uncalibrated = {Uncalibrated(1250, 1000)};
  const std::vector<uncertainty::Miss> misses = MissesOf(cases[0]);
  ASSERT_EQ(misses.size(), 2u);
  EXPECT_EQ(misses[1].d.uncalibrated, 1.0);
  const Coverage c = LeaveOneCaseOut(cases);
  EXPECT_EQ(c.figures, 3);
  EXPECT_EQ(c.uncalibrated.figures, 3);
  EXPECT_GT(c.all.scales.uncalibrated, 0.15);
  EXPECT_LT(c.all.scales.pp_depth, 0.05);
  // Each uncalibrated interval is far wider than its calibrated neighbour's.
  for (const CaseResult& k : cases)
    EXPECT_GT(k.uncalibrated[0].model_form_rel, 3 * k.figures[0].model_form_rel) << k.name;
  EXPECT_EQ(c.uncalibrated.inside, 3);
  EXPECT_DOUBLE_EQ(c.uncalibrated.coverage, 1.0);
  EXPECT_GT(c.uncalibrated.mean_interval_width, 3 * c.mean_interval_width);
  // Without the uncalibrated misses, nothing identifies the scale: the
  // calibrated figures are as they were.
  for (CaseResult& k : cases) k.uncalibrated.clear();
  const Coverage alone = LeaveOneCaseOut(cases);
  EXPECT_EQ(alone.uncalibrated.figures, 0);
  EXPECT_FALSE(alone.all.identified[6]);
}

// The model form is the throughput and latency model's: a memory figure's
// miss (weights, KV pool) is not one of its misses, however large.
TEST(CoverageTest, MemoryFiguresAreNotModelFormMisses) {
  FigureResult kv = MakeFigure("tp4 KV pool tokens", "tokens", 46611, 42868, 0.05);
  kv.memory = true;
  std::vector<CaseResult> cases = {CaseOf("a", {kv, HeldOut(1.1, 1.0)})};
  const std::vector<uncertainty::Miss> misses = MissesOf(cases[0]);
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_NEAR(misses[0].log_error, std::log(1.1), 1e-12);
  kv.memory = false;
  EXPECT_EQ(MissesOf(CaseOf("a", {kv})).size(), 1u);
}

}  // namespace
}  // namespace ppsearch::backtest
