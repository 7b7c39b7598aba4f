#include "stats/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace ppsearch::stats {
namespace {

TEST(StatsTest, PercentileMatchesNumpyLinear) {
  // np.percentile([1, 2, 3, 4], 95) = 3.85; [.., 50] = 2.5; [.., 0] = 1.
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(Percentile(v, 95), 3.85);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 4);
  // np.percentile([10, 20, 30, 40, 50], 99) = 49.6
  EXPECT_NEAR(Percentile({10, 20, 30, 40, 50}, 99), 49.6, 1e-12);
  EXPECT_DOUBLE_EQ(Percentile({7}, 95), 7);
}

// Summarize selects its order statistics instead of sorting per
// percentile; the figures are Percentile's, ties and repeats included.
TEST(StatsTest, SummarizeEqualsPercentileAtEverySize) {
  for (int n = 1; n <= 60; ++n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
      v.push_back(static_cast<double>((i * 37 + n) % 11) + 0.25 * (i % 3));
    const LatencySummary s = Summarize(v);
    EXPECT_EQ(s.p50, Percentile(v, 50)) << n;
    EXPECT_EQ(s.p90, Percentile(v, 90)) << n;
    EXPECT_EQ(s.p95, Percentile(v, 95)) << n;
    EXPECT_EQ(s.p99, Percentile(v, 99)) << n;
    EXPECT_EQ(s.max, Percentile(v, 100)) << n;
  }
}

TEST(StatsTest, SpreadIsRangeOverMedian) {
  EXPECT_DOUBLE_EQ(Spread({99, 100, 101}), 0.02);
  EXPECT_DOUBLE_EQ(Spread({5}), 0);
}

TEST(StatsTest, CorrelationIsPearsonAndRankCorrelationSpearmanWithMeanRanksForTies) {
  const std::vector<double> x = {1, 2, 3, 4, 5}, y = {2, 4, 5, 4, 5};
  EXPECT_NEAR(Correlation(x, y), 6 / std::sqrt(60.0), 1e-12);
  // Ranks of y: 1, 2.5, 4.5, 2.5, 4.5.
  EXPECT_NEAR(RankCorrelation(x, y), 7 / std::sqrt(90.0), 1e-12);
  // Monotone but not linear: rank correlation 1, Pearson below it.
  const std::vector<double> cubes = {1, 8, 27, 64, 125};
  EXPECT_DOUBLE_EQ(RankCorrelation(x, cubes), 1.0);
  EXPECT_LT(Correlation(x, cubes), 0.99);
  EXPECT_NEAR(Correlation(x, {10, 8, 6, 4, 2}), -1.0, 1e-12);
  EXPECT_EQ(Correlation(x, {3, 3, 3, 3, 3}), 0.0);
  EXPECT_EQ(Correlation({1}, {2}), 0.0);
  EXPECT_EQ(Correlation(x, {1, 2}), 0.0);
}

TEST(StatsTest, SampleMetricsCountErrorsAndUseFirstSendToLastEnd) {
  std::vector<workload::RequestRecord> recs(3);
  recs[0] = {0, 0, 1'000'000'000, 2'000'000'000, 1000, 1000, 1, 200, workload::RequestStatus::kOk,
             ""};
  recs[1] = {1,
             500'000'000,
             3'000'000'000,
             4'000'000'000,
             1000,
             1000,
             1,
             200,
             workload::RequestStatus::kOk,
             ""};
  recs[2] = {
      2,     600'000'000, -1, 700'000'000, 1000, -1, 0, 500, workload::RequestStatus::kHttpError,
      "boom"};
  SampleMetrics m = ComputeSampleMetrics(recs);
  EXPECT_EQ(m.requests_completed, 2);
  EXPECT_EQ(m.request_errors, 1);
  EXPECT_DOUBLE_EQ(m.duration_s, 4.0);
  EXPECT_DOUBLE_EQ(m.input_tps, 500.0);  // 2000 tokens / 4 s
  EXPECT_DOUBLE_EQ(m.ttft_s.p50, 1.75);  // ttfts 1.0 and 2.5
}

