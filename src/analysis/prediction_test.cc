#include "analysis/prediction.h"

#include <gtest/gtest.h>

namespace ppsearch::analysis {
namespace {

PredictedPoint Point(int pp, int c, double tps, uncertainty::Interval tps_i, double ttft,
                     uncertainty::Interval ttft_i) {
  PredictedPoint p;
  p.layout = {pp, 32 / pp, 4, {}};
  p.concurrency = c;
  p.input_tps = tps;
  p.ttft_p50_s = ttft;
  p.input_tps_interval = tps_i;
  p.ttft_p50_interval = ttft_i;
  return p;
}

TEST(PredictionOverlap, ComparesTheObjectivesIntervalsAtEachLevel) {
  RunPrediction r;
  r.points = {Point(8, 8, 9500, {9000, 9900}, 12, {11, 13}),
              Point(8, 16, 9500, {9000, 9900}, 24, {22, 26}),
              Point(4, 8, 7400, {7000, 9100}, 17, {16, 18}),
              Point(4, 16, 7400, {7000, 8000}, 33, {31, 35})};
  const spec::LayoutSpec pp8 = r.points[0].layout, pp4 = r.points[2].layout;
  EXPECT_EQ(OverlapNote(r, pp8, pp4, decide::Objective()),
            "the intervals of PP8/TP4/EP4 and PP4/TP8/EP4 overlap (input TPS at C=8): the ranking "
            "is not certain at this calibration");
  // By TTFT p50 they are apart at both levels.
  EXPECT_NE(OverlapNote(r, pp8, pp4, decide::Objective(decide::Objective::Kind::kTtftP50))
                ->find("do not overlap (TTFT p50 at every"),
            std::string::npos);
  // A layout without intervals: nothing to say.
  r.points[2].input_tps_interval.reset();
  r.points[3].input_tps_interval.reset();
  EXPECT_FALSE(OverlapNote(r, pp8, pp4, decide::Objective()));
}

TEST(PredictedPoints, CarryEachPointsFiguresAndItsOwnInterval) {
  predict::SearchPrediction s;
  for (int c : {8, 16}) {
    predict::SearchPoint p;
    p.prediction.layout = {8, 4, 4, {}};
    p.prediction.concurrency = c;
    p.prediction.metrics.input_tps = 100.0 * c;
    p.prediction.memory.peak_mib_max = 70000;
    p.prediction.memory.peak_spread_mib = 900;
    p.prediction.sim.pp_max_micro_batch_size = 2;
    p.cap1_input_tps = c == 16 ? 1000 : 0;
    s.points.push_back(p);
  }
  std::vector<PredictedPoint> none = PredictedPoints(s);
  ASSERT_EQ(none.size(), 2u);
  EXPECT_FALSE(none[1].input_tps_interval);
  EXPECT_EQ(none[1].input_tps, 1600);
  EXPECT_EQ(none[1].cap1_input_tps, 1000);
  EXPECT_EQ(none[0].peak_spread_mib, 900);
  EXPECT_EQ(none[0].pp_max_micro_batch_size, 2);
  uncertainty::PointUncertainty u;
  u.layout = {8, 4, 4, {}};
  u.concurrency = 16;
  u.members.resize(4);
  u.input_tps = {10, 20};
  u.peak_gpu_mib = {70000, 70000};
  s.intervals = {uncertainty::PointUncertainty{}, u};  // the first drew no members
  const std::vector<PredictedPoint> points = PredictedPoints(s);
  EXPECT_FALSE(points[0].input_tps_interval);
  ASSERT_TRUE(points[1].input_tps_interval);
  EXPECT_EQ(points[1].input_tps_interval->high, 20);
  EXPECT_EQ(points[1].peak_gpu_mib_interval->low, 70000);
}

}  // namespace
}  // namespace ppsearch::analysis
