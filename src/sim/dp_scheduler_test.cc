// DP attention's schedulers: requests are dealt round robin to the ranks,
// each rank forms its own batches, and a step of the engine runs every
// rank's batch together, as long as the busiest rank's.

#include "sim/dp_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/engine.h"

namespace ppsearch::sim {
namespace {

SchedulerConfig DpConfig(int dp) {
  SchedulerConfig c;
  c.chunked_prefill_size = 8192;
  c.max_running_requests = 64;
  c.dp_size = dp;
  return c;
}

TEST(DpScheduler, DealsRequestsRoundRobinOverTheRanks) {
  DpScheduler s(DpConfig(3), std::nullopt);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(s.AddRequest(100, 4), i);
  const std::vector<int> ranks = {s.rank_of(0), s.rank_of(1), s.rank_of(2), s.rank_of(3),
                                  s.rank_of(4), s.rank_of(5), s.rank_of(6)};
  EXPECT_EQ(ranks, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(DpScheduler, AStepHoldsEveryRanksBatchAndIdleRanksRunAnIdleBatch) {
  DpScheduler s(DpConfig(2), std::nullopt);
  for (int i = 0; i < 3; ++i) s.Enqueue(s.AddRequest(100 * (i + 1), 2));
  // Rank 0 holds requests 0 and 2 (100 and 300 tokens), rank 1 request 1 (200).
  MicroBatch step = s.NextBatch(0);
  ASSERT_EQ(step.dp_ranks.size(), 2u);
  EXPECT_TRUE(step.is_prefill);
  EXPECT_EQ(step.dp_ranks[0].extend_tokens(), 400);
  EXPECT_EQ(step.dp_ranks[1].extend_tokens(), 200);
  EXPECT_EQ(step.extend_tokens(), 600);
  ASSERT_EQ(step.dp_ranks[0].entries.size(), 2u);
  EXPECT_EQ(step.dp_ranks[0].entries[1].request, 2);  // ids are global
  std::vector<int> first, done;
  s.ApplyResult(0, step, &first, &done);
  std::sort(first.begin(), first.end());
  EXPECT_EQ(first, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(s.running_requests(), 3);
  // Decode: both ranks advance; each request then has its 2 tokens.
  step = s.NextBatch(0);
  ASSERT_EQ(step.dp_ranks.size(), 2u);
  EXPECT_FALSE(step.is_prefill);
  EXPECT_EQ(step.dp_ranks[0].entries.size(), 2u);
  EXPECT_EQ(step.dp_ranks[1].entries.size(), 1u);
  first.clear();
  s.ApplyResult(0, step, &first, &done);
  std::sort(done.begin(), done.end());
  EXPECT_EQ(done, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(s.Idle());
  EXPECT_TRUE(s.NextBatch(0).empty());

  // One request: rank 1 has nothing and joins with an empty (idle) batch.
  s.Enqueue(s.AddRequest(50, 1));  // the round robin's next rank is 1
  step = s.NextBatch(0);
  ASSERT_EQ(step.dp_ranks.size(), 2u);
  EXPECT_TRUE(step.dp_ranks[0].empty());
  EXPECT_EQ(step.dp_ranks[1].extend_tokens(), 50);
}

TEST(DpScheduler, OneRankPassesBatchesThroughUnchanged) {
  DpScheduler s(DpConfig(1), std::nullopt);
  s.Enqueue(s.AddRequest(100, 2));
  MicroBatch step = s.NextBatch(0);
  EXPECT_TRUE(step.dp_ranks.empty());
  EXPECT_EQ(step.extend_tokens(), 100);
}

// Each rank's batch costs 1 us per token it computes; a step lasts as long
// as its busiest rank's batch.
class BusiestRankCost : public CostModel {
 public:
  int num_stages() const override { return 1; }
  StageTime StageCost(int, const MicroBatch& b) const override {
    int64_t most = b.extend_tokens();
    if (!b.dp_ranks.empty()) {
      most = 0;
      for (const auto& part : b.dp_ranks) most = std::max(most, part.extend_tokens());
    }
    StageTime t;
    t.compute_ns = 1000 * most;
    return t;
  }
  int64_t HopNs(int, const MicroBatch&) const override { return 0; }
  int64_t OutputReturnNs(const MicroBatch&) const override { return 0; }
  int64_t ScheduleNs(const MicroBatch&) const override { return 0; }
  int64_t IngestNs(int64_t) const override { return 0; }
  int64_t StreamOutNs() const override { return 0; }
};

TEST(DpEngine, AStepWaitsForTheBusiestRank) {
  // Two requests of one output token, 1000 and 100 prompt tokens, sent at
  // once: rank 0 prefills 1000 tokens, rank 1 100, in one step of 1000 us;
  // both first tokens come at its end. Without DP the one scheduler would
  // prefill both in one batch of 1100 us.
  const std::vector<workload::PlannedRequest> planned = {{0, 1000, 1, 0}, {1, 100, 1, 0}};
  const BusiestRankCost cost;
  SimResult dp = Simulate(DpConfig(2), cost, planned, 2);
  ASSERT_EQ(dp.records.size(), 2u);
  EXPECT_EQ(dp.records[0].first_token_ns, 1'000'000);
  EXPECT_EQ(dp.records[1].first_token_ns, 1'000'000);
  EXPECT_EQ(dp.prefill_batches, 1);
  SimResult one = Simulate(DpConfig(1), cost, planned, 2);
  EXPECT_EQ(one.records[0].first_token_ns, 1'100'000);
  EXPECT_EQ(one.records[1].first_token_ns, 1'100'000);
}

TEST(DpEngine, EachRankHasItsOwnChunkAndPool) {
  // Four requests of 3 output tokens over two ranks of 2 requests each; every
  // request completes with all its tokens.
  workload::WorkloadParams w;
  w.num_requests = 4;
  w.input_tokens = 300;
  w.output_tokens = 3;
  const BusiestRankCost cost;
  SchedulerConfig c = DpConfig(2);
  c.chunked_prefill_size = 256;  // each rank chunks its own prompts
  SimResult r = Simulate(c, cost, workload::PlanRequests(w), 4);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.output_tokens, 3);
    EXPECT_EQ(rec.chunk_ns.size(), 3u);
  }
  // Both ranks chunk 2 x 300 tokens in steps of 256: 600 / 256 -> 3 prefill steps.
  EXPECT_EQ(r.prefill_batches, 3);
  EXPECT_LE(r.peak_running_requests, 4);
}

}  // namespace
}  // namespace ppsearch::sim
