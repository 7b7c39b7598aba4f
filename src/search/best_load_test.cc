// The best load point on hand-built candidates whose SLA figures are a
// known function of the load: the bisection lands on the known break, the
// screen leaves alone a candidate that could not rank higher, and the limit
// that binds next is the one the next load misses.

#include "search/best_load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace ppsearch::search {
namespace {

using ::testing::ElementsAre;

// A candidate whose TTFT p99 is `ttft_per_request` x C and whose output
// throughput per GPU is `tps_per_request` x C: a TTFT limit L breaks above
// C = L / ttft_per_request.
PointFigures Closed(int c, double ttft_per_request, double tps_per_request) {
  PointFigures f;
  f.load.concurrency = c;
  f.sla[decide::SlaMetric::kTtft] = ttft_per_request * c;
  f.sla[decide::SlaMetric::kTpot] = 0.010;
  f.output_tps = f.output_tps_per_gpu = tps_per_request * c;
  return f;
}

decide::SlaLimits TtftLimit(double seconds) {
  decide::SlaLimits limits;
  limits[decide::SlaMetric::kTtft] = seconds;
  return limits;
}

Evaluated EvaluatedAt(double ttft_per_request, double tps_per_request,
                      const std::vector<int>& listed) {
  Evaluated e;
  for (int c : listed) e.points.push_back(Closed(c, ttft_per_request, tps_per_request));
  return e;
}

std::vector<int> Concurrencies(const std::vector<PointFigures>& points) {
  std::vector<int> out;
  for (const PointFigures& f : points) out.push_back(f.load.concurrency);
  return out;
}

TEST(BestLoad, BisectionLandsOnTheKnownBreakBetweenListedPoints) {
  // TTFT p99 1/16 s per request: C = 23 meets 1.4375 s exactly, C = 24 misses.
  const decide::SlaLimits limits = TtftLimit(1.4375);
  std::vector<Evaluated> v = {EvaluatedAt(0.0625, 10, {1, 16, 32, 64})};
  int calls = 0;
  const int probes =
      FindBestLoads(v, limits, decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu), true,
                    [&](size_t, const LoadPoint& load) {
                      ++calls;
                      return Closed(load.concurrency, 0.0625, 10);
                    });
  ASSERT_TRUE(v[0].at);
  EXPECT_EQ(v[0].at->load.concurrency, 23);
  EXPECT_TRUE(v[0].at->probed);
  EXPECT_DOUBLE_EQ(v[0].at->output_tps_per_gpu, 230);
  // Between 16 (meets) and 32 (misses): 24 misses, 20, 22 and 23 meet.
  EXPECT_THAT(Concurrencies(v[0].probed), ElementsAre(24, 20, 22, 23));
  EXPECT_EQ(probes, 4);
  EXPECT_EQ(calls, 4);
  ASSERT_TRUE(v[0].binds_next);
  EXPECT_EQ(v[0].binds_next->metric, decide::SlaMetric::kTtft);
  EXPECT_DOUBLE_EQ(v[0].binds_next->use, 1.0);
  EXPECT_EQ(v[0].binds_next->missed_at->concurrency, 24);
  EXPECT_TRUE(v[0].meets_sla);
}

// A rate is written to two decimals (one from 10 up), and a rate below
// 0.005 to its first significant digit: 0.001 requests/s is not "0.00".
TEST(LoadPoint, ARateIsLabelledToWhatDistinguishesIt) {
  EXPECT_EQ((LoadPoint{64, 0.05}).Label(), "0.05 req/s, C<=64");
  EXPECT_EQ((LoadPoint{0, 12.5}).Label(), "12.5 req/s");
  EXPECT_EQ((LoadPoint{0, 0.001}).Label(), "0.001 req/s");
  EXPECT_EQ((LoadPoint{0, 0.0042}).RateText(), "0.004");
  EXPECT_EQ((LoadPoint{8, 0}).Label(), "C=8");
}

