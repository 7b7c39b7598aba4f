#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <set>

namespace ppsearch::report {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(NiceTicks, StepsOfOneTwoOrFiveTimesAPowerOfTenReachingTheMaximum) {
  EXPECT_EQ(NiceTicks(13185),
            (std::vector<double>{0, 2000, 4000, 6000, 8000, 10000, 12000, 14000}));
  EXPECT_EQ(NiceTicks(0.9), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0}));
  EXPECT_EQ(NiceTicks(100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(NiceTicks(0), (std::vector<double>{0, 1}));
}

BandChart TwoBands() {
  BandChart c;
  c.id = "tps";
  c.title = "Input <TPS>";
  c.x_label = "layout";
  c.y_label = "input TPS (tokens/s)";
  c.series = {{"PP1", "#111"}, {"PP2", "#222"}};
  Band a{"1/32/4", "C = 8", true, "baseline", {}};
  a.slots.push_back({{{0, 0, 3257.96, "PP1 C=8 median"}}, {3250.5, 3260.25}, 3258.0, "PP1 C=8"});
  Band b{"2/16/4", "C = 8", false, "baseline", {}};
  b.slots.push_back({{{1, 0, 5680.5, "PP2 C=8 median"}}, {}, std::nullopt, "PP2 C=8"});
  c.bands = {a, b};
  c.lines = {{8000, "GPU total", "#000"}};
  c.dots_legend = "one repeat";
  c.marker_legend = "predicted";
  return c;
}

TEST(RenderBandChart, EveryDatumIsAMarkWithItsValue) {
  const std::string svg = RenderBandChart(TwoBands());
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"tps\"", 0),
            0u);
  EXPECT_EQ(Count(svg, "class=\"mark "), 2 + 2 + 1 + 1);  // bars, repeats, predicted, line
  EXPECT_NE(svg.find("data-key=\"PP2 C=8 median\" data-value=\"5680.50\""), std::string::npos);
  EXPECT_NE(svg.find("data-key=\"PP1 C=8 repeat 2\" data-value=\"3260.25\""), std::string::npos);
  EXPECT_NE(svg.find("data-key=\"PP1 C=8 predicted\" data-value=\"3258.00\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"mark bar emphasis\""), std::string::npos);
  EXPECT_EQ(Count(svg, ">baseline</text>"), 1);  // only the emphasized band is tagged
  EXPECT_EQ(Count(svg, ">C = 8</text>"), 1);     // a group label once for its run of bands
  EXPECT_NE(svg.find("Input &lt;TPS&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">input TPS (tokens/s)</text>"), std::string::npos);
  for (const char* entry : {">PP1<", ">PP2<", ">one repeat<", ">predicted<", ">GPU total<"})
    EXPECT_NE(svg.find(entry), std::string::npos) << entry;
  EXPECT_NE(svg.find(">8,000</text>"), std::string::npos);  // the axis reaches the line
  EXPECT_EQ(svg, RenderBandChart(TwoBands()));              // deterministic
}

TEST(RenderBandChart, AWhiskerIsAStemWithTwoMarkedCapsAndALegendEntry) {
  BandChart c = TwoBands();
  c.bands[0].slots[0].whisker = Whisker{3100.25, 3400.5};
  c.whisker_legend = "predicted 10th-90th percentile";
  c.whisker_key = "predicted interval";
  c.lines.clear();
  const std::string svg = RenderBandChart(c);
  EXPECT_EQ(Count(svg, "class=\"mark "), 2 + 2 + 1 + 2);  // bars, repeats, predicted, caps
  EXPECT_NE(svg.find("data-key=\"PP1 C=8 predicted interval low\" data-value=\"3100.25\""),
            std::string::npos);
  EXPECT_NE(svg.find("data-key=\"PP1 C=8 predicted interval high\" data-value=\"3400.50\""),
            std::string::npos);
  EXPECT_EQ(Count(svg, "<line class=\"interval\""), 1);
  EXPECT_NE(svg.find(">predicted 10th-90th percentile</text>"), std::string::npos);
  // Without a whisker legend and whiskers, neither is drawn.
  EXPECT_EQ(RenderBandChart(TwoBands()).find("interval"), std::string::npos);
  // The axis reaches the whisker's top.
  c.bands[0].slots[0].whisker = Whisker{3000, 9100};
  EXPECT_NE(RenderBandChart(c).find(">10,000</text>"), std::string::npos);
}

TEST(RenderScatterChart, EmphasizedPointsAreRingedAndMarked) {
  ScatterChart c;
  c.id = "tradeoff";
  c.title = "t";
  c.x_label = "TTFT p50 (s)";
  c.y_label = "input TPS (tokens/s)";
  c.series = {{"PP1", "#111"}};
  c.shapes = {"C = 8", "C = 16"};
  c.points = {{40.2, 3256.68, 0, 0, false, "PP1 C=8"}, {9.59, 12556.79, 0, 1, true, "PP8 C=16"}};
  c.emphasis_legend = "Pareto-optimal";
  const std::string svg = RenderScatterChart(c);
  EXPECT_EQ(Count(svg, "class=\"mark point"), 2);
  EXPECT_NE(svg.find("<rect x="), std::string::npos);  // C = 16 drawn as a square
  EXPECT_NE(svg.find("class=\"mark point pareto\" data-key=\"PP8 C=16\" data-value=\"12556.79\" "
                     "data-x=\"9.59\""),
            std::string::npos);
  EXPECT_EQ(Count(svg, "<circle class=\"ring\""), 1);
  EXPECT_NE(svg.find("<title>PP8 C=16: 12556.79 at 9.59</title></rect>"), std::string::npos);
}

// Every load point its own marker: the legend's nine shapes are nine
// different drawings (the default search has seven load points, and one
// more for the loads bisection finds).
TEST(RenderScatterChart, NineLoadPointsGetNineDistinctShapes) {
  ScatterChart c;
  c.id = "front";
  c.series = {{"PP1", "#111"}};
  for (int i = 0; i < kShapes; ++i) {
    c.shapes.push_back("C = " + std::to_string(1 << i));
    c.points.push_back({1.0 + i, 10.0 + i, 0, i, false, "PP1 " + c.shapes.back()});
  }
  const std::string svg = RenderScatterChart(c);
  std::set<std::string> legend;
  for (size_t at = 0; (at = svg.find("class=\"shape\"", at)) != std::string::npos; ++at) {
    const size_t open = svg.rfind('<', at);
    // The legend draws every shape at one centre: equal text is an equal shape.
    legend.insert(svg.substr(open, svg.find("/>", at) - open));
  }
  EXPECT_EQ(legend.size(), static_cast<size_t>(kShapes));
  EXPECT_EQ(Count(svg, "class=\"mark point"), kShapes);
}

}  // namespace
}  // namespace ppsearch::report
