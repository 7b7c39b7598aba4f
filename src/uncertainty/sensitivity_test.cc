#include "uncertainty/sensitivity.h"

#include <gtest/gtest.h>

#include <cmath>

#include "uncertainty/overlap.h"
#include "uncertainty/summary.h"
#include "uncertainty/uncertainty_testing.h"
#include "util/format.h"

namespace ppsearch::uncertainty {
namespace {

spec::LayoutSpec L(int pp, int tp) { return {pp, tp, 4, {}}; }

// A point whose members' input TPS is `tps(member's log parameter values)`.
template <typename F>
PointUncertainty Point(const spec::LayoutSpec& layout, int c, const Ensemble& e, F tps) {
  PointUncertainty p;
  p.layout = layout;
  p.concurrency = c;
  std::vector<double> values;
  for (const auto& logs : e.log_values) {
    MemberValues m;
    m.input_tps = tps(logs);
    m.ttft_p50_s = 1000 / m.input_tps;
    p.members.push_back(m);
    values.push_back(m.input_tps);
  }
  p.input_tps = IntervalOf(values);
  std::array<double, cost::kParamCount> centre{};
  for (int d = 0; d < cost::kParamCount; ++d) centre[d] = std::log(cost::Calibration().value[d]);
  p.central.input_tps = tps(centre);
  p.central.ttft_p50_s = 1000 / p.central.input_tps;
  return p;
}

double Log(const std::array<double, cost::kParamCount>& logs, cost::Param p) {
  return logs[cost::Index(p)] - std::log(cost::Info(p).nominal);
}

class SensitivityTest : public ::testing::Test {
 protected:
  // Every parameter uncertain with its prior's spread.
  const Ensemble e = DrawEnsemble(cost::Calibration(), ExampleHardware(), {64, 9});
  const std::vector<int> levels = {8, 16};
  // A (PP8): rides on the expert GEMM at C=8 and a little on memory at C=16;
  // B (PP4): fixed at 900; C (PP2): slower, on the inter-node link.
  std::vector<PointUncertainty> points = {
      Point(L(8, 4), 8, e,
            [](const auto& x) { return 1000 * std::exp(Log(x, cost::Param::kMoeGemm)); }),
      Point(L(8, 4), 16, e,
            [](const auto& x) { return 1000 * std::exp(0.3 * Log(x, cost::Param::kMemory)); }),
      Point(L(4, 8), 8, e, [](const auto&) { return 900.0; }),
      Point(L(4, 8), 16, e, [](const auto&) { return 900.0; }),
      Point(L(2, 16), 8, e,
            [](const auto& x) { return 500 * std::exp(Log(x, cost::Param::kInterLink)); }),
      Point(L(2, 16), 16, e,
            [](const auto& x) { return 500 * std::exp(Log(x, cost::Param::kInterLink)); })};
};

TEST_F(SensitivityTest, PicksTheParameterThatMovesTheLayout) {
  const std::vector<LayoutSensitivity> s = ParameterSensitivity(points, e);
  ASSERT_EQ(s.size(), 3u);
  ASSERT_EQ(s[0].top.size(), 3u);
  EXPECT_EQ(s[0].top[0].param, cost::Param::kMoeGemm);
  EXPECT_GT(s[0].top[0].share, 0.5);
  EXPECT_GT(s[0].top[0].correlation, 0.8);
  EXPECT_GE(s[0].top[0].share, s[0].top[1].share);
  EXPECT_TRUE(s[1].top.empty());  // B does not vary
  ASSERT_FALSE(s[2].top.empty());
  EXPECT_EQ(s[2].top[0].param, cost::Param::kInterLink);
  EXPECT_GT(s[2].top[0].share, 0.7);
}

TEST_F(SensitivityTest, RanksLayoutsByTheDecisionsScore) {
  const auto ranked =
      RankLayouts(points, {L(2, 16), L(4, 8), L(8, 4)}, levels, decide::Objective());
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].layout, L(8, 4));
  EXPECT_EQ(ranked[1].layout, L(4, 8));
  EXPECT_EQ(ranked[2].layout, L(2, 16));
  EXPECT_DOUBLE_EQ(ranked[0].score, 1.0);
  EXPECT_NEAR(ranked[1].score, 0.9, 1e-12);
  EXPECT_NEAR(ranked[2].score, 0.5, 1e-12);
  // By TTFT (here 1000 / TPS) the order is the same.
  EXPECT_EQ(RankLayouts(points, {L(2, 16), L(4, 8), L(8, 4)}, levels,
                        decide::Objective(decide::Objective::Kind::kTtftP50))[0]
                .layout,
            L(8, 4));
  // A layout without a point at every level is not ranked.
  EXPECT_EQ(RankLayouts(points, {L(4, 8), L(1, 32)}, levels, decide::Objective()).size(), 1u);
}

