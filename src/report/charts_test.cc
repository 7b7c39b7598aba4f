#include "report/charts.h"

#include <gtest/gtest.h>

namespace ppsearch::report {
namespace {

ChartPoint Point(int pp, int c, double input_tps, double ttft_s) {
  ChartPoint p;
  p.layout.pp = pp;
  p.layout.tp = 32 / pp;
  p.layout.ep = 4;
  p.concurrency = c;
  p.input_tps = input_tps;
  p.ttft_p50_s = ttft_s;
  p.ttft_p95_s = ttft_s;
  return p;
}

ChartPoint Decode(ChartPoint p, double per_gpu, double per_user) {
  p.output_tps_per_gpu = per_gpu;
  p.output_tps_per_user = per_user;
  return p;
}

// More tokens/s per GPU and more per user are both better: (20, 30) is
// beaten by (25, 30); (30, 10) and (10, 50) trade one for the other.
TEST(MarkDecodePareto, MorePerGpuAndMorePerUserWin) {
  std::vector<ChartPoint> points = {
      Decode(Point(4, 8, 100, 1), 20, 30), Decode(Point(8, 8, 100, 1), 25, 30),
      Decode(Point(4, 16, 100, 1), 30, 10), Decode(Point(8, 16, 100, 1), 10, 50),
      Point(2, 8, 100, 1)};  // prefill-only: not on the decode chart
  MarkDecodePareto(points);
  EXPECT_FALSE(points[0].decode_pareto);
  EXPECT_TRUE(points[1].decode_pareto);
  EXPECT_TRUE(points[2].decode_pareto);
  EXPECT_TRUE(points[3].decode_pareto);
  EXPECT_FALSE(points[4].decode_pareto);
}

TEST(RenderCharts, TheDecodeTradeoffOnlyWhenADecodePointIsThere) {
  ChartInputs in;
  in.points = {Point(4, 8, 100, 1), Point(8, 8, 120, 2)};
  EXPECT_EQ(RenderCharts(in).count(kFigureDecodeTradeoff), 0u);
  in.points[1] = Decode(in.points[1], 12.5, 40);
  MarkDecodePareto(in.points);
  const std::string svg = RenderCharts(in).at(kFigureDecodeTradeoff);
  EXPECT_NE(svg.find("throughput per user, 1 / TPOT p50 (tokens/s)"), std::string::npos);
  EXPECT_NE(svg.find("point pareto"), std::string::npos);
}

// A point without a TTFT (replayed from a file of medians without one)
// gets no TTFT bar and no trade-off point, where it used to be drawn at a
// TTFT nobody measured.
TEST(RenderCharts, APointWithoutATtftIsNotDrawnWhereTtftIsTheAxis) {
  ChartInputs in;
  in.points = {Point(4, 8, 100, 1), Point(8, 8, 120, 2)};
  in.points[1].ttft_p50_s.reset();
  in.points[1].ttft_p95_s.reset();
  const std::map<std::string, std::string> charts = RenderCharts(in);
  for (const char* figure : {kFigureTtft, kFigureTradeoff}) {
    const std::string& svg = charts.at(figure);
    EXPECT_NE(svg.find("PP4/TP8/EP4 C=8"), std::string::npos) << figure;
    EXPECT_EQ(svg.find("PP8/TP4/EP4 C=8 TTFT"), std::string::npos) << figure;
  }
  EXPECT_EQ(charts.at(kFigureTradeoff).find("PP8/TP4/EP4 C=8"), std::string::npos);
  EXPECT_NE(charts.at(kFigureInputTps).find("PP8/TP4/EP4 C=8"), std::string::npos);
}

// A disaggregated deployment's two charts: the TTFT's parts stacked per load
// point, and each pool's load against the half line; none without pools.
TEST(RenderCharts, ADeploymentsTtftPartsAndPoolLoads) {
  ChartInputs in;
  in.points = {Point(4, 8, 100, 1)};
  EXPECT_EQ(RenderCharts(in).count(kFigurePoolTtft), 0u);
  PoolPoint p;
  p.concurrency = 64;
  p.prefill_busy = 0.14;
  p.decode_fill = 0.04;
  p.prealloc_s = 0.002;
  p.prefill_s = 0.3;
  p.transfer_s = 0.001;
  p.decode_join_s = 0.012;
  in.pools = {p};
  const auto charts = RenderCharts(in);
  const std::string ttft = charts.at(kFigurePoolTtft);
  // Each part a segment of its own size, stacked in the order of a request's life.
  const size_t prefill = ttft.find("data-key=\"C = 64 prefill\" data-value=\"0.3000\"");
  const size_t transfer = ttft.find("data-key=\"C = 64 transfer\" data-value=\"0.0010\"");
  ASSERT_NE(prefill, std::string::npos) << ttft;
  ASSERT_NE(transfer, std::string::npos) << ttft;
  EXPECT_LT(prefill, transfer);
  const std::string load = charts.at(kFigurePoolLoad);
  EXPECT_NE(load.find("data-key=\"C = 64 prefill pool busy\""), std::string::npos) << load;
  EXPECT_NE(load.find("data-value=\"14.0\""), std::string::npos) << load;
}

}  // namespace
}  // namespace ppsearch::report