TEST(BestLoad, ARequestRateIsBisectedToItsResolution) {
  // TTFT p99 2 s per request/s: the 0.75 s limit breaks above 0.375 req/s.
  const decide::SlaLimits limits = TtftLimit(0.75);
  auto open = [](double rate) {
    PointFigures f;
    f.load = {64, rate};
    f.sla[decide::SlaMetric::kTtft] = 2 * rate;
    f.output_tps = f.output_tps_per_gpu = 100 * rate;
    return f;
  };
  Evaluated e;
  e.points = {open(0.25), open(0.5)};
  std::vector<Evaluated> v = {e};
  FindBestLoads(v, limits, decide::Objective(decide::Objective::Kind::kOutputTps), true,
                [&](size_t, const LoadPoint& load) { return open(load.request_rate); });
  ASSERT_TRUE(v[0].at);
  EXPECT_LE(v[0].at->load.request_rate, 0.375);
  EXPECT_GT(v[0].at->load.request_rate, 0.375 * (1 - kRateResolution));
  EXPECT_EQ(v[0].at->load.concurrency, 64);
}

TEST(BestLoad, TheScreenSkipsACandidateThatCouldNotRankHigher) {
  // The first reaches 230 tokens/s per GPU at C = 23; the second's listed
  // miss (C = 32 at 5 tokens/s per request: 160) is below that, so its gap
  // is not bisected and it stays at its listed C = 16. Exhaustive: C = 28,
  // where its TTFT p99 (1.4 s) still meets the limit.
  const decide::SlaLimits limits = TtftLimit(1.4375);
  auto run = [&](bool screen) {
    std::vector<Evaluated> v = {EvaluatedAt(0.0625, 10, {16, 32}), EvaluatedAt(0.05, 5, {16, 32})};
    FindBestLoads(v, limits, decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu), screen,
                  [&](size_t i, const LoadPoint& load) {
                    return i == 0 ? Closed(load.concurrency, 0.0625, 10)
                                  : Closed(load.concurrency, 0.05, 5);
                  });
    return v;
  };
  const std::vector<Evaluated> screened = run(true);
  EXPECT_EQ(screened[0].at->load.concurrency, 23);
  EXPECT_EQ(screened[1].at->load.concurrency, 16);
  EXPECT_TRUE(screened[1].probed.empty());
  const std::vector<Evaluated> exhaustive = run(false);
  EXPECT_EQ(exhaustive[0].at->load.concurrency, 23);
  EXPECT_EQ(exhaustive[1].at->load.concurrency, 28);
  // Outside the headroom rule the first does not qualify: it sets no bar,
  // is not refined, and the second is.
  std::vector<Evaluated> v = {EvaluatedAt(0.0625, 10, {16, 32}), EvaluatedAt(0.05, 5, {16, 32})};
  v[0].meets_headroom = false;
  FindBestLoads(v, limits, decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu), true,
                [&](size_t i, const LoadPoint& load) {
                  return i == 0 ? Closed(load.concurrency, 0.0625, 10)
                                : Closed(load.concurrency, 0.05, 5);
                });
  EXPECT_TRUE(v[0].probed.empty());
  EXPECT_EQ(v[1].at->load.concurrency, 28);
}

TEST(BestLoad, WithoutLimitsTheBestObjectiveAndNoBisection) {
  std::vector<Evaluated> v = {EvaluatedAt(0.04, 10, {1, 8, 64})};
  v[0].points[1].output_tps_per_gpu = 1000;  // the peak at C = 8
  const int probes = FindBestLoads(
      v, decide::SlaLimits{}, decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu), true,
      [](size_t, const LoadPoint&) -> PointFigures { throw "no probe expected"; });
  EXPECT_EQ(probes, 0);
  EXPECT_EQ(v[0].at->load.concurrency, 8);
  EXPECT_FALSE(v[0].binds_next);
  // A lower-is-better objective: the lightest load, never bisected.
  std::vector<Evaluated> t = {EvaluatedAt(0.04, 10, {1, 16, 32})};
  for (PointFigures& f : t[0].points) f.ttft_p50_s = *f.sla[decide::SlaMetric::kTtft];
  FindBestLoads(t, TtftLimit(1.0), decide::Objective(decide::Objective::Kind::kTtftP50), true,
                [](size_t, const LoadPoint&) -> PointFigures { throw "no probe expected"; });
  EXPECT_EQ(t[0].at->load.concurrency, 1);
  // The limit the load above misses binds next.
  EXPECT_EQ(t[0].binds_next->missed_at->concurrency, 32);
}

