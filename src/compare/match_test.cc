// Point matching, the noise rule, the prediction check, and the errors of
// loading a side and of a comparison without a common point.

#include "compare/match.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/analysis_testing.h"
#include "compare/comparison.h"
#include "compare/load.h"
#include "evidence/point_columns.h"
#include "ppsearch_source_dir.h"

namespace ppsearch::compare {
namespace {

using analysis::PointSummary;
using analysis::testing::Layout;

PointSummary Point(int pp, int c, double tps, double p50, int repeats = 3, double spread = 0.01) {
  PointSummary p;
  p.layout = Layout(pp, 32 / pp, 4);
  p.concurrency = c;
  p.repeats = repeats;
  p.median.input_tps = tps;
  p.input_tps_spread = spread;
  p.median.ttft_p50_s = p50;
  p.ttft_p50_s_spread = spread;
  p.median.ttft_p95_s = p50 * 1.1;
  return p;
}

const MetricDiff& Metric(const MatchedPoint& p, const std::string& name) {
  for (const MetricDiff& d : p.metrics)
    if (d.name == name) return d;
  ADD_FAILURE() << "no metric " << name;
  return p.metrics.front();
}

TEST(MatchPointsTest, MatchesByLayoutAndConcurrencyAndMarksNoise) {
  SidePoints a{{Point(4, 8, 1000, 10), Point(4, 16, 1000, 20), Point(2, 8, 800, 12)}, true};
  SidePoints b{{Point(4, 8, 1005, 12, 3, 0.002), Point(4, 16, 1100, 20, 1), Point(8, 8, 900, 9)},
               true};
  const PointMatch m = MatchPoints(a, b);
  ASSERT_EQ(m.matched.size(), 2u);
  EXPECT_EQ(m.only_a, std::vector<std::string>{"PP2/TP16/EP4 C=8"});
  EXPECT_EQ(m.only_b, std::vector<std::string>{"PP8/TP4/EP4 C=8"});
  const MetricDiff& tps = Metric(m.matched[0], "input_tps");
  EXPECT_DOUBLE_EQ(*tps.abs, 5);
  EXPECT_NEAR(*tps.rel, 0.005, 1e-12);
  EXPECT_DOUBLE_EQ(*tps.noise, 0.01);  // the larger of the two spreads
  EXPECT_EQ(tps.within_noise, true);
  const MetricDiff& p50 = Metric(m.matched[0], "ttft_p50_s");
  EXPECT_NEAR(*p50.rel, 0.2, 1e-12);
  EXPECT_EQ(p50.within_noise, false);
  EXPECT_FALSE(Metric(m.matched[0], "ttft_p95_s").noise.has_value());
  // One repeat on B: only A's spread is known; 10% is beyond it.
  const MetricDiff& tps16 = Metric(m.matched[1], "input_tps");
  EXPECT_DOUBLE_EQ(*tps16.noise, 0.01);
  EXPECT_EQ(tps16.within_noise, false);
}

// An older EP8 run against a new EP4 one: the same PP/TP/C are compared and
// the EP size is named as a harmful difference.
TEST(MatchPointsTest, PointsLeftOverAreMatchedAcrossEpSizes) {
  PointSummary a8 = Point(4, 8, 1000, 10), a16 = Point(4, 16, 1000, 20);
  a8.layout.ep = a16.layout.ep = 8;
  SidePoints a{{a8, a16, Point(2, 8, 800, 12)}, true};
  SidePoints b{{Point(4, 8, 1100, 9), Point(2, 8, 810, 12), Point(8, 8, 900, 9)}, true};
  const PointMatch m = MatchPoints(a, b);
  ASSERT_EQ(m.matched.size(), 2u);
  EXPECT_EQ(m.matched[0].layout.ep, 8);
  EXPECT_EQ(m.matched[0].b_layout.ep, 4);
  EXPECT_NEAR(*Metric(m.matched[0], "input_tps").rel, 0.1, 1e-12);
  EXPECT_EQ(m.matched[1].layout.pp, 2) << "the exact match is kept";
  EXPECT_EQ(m.matched[1].b_layout.ep, 4);
  EXPECT_EQ(m.only_a, std::vector<std::string>{"PP4/TP8/EP8 C=16"});
  EXPECT_EQ(m.only_b, std::vector<std::string>{"PP8/TP4/EP4 C=8"});
  const auto ep = ExpertParallelDifference(m);
  ASSERT_TRUE(ep.has_value());
  EXPECT_EQ(ep->first, "4, 8");
  EXPECT_EQ(ep->second, "4");
  EXPECT_FALSE(ExpertParallelDifference(MatchPoints(b, b)).has_value());

  Side sa, sb;
  sa.points = a;
  sb.points = b;
  sa.description.source = "old";
  sb.description.source = "new";
  Result<Comparison> c = Compare(sa, sb);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->confounders.harmful().size(), 1u);
  EXPECT_EQ(c->confounders.harmful()[0]->key, "layout.ep");
  EXPECT_FALSE(c->confounders.comparable);
  EXPECT_EQ(c->confounders.verdict, "not comparable because of layout.ep (EP4, 8 vs EP4)");
}

// A deployment's own sizes are no pool's: two different deployments at the
// same load point are not paired, a deployment pairs with itself.
TEST(MatchPointsTest, DeploymentsPairOnlyWithTheSameDeployment) {
  spec::LayoutSpec prefill = Layout(1, 8, 8), decode = Layout(1, 8, 8);
  decode.instances = 3;
  PointSummary one = Point(1, 64, 5000, 1), other = Point(1, 64, 6000, 1);
  one.layout = spec::DeploymentLayout(prefill, decode, {});
  decode.instances = 1;
  other.layout = spec::DeploymentLayout(prefill, decode, {});
  const PointMatch m = MatchPoints(SidePoints{{one}, true}, SidePoints{{other}, true});
  EXPECT_TRUE(m.matched.empty());
  EXPECT_EQ(m.only_a.size(), 1u);
  EXPECT_EQ(MatchPoints(SidePoints{{one}, true}, SidePoints{{one}, true}).matched.size(), 1u);
}

TEST(MatchPointsTest, SpreadsACsvDoesNotRecordAreUnknown) {
  SidePoints a{{Point(4, 8, 1000, 10)}, false};
  SidePoints b{{Point(4, 8, 1001, 10, 1)}, true};
  const MetricDiff& tps = Metric(MatchPoints(a, b).matched[0], "input_tps");
  EXPECT_FALSE(tps.noise.has_value());
  EXPECT_FALSE(tps.within_noise.has_value()) << "unknown, not beyond noise";
}

// A CSV without a TTFT column holds no TTFT: its side shows none, and no
// difference or prediction error is made of a 0.
TEST(MatchPointsTest, AFigureASideDoesNotHoldIsUnknownNotZero) {
  PointSummary csv = Point(4, 8, 1000, 10);
  csv.held.assign(evidence::PointColumns().size(), true);
  for (double stats::Figures::*m : {&stats::Figures::ttft_p50_s, &stats::Figures::ttft_p95_s})
    csv.held[evidence::IndexOf(*evidence::ColumnOf(m))] = false;
  const PointMatch m =
      MatchPoints(SidePoints{{csv}, false}, SidePoints{{Point(4, 8, 1100, 9)}, true});
  ASSERT_EQ(m.matched.size(), 1u);
  const MetricDiff& p50 = Metric(m.matched[0], "ttft_p50_s");
  EXPECT_FALSE(p50.a.has_value());
  EXPECT_DOUBLE_EQ(*p50.b, 9);
  EXPECT_FALSE(p50.abs.has_value());
  EXPECT_FALSE(p50.rel.has_value());
  EXPECT_FALSE(p50.within_noise.has_value());
  EXPECT_NEAR(*Metric(m.matched[0], "input_tps").rel, 0.1, 1e-12);
  const PredictionCheck c = CheckPrediction(m, /*a_simulated=*/false);
  ASSERT_EQ(c.points.size(), 1u);
  EXPECT_FALSE(c.points[0].ttft_p50_error.has_value());
  EXPECT_TRUE(c.points[0].input_tps_error.has_value());
}

TEST(CheckPredictionTest, PerPointErrorsAndRanking) {
  // A simulated: PP8 predicted best, but measured PP4 is best at C=8.
  SidePoints a{{Point(4, 8, 1100, 9), Point(8, 8, 1200, 8), Point(4, 16, 1000, 20)}, true};
  SidePoints b{{Point(4, 8, 1000, 10), Point(8, 8, 900, 11), Point(4, 16, 1000, 25)}, true};
  const PredictionCheck c = CheckPrediction(MatchPoints(a, b), /*a_simulated=*/true);
  EXPECT_EQ(c.predicted_side, 'A');
  ASSERT_EQ(c.points.size(), 3u);
  EXPECT_NEAR(*c.points[0].input_tps_error, 0.1, 1e-12);
  EXPECT_NEAR(*c.points[0].ttft_p50_error, -0.1, 1e-12);
  EXPECT_NEAR(*c.points[1].input_tps_error, 1200.0 / 900 - 1, 1e-12);
  ASSERT_EQ(c.rankings.size(), 1u);  // C=16 holds one layout
  EXPECT_EQ(c.rankings[0].measured, (std::vector<std::string>{"PP4/TP8/EP4", "PP8/TP4/EP4"}));
  EXPECT_EQ(c.rankings[0].predicted, (std::vector<std::string>{"PP8/TP4/EP4", "PP4/TP8/EP4"}));
  EXPECT_FALSE(c.ranking_agrees);
  EXPECT_NEAR(*c.median_abs_input_tps_error, 0.1, 1e-12);  // of 0.1, 0.333, 0
  // Seen from the other side, B is the prediction and the errors invert.
  const PredictionCheck back = CheckPrediction(MatchPoints(b, a), /*a_simulated=*/false);
  EXPECT_EQ(back.predicted_side, 'B');
  EXPECT_NEAR(*back.points[0].input_tps_error, 0.1, 1e-12);
}

class LoadSideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("ppsearch-compare-" + std::to_string(::getpid())))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(LoadSideTest, ErrorsNameTheFileAndLine) {
  Result<Side> missing = LoadSide(dir_ + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            dir_ +
                "/nope: no such file or directory (expected a run directory, its summary.csv "
                "or a CSV of medians)");
  const std::string header = Write("h.csv", "pp,tp,ep,c,input_tps_median\n1,32,4,8,3000\n");
  Result<Side> bad = LoadSide(header);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind(header + ":1: missing column 'concurrency' in the header", 0),
            0u)
      << bad.error().message;
  const std::string number =
      Write("n.csv", "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median\n1,32,4,8,fast,39\n");
  Result<Side> nan = LoadSide(number);
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.error().message.find(number + ":2"), std::string::npos) << nan.error().message;
  Result<Side> empty = LoadSide(Write("e.csv",
                                      "pp,tp,ep,concurrency,input_tps_median,"
                                      "ttft_p50_s_median\n"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("no rows below the header"), std::string::npos);
  Result<Side> not_a_run = LoadSide(dir_);
  ASSERT_FALSE(not_a_run.ok());
  EXPECT_NE(not_a_run.error().message.find(dir_), std::string::npos);
}

TEST_F(LoadSideTest, CsvSidesAndNoMatchingPoint) {
  Result<Side> a = LoadSide(std::string(PPSEARCH_SOURCE_DIR) + "/data/baseline/pp1-tp32-ep4.csv");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->description.has_metadata);
  EXPECT_FALSE(a->points.spreads_recorded);
  EXPECT_EQ(a->description.settings.at("workload.requests"), "40");
  const std::string other =
      Write("pp4.csv",
            "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median,simulated\n"
            "4,8,4,8,4000,30,true\n");
  Result<Side> b = LoadSide(other);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->description.simulated, std::optional<bool>(true));
  Result<Comparison> c = Compare(*a, *b);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "no matching points: A (" + std::string(PPSEARCH_SOURCE_DIR) +
                "/data/baseline/pp1-tp32-ep4.csv) holds PP1/TP32/EP4 at C = 8 16; B (" + other +
                ") holds PP4/TP8/EP4 at C = 8; points are matched by PP, TP and concurrency "
                "(EP too where both sides have it)");
}

}  // namespace
}  // namespace ppsearch::compare