TEST_F(SensitivityTest, TheNextMeasurementIsThePointTheMarginMovesWith) {
  const auto ranked =
      RankLayouts(points, {L(2, 16), L(4, 8), L(8, 4)}, levels, decide::Objective());
  // margin = (log A8 + log A16) / 2 - log 900: A8's share is 0.25 / (0.25 + 0.0225).
  const std::optional<NextMeasurement> n =
      BestNextMeasurement(points, ranked, levels, decide::Objective(), {});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->primary, L(8, 4));
  EXPECT_EQ(n->runner_up, L(4, 8));
  ASSERT_TRUE(n->layout);
  EXPECT_EQ(*n->layout, L(8, 4));
  EXPECT_EQ(n->concurrency, 8);
  EXPECT_GT(n->explained, 0.8);
  EXPECT_LE(n->explained, 1.0);
  EXPECT_EQ(n->members, 64);
  EXPECT_GT(n->flips, 0);  // A's expert GEMM at its low end puts B first
  EXPECT_LT(n->flips, 32);
  EXPECT_EQ(NextMeasurementLine(*n), "measure PP8/TP4/EP4 at C=8 next: it explains " +
                                         FormatPercent(n->explained, 0) +
                                         " of the uncertainty in PP8/TP4/EP4-vs-PP4/TP8/EP4");
  // With A measured already, what is left explains little: B is fixed, C independent.
  const auto rest = BestNextMeasurement(points, ranked, levels, decide::Objective(), {L(8, 4)});
  ASSERT_TRUE(rest);
  if (rest->layout) {
    EXPECT_EQ(*rest->layout, L(2, 16));
  }
  EXPECT_LT(rest->explained, 0.3);
  EXPECT_FALSE(BestNextMeasurement(points, {ranked[0]}, levels, decide::Objective(), {}));
}

TEST_F(SensitivityTest, SummaryNotesWhetherTheBestTwoOverlap) {
  SummaryInputs in;
  in.levels = levels;
  in.candidates = {L(8, 4), L(4, 8), L(2, 16)};
  const UncertaintySummary s = Summarize(points, e, in);
  // A at C=8 spans 900: the intervals overlap there, not at C=16 (A16 stays above 900).
  EXPECT_TRUE(s.overlap);
  EXPECT_NE(s.overlap_note.find("overlap (input TPS at C=8)"), std::string::npos) << s.overlap_note;
  in.candidates = {L(8, 4), L(2, 16)};
  const UncertaintySummary apart = Summarize(points, e, in);
  EXPECT_FALSE(apart.overlap);
  EXPECT_NE(apart.overlap_note.find("do not overlap"), std::string::npos);
}

TEST(OverlapTest, ListsTheLevelsWhereTheIntervalsMeet) {
  const std::vector<LevelInterval> a = {{8, {100, 120}}, {16, {200, 220}}, {32, {300, 310}}};
  const std::vector<LevelInterval> b = {{8, {110, 130}}, {16, {150, 190}}, {32, {305, 306}}};
  EXPECT_EQ(OverlappingLevels(a, b), (std::vector<int>{8, 32}));
  EXPECT_EQ(OverlapNote(L(8, 4), a, L(4, 8), b, "input TPS"),
            "the intervals of PP8/TP4/EP4 and PP4/TP8/EP4 overlap (input TPS at C=8 and C=32): "
            "the ranking is not certain at this calibration");
  EXPECT_TRUE(OverlappingLevels(a, {{64, {100, 400}}}).empty());
}

}  // namespace
}  // namespace ppsearch::uncertainty