TEST(BestLoad, ACandidateMissingEverywhereSaysItsFirstMissAndHowClose) {
  std::vector<Evaluated> v = {EvaluatedAt(0.04, 10, {32, 64})};
  FindBestLoads(v, TtftLimit(1.0), decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu),
                true, [](size_t, const LoadPoint&) -> PointFigures { throw "no probe expected"; });
  EXPECT_FALSE(v[0].at);
  EXPECT_FALSE(v[0].meets_sla);
  EXPECT_EQ(v[0].sla_miss, "C=32: TTFT p99 1.280 s > ttft_p99_s 1 s (+28.00%)");
  EXPECT_NEAR(v[0].sla_shortfall, 0.28, 1e-12);
  EXPECT_EQ(v[0].sla_missed_key, "ttft_p99_s");
}

TEST(BestLoad, BindsNextIsTheClosestLimitWhenNothingAboveMisses) {
  decide::SlaLimits limits = TtftLimit(10.0);
  limits[decide::SlaMetric::kTpot] = 0.020;                    // TPOT at 10 ms: half of it
  std::vector<Evaluated> v = {EvaluatedAt(0.04, 10, {1, 8})};  // TTFT 0.32 s at C = 8
  FindBestLoads(v, limits, decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu), true,
                [](size_t, const LoadPoint&) -> PointFigures { throw "no probe expected"; });
  ASSERT_TRUE(v[0].binds_next);
  EXPECT_EQ(v[0].binds_next->metric, decide::SlaMetric::kTpot);
  EXPECT_DOUBLE_EQ(v[0].binds_next->use, 0.5);
  EXPECT_FALSE(v[0].binds_next->missed_at);
}

// An open loop of 10,000 requests on a layout that completes at most 3
// requests/s, its end-to-end p50 2 s: at a rate it keeps up with it
// completes them over their sends and the last one's answer, above it at
// what it can. Its latencies stay low (the cap on requests in flight hides
// the waits for a slot), so every SLA limit holds at every rate.
PointFigures Open(double rate, double capacity_rps) {
  PointFigures f;
  f.load.request_rate = rate;
  f.load.concurrency = 64;
  f.requests = 10000;
  f.e2e_p50_s = 2;
  f.request_rps = 10000 / (10000 / std::min(rate, capacity_rps) + 2);
  f.sla[decide::SlaMetric::kTtft] = 0.5;
  f.output_tps = f.output_tps_per_gpu = 100 * f.request_rps;
  return f;
}