// Hand-worked: request A sends at 0, first token at 100 ms, then chunks
// 10 ms (1 token), 30 ms (3 tokens) and 20 ms (1 token) apart, end at
// 160 ms with 6 output tokens: ITL 10, 10, 10, 10, 20 ms; TPOT
// (160 - 100) / 5 = 12 ms. Request B (1 token) adds no ITL and no TPOT.
TEST(StatsTest, TpotIsPerRequestAndItlSpreadsAChunkGapOverItsTokens) {
  workload::RequestRecord a;
  a.first_token_ns = 100'000'000;
  a.end_ns = 160'000'000;
  a.output_tokens = 6;
  a.chunk_gaps_us = {10'000, 30'000, 20'000};
  a.chunk_tokens = {1, 3, 1};
  workload::RequestRecord b;
  b.id = 1;
  b.first_token_ns = 50'000'000;
  b.end_ns = 50'000'000;
  b.output_tokens = 1;
  ASSERT_TRUE(TimePerOutputTokenS(a).has_value());
  EXPECT_DOUBLE_EQ(*TimePerOutputTokenS(a), 0.012);
  EXPECT_FALSE(TimePerOutputTokenS(b).has_value());
  std::vector<double> itl;
  AppendInterTokenLatenciesS(a, itl);
  EXPECT_EQ(itl, (std::vector<double>{0.01, 0.01, 0.01, 0.01, 0.02}));
  const SampleMetrics m = ComputeSampleMetrics({a, b});
  EXPECT_EQ(m.tpot_requests, 1);
  EXPECT_EQ(m.itl_values, 5);
  EXPECT_DOUBLE_EQ(m.tpot_s.p50, 0.012);
  EXPECT_DOUBLE_EQ(m.itl_s.mean, 0.012);
  EXPECT_DOUBLE_EQ(m.itl_s.p50, 0.01);
  // numpy: h = 4 * 0.9 = 3.6 -> 0.01 + 0.6 * (0.02 - 0.01).
  EXPECT_DOUBLE_EQ(m.itl_s.p90, 0.016);
  EXPECT_DOUBLE_EQ(m.itl_s.max, 0.02);
  // Without chunk_tokens every chunk carried one token.
  a.chunk_tokens.clear();
  itl.clear();
  AppendInterTokenLatenciesS(a, itl);
  EXPECT_EQ(itl, (std::vector<double>{0.01, 0.03, 0.02}));
}

// The simulator's records carry chunk arrival times (chunk_ns) instead.
TEST(StatsTest, TpotAndItlOfSimulatedRecords) {
  // Request 0: 5 tokens, first at 1.0 s, then 0.1 s apart but one gap of
  // 0.3 s: e2e 1.6 s, TPOT (1.6 - 1.0) / 4 = 0.15 s. Request 1: 1 token,
  // no TPOT and no gaps.
  std::vector<workload::RequestRecord> recs(2);
  recs[0].first_token_ns = 1'000'000'000;
  recs[0].end_ns = 1'600'000'000;
  recs[0].output_tokens = 5;
  recs[0].chunk_ns = {1'000'000'000, 1'100'000'000, 1'200'000'000, 1'500'000'000, 1'600'000'000};
  recs[1].first_token_ns = 400'000'000;
  recs[1].end_ns = 400'000'000;
  recs[1].output_tokens = 1;
  recs[1].chunk_ns = {400'000'000};
  const SampleMetrics m = ComputeSampleMetrics(recs);
  EXPECT_DOUBLE_EQ(m.tpot_s.p50, 0.15);
  EXPECT_DOUBLE_EQ(m.tpot_s.max, 0.15);
  // Gaps 0.1, 0.1, 0.3, 0.1: median 0.1; p99 at h = 3 x 0.99 = 2.97 of the
  // sorted 0.1, 0.1, 0.1, 0.3: 0.1 + 0.97 x 0.2 = 0.294.
  EXPECT_NEAR(m.itl_s.p50, 0.1, 1e-12);
  EXPECT_NEAR(m.itl_s.p99, 0.294, 1e-12);
  EXPECT_NEAR(m.output_tps, 6 / 1.6, 1e-9);  // 6 tokens, first send 0 to last end 1.6 s
}

// Hand-worked goodput: over 0 to 4 s, three completed requests and one error.
//   A: send 0, first token 0.5 s, end 2.5 s, 5 tokens 0.5 s apart: TPOT 0.5 s, ITL 0.5 s.
//   B: send 0, first token 1.5 s, end 2.0 s, 5 tokens 0.125 s apart.
//   C: send 1.0 s, first token 1.2 s, end 4.0 s, 2 tokens: TPOT and ITL 2.8 s, e2e 3.0 s.
TEST(StatsTest, GoodputCountsRequestsMeetingEveryLimitOnTheirOwnFigures) {
  auto simulated = [](int64_t id, double send_s, std::vector<double> chunks_s) {
    workload::RequestRecord r;
    r.id = id;
    r.send_ns = static_cast<int64_t>(send_s * 1e9);
    for (double t : chunks_s) r.chunk_ns.push_back(static_cast<int64_t>(t * 1e9));
    r.first_token_ns = r.chunk_ns.front();
    r.end_ns = r.chunk_ns.back();
    r.output_tokens = static_cast<int64_t>(chunks_s.size());
    return r;
  };
  std::vector<workload::RequestRecord> recs = {simulated(0, 0, {0.5, 1.0, 1.5, 2.0, 2.5}),
                                               simulated(1, 0, {1.5, 1.625, 1.75, 1.875, 2.0}),
                                               simulated(2, 1.0, {1.2, 4.0})};
  recs.push_back(simulated(3, 0.2, {0.3}));
  recs[3].status = workload::RequestStatus::kHttpError;
  auto goodput = [&](decide::SlaMetric a, double a_s, decide::SlaMetric b, double b_s) {
    decide::SlaLimits limits;
    limits[a] = a_s;
    limits[b] = b_s;
    return ComputeSampleMetrics(recs, limits).goodput_rps;
  };
  using decide::SlaMetric;
  // TTFT <= 1 s and TPOT <= 0.6 s: only A (B's TTFT is 1.5 s, C's TPOT 2.8 s).
  EXPECT_DOUBLE_EQ(goodput(SlaMetric::kTtft, 1.0, SlaMetric::kTpot, 0.6), 1 / 4.0);
  EXPECT_DOUBLE_EQ(goodput(SlaMetric::kTpot, 3.0, SlaMetric::kTtft, 2.0), 3 / 4.0);
  // E2E <= 2 s: only B (A 2.5 s, C 3.0 s); ITL p99 <= 0.3 s: only B.
  EXPECT_DOUBLE_EQ(goodput(SlaMetric::kE2e, 2.0, SlaMetric::kE2e, 2.0), 1 / 4.0);
  EXPECT_DOUBLE_EQ(goodput(SlaMetric::kItl, 0.3, SlaMetric::kTtft, 10), 1 / 4.0);
  // Without limits every completed request counts.
  const SampleMetrics m = ComputeSampleMetrics(recs);
  EXPECT_EQ(m.requests_good, 3);
  EXPECT_DOUBLE_EQ(m.goodput_rps, m.request_throughput);
}

// Requests sent at uneven (Poisson-like) times: a server that answers each
// a fixed TTFT after its send keeps the pace at 1 whatever the gaps; one
// that admits a request only when the last one is served, every 250 ms,
// against sends every 100 ms on average, paces at their ratio.
TEST(FirstTokenPace, IsOneWhenAnsweredAsSentAndCapacityOverRateWhenRequestsQueue) {
  const std::vector<int64_t> gaps_ms = {30, 250, 10, 90, 140, 20, 60, 200, 50, 150, 80, 120};
  std::vector<workload::RequestRecord> kept(gaps_ms.size()), queued(gaps_ms.size());
  int64_t send_ms = 0, free_ms = 0;
  for (size_t i = 0; i < gaps_ms.size(); ++i) {
    send_ms += gaps_ms[i];
    for (auto* r : {&kept[i], &queued[i]}) {
      r->id = static_cast<int64_t>(i);
      r->send_ns = send_ms * 1'000'000;
      r->output_tokens = 1;
      r->http_status = 200;
    }
    kept[i].first_token_ns = (send_ms + 400) * 1'000'000;
    free_ms = std::max(free_ms, send_ms) + 250;
    queued[i].first_token_ns = free_ms * 1'000'000;
    kept[i].end_ns = kept[i].first_token_ns;
    queued[i].end_ns = queued[i].first_token_ns;
  }
  EXPECT_DOUBLE_EQ(FirstTokenPace(kept), 1.0);
  EXPECT_DOUBLE_EQ(ComputeSampleMetrics(kept).first_token_pace, 1.0);
  // The middle half of the sends (the 25th to the 75th percentile of 12
  // sends, interpolated) spans 530 ms; the queue answers them 250 ms apart.
  const double sent_ms = (850 + 0.25 * 150) - (290 + 0.75 * 90);
  EXPECT_NEAR(FirstTokenPace(queued), sent_ms / (5.5 * 250), 1e-12);
  EXPECT_LT(FirstTokenPace(queued), 0.8);
}

TEST(FirstTokenPace, IsUnknownWithoutFourAnsweredRequestsOrWithEveryRequestSentAtOnce) {
  std::vector<workload::RequestRecord> v(4);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i].send_ns = 0;
    v[i].first_token_ns = static_cast<int64_t>(i + 1) * 1'000'000;
    v[i].end_ns = v[i].first_token_ns;
    v[i].output_tokens = 1;
  }
  EXPECT_EQ(FirstTokenPace(v), 0) << "every request sent at once: no rate to keep";
  for (size_t i = 0; i < v.size(); ++i) v[i].send_ns = static_cast<int64_t>(i) * 1'000'000;
  EXPECT_DOUBLE_EQ(FirstTokenPace(v), 1.0);
  v[3].status = workload::RequestStatus::kHttpError;
  EXPECT_EQ(FirstTokenPace(v), 0) << "three answered requests";
}

TEST(NormalQuantile, MatchesTables) {
  EXPECT_DOUBLE_EQ(NormalQuantile(0.5), 0);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.1), -1.2815515655446004, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232306167813, 1e-11);
  EXPECT_NEAR(NormalQuantile(0.999999), 4.753424308822899, 1e-9);
}

TEST(ExpectedMaxOfNormals, CloseToTheExactOrderStatistic) {
  EXPECT_DOUBLE_EQ(ExpectedMaxOfNormals(1), 0);
  EXPECT_NEAR(ExpectedMaxOfNormals(2), 0.5642, 0.5642 * 0.05);  // 1 / sqrt(pi)
  EXPECT_NEAR(ExpectedMaxOfNormals(4), 1.0294, 1.0294 * 0.02);
  EXPECT_NEAR(ExpectedMaxOfNormals(32), 2.0697, 2.0697 * 0.01);
}

}  // namespace

}  // namespace ppsearch::stats