TEST(BestLoad, AnOpenLoopsBestRateIsTheHighestItKeepsUpWith) {
  for (const bool limits : {true, false}) {
    SCOPED_TRACE(limits ? "with a TTFT limit" : "without limits");
    std::vector<Evaluated> v(1);
    for (double rate : {1.0, 2.0, 4.0, 8.0}) v[0].points.push_back(Open(rate, 3));
    FindBestLoads(v, limits ? TtftLimit(1.0) : decide::SlaLimits{},
                  decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu), true,
                  [](size_t, const LoadPoint& load) { return Open(load.request_rate, 3); });
    ASSERT_TRUE(v[0].at);
    // 4 and 8 requests/s meet the limit and serve the most, but fell
    // behind. Bisected from 2 and 4: 3 keeps up, 3.5, 3.25 and 3.125 fall
    // behind (keeping up at 3.125 completes 3.12 where it completed 3.00,
    // beyond the sends' spread of 3%), 3.0625 is within it but serves no
    // more than 3, the lighter load.
    EXPECT_DOUBLE_EQ(v[0].at->load.request_rate, 3);
    std::vector<double> probed;
    for (const PointFigures& f : v[0].probed) probed.push_back(f.load.request_rate);
    EXPECT_THAT(probed, ElementsAre(3, 3.5, 3.25, 3.125, 3.0625));
    EXPECT_TRUE(v[0].probed.back().meets_sla);
    EXPECT_FALSE(KeepsUpAt(v[0].points[2]));
    EXPECT_FALSE(v[0].points[2].meets_sla);
    EXPECT_TRUE(v[0].meets_sla);
    if (limits) {
      ASSERT_TRUE(v[0].binds_next);
      EXPECT_TRUE(v[0].binds_next->keeping_up);
      EXPECT_DOUBLE_EQ(v[0].binds_next->missed_at->request_rate, 3.125);
    }
  }
  // 40 requests/s that it would complete, but 64 requests in flight for
  // 2 s each complete at most 32: the cap stays full, requests wait.
  const PointFigures capped = Open(40, 100);
  EXPECT_FALSE(KeepsUpAt(capped));
  EXPECT_EQ(FellBehindText(capped),
            "fell behind: 64 requests in flight at an end-to-end p50 of 2.00 s complete at most "
            "32.00 of the offered 40.00 requests/s");
  // Falling behind at every rate: how, at the lightest, and by how much.
  std::vector<Evaluated> v(1);
  for (double rate : {1.0, 2.0}) v[0].points.push_back(Open(rate, 0.5));
  FindBestLoads(v, TtftLimit(1.0), decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu),
                true, [](size_t, const LoadPoint&) -> PointFigures { throw "no probe expected"; });
  EXPECT_FALSE(v[0].at);
  EXPECT_FALSE(v[0].meets_sla);
  EXPECT_EQ(v[0].sla_missed_key, "keeping_up");
  EXPECT_EQ(v[0].sla_miss,
            "1.00 req/s, C<=64: fell behind: it completed 0.50 of the offered 1.00 requests/s, "
            "where keeping up completes about 1.00");
  // Keeping up at 1/s completes 10,000 / 10,002 s, less the sends' spread
  // (3%); it completed 10,000 / 20,002 s.
  EXPECT_NEAR(v[0].sla_shortfall, 0.97 * 20002.0 / 10002 - 1, 1e-9);
}

// A small sample's heaviest rate can look kept up (its middle half
// answered in one prefill batch: a pace it cannot tell) above a rate it
// fell behind at. Keeping up falls with the rate: the heavier one is no
// best load, and the break is bisected below the lighter miss.
TEST(BestLoad, ARateAboveOneItFellBehindAtIsNoBestLoad) {
  const auto at = [](double rate) {
    PointFigures f = Open(rate, 100);
    f.load.concurrency = 0;
    f.requests = 16;
    f.first_token_pace = rate == 128 ? 0 : rate >= 24 ? 0.4 : 1;
    return f;
  };
  std::vector<Evaluated> v(1);
  for (double rate : {8.0, 32.0, 128.0}) v[0].points.push_back(at(rate));
  FindBestLoads(v, decide::SlaLimits{},
                decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu), true,
                [&](size_t, const LoadPoint& load) { return at(load.request_rate); });
  EXPECT_TRUE(KeepsUpAt(v[0].points[2])) << "unknown pace, completions kept up";
  EXPECT_FALSE(KeepsUpAt(v[0].points[1]));
  ASSERT_TRUE(v[0].at);
  EXPECT_GE(v[0].at->load.request_rate, 8);
  EXPECT_LT(v[0].at->load.request_rate, 24);
  EXPECT_FALSE(v[0].probed.empty()) << "bisected between 8 and 32";
}

}  // namespace
}  // namespace ppsearch::search
