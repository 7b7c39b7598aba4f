#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ppsearch::sim {
namespace {

// Stage time linear in tokens; fixed hop, output return and host costs.
class LinearCost : public CostModel {
 public:
  LinearCost(int stages, int64_t per_token_ns, int64_t per_batch_ns = 0, int64_t hop_ns = 0)
      : stages_(stages),
        per_token_ns_(per_token_ns),
        per_batch_ns_(per_batch_ns),
        hop_ns_(hop_ns) {}
  int num_stages() const override { return stages_; }
  StageTime StageCost(int, const MicroBatch& b) const override {
    StageTime t;
    t.compute_ns = per_batch_ns_ + per_token_ns_ * b.extend_tokens();
    return t;
  }
  int64_t HopNs(int, const MicroBatch&) const override { return hop_ns_; }
  int64_t OutputReturnNs(const MicroBatch&) const override { return hop_ns_; }
  int64_t ScheduleNs(const MicroBatch&) const override { return 0; }
  int64_t IngestNs(int64_t) const override { return 0; }
  int64_t StreamOutNs() const override { return 0; }

 private:
  int stages_;
  int64_t per_token_ns_, per_batch_ns_, hop_ns_;
};

std::vector<workload::PlannedRequest> Requests(int n, int64_t input, int64_t output) {
  workload::WorkloadParams p;
  p.num_requests = n;
  p.input_tokens = input;
  p.output_tokens = output;
  return workload::PlanRequests(p);
}

SchedulerConfig Config(int pp, int64_t chunk) {
  SchedulerConfig c;
  c.pp_size = pp;
  c.num_slots = pp;
  c.chunked_prefill_size = chunk;
  c.max_running_requests = 256;
  return c;
}

// LinearCost with a host that takes `schedule_ns` to form each batch.
class HostBoundCost : public LinearCost {
 public:
  HostBoundCost(int64_t step_ns, int64_t schedule_ns)
      : LinearCost(1, 0, step_ns), schedule_ns_(schedule_ns) {}
  int64_t ScheduleNs(const MicroBatch&) const override { return schedule_ns_; }

 private:
  int64_t schedule_ns_;
};

std::vector<int64_t> ChunkGaps(const workload::RequestRecord& r) {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < r.chunk_ns.size(); ++i) gaps.push_back(r.chunk_ns[i] - r.chunk_ns[i - 1]);
  return gaps;
}

TEST(EngineTest, OverlapSchedulerHidesTheHostBehindDecodeSteps) {
  // 100 us per step, 30 us of host work per batch, one request of 5 tokens.
  SchedulerConfig c = Config(1, 8192);
  const HostBoundCost cost(100'000, 30'000);
  SimResult serial = Simulate(c, cost, Requests(1, 100, 5), 1);
  ASSERT_EQ(serial.records[0].chunk_ns.size(), 5u);
  EXPECT_EQ(serial.records[0].chunk_ns[0], serial.records[0].first_token_ns);
  EXPECT_EQ(ChunkGaps(serial.records[0]), std::vector<int64_t>(4, 130'000));
  // Overlapped, the host forms the next step while the GPU runs this one.
  c.overlap_schedule = true;
  SimResult overlapped = Simulate(c, cost, Requests(1, 100, 5), 1);
  EXPECT_EQ(ChunkGaps(overlapped.records[0]), std::vector<int64_t>(4, 100'000));
  EXPECT_EQ(overlapped.records[0].first_token_ns, serial.records[0].first_token_ns);
  // A host slower than the GPU paces the steps.
  SimResult host_bound = Simulate(c, HostBoundCost(100'000, 150'000), Requests(1, 100, 5), 1);
  EXPECT_EQ(ChunkGaps(host_bound.records[0]), std::vector<int64_t>(4, 150'000));
}

TEST(EngineTest, SingleRequestTtftIsSumOfChunks) {
  // 16,000 tokens in chunks of 8192: 8192 + 7808; 1 us per token on one stage.
  LinearCost cost(1, 1000);
  SimResult r = Simulate(Config(1, 8192), cost, Requests(1, 16000, 1), 1);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].first_token_ns, 16000 * 1000);
  EXPECT_EQ(r.prefill_batches, 2);
  EXPECT_EQ(r.records[0].output_tokens, 1);
}

// What a server's activations follow (memory/served.h): each prefill
// batch's shape, its tokens and the prompts ending in it (the front of
// them), and the largest decode step. Long prompts fill the chunk and end
// one per batch; 64 prompts of 300 tokens end 27 in the first full chunk
// (the 28th continues into the next), and their decode steps hold all 64;
// one short prompt alone is a batch of its own length.
TEST(EngineTest, TheBatchesRunAreCountedByTheirShapes) {
  LinearCost cost(1, 1000);
  const SimResult longer = Simulate(Config(1, 8192), cost, Requests(4, 16000, 1), 4);
  EXPECT_EQ(longer.prefill_shapes, (std::vector<BatchShape>{{8192, 1}}));
  EXPECT_EQ(longer.peak_decode_batch, 0);
  const SimResult shorter = Simulate(Config(1, 8192), cost, Requests(64, 300, 16), 64);
  ASSERT_FALSE(shorter.prefill_shapes.empty());
  EXPECT_EQ(shorter.prefill_shapes.front(), (BatchShape{8192, 27}));
  EXPECT_EQ(shorter.peak_decode_batch, 64);
  const SimResult one = Simulate(Config(1, 8192), cost, Requests(1, 300, 1), 1);
  EXPECT_EQ(one.prefill_shapes, (std::vector<BatchShape>{{300, 1}}));
}

TEST(EngineTest, ChunksOfOneRequestOverlapAcrossStages) {
  // PP2, each stage 0.5 us/token. Chunk 2 runs on stage 0 (4096..8000 us)
  // while chunk 1 runs on stage 1 (4096..8192 us); chunk 2 then follows on
  // stage 1 until 8192 + 3904 us. Serial would be 2 x 8000 us.
  LinearCost cost(2, 500);
  SimResult r = Simulate(Config(2, 8192), cost, Requests(1, 16000, 1), 1);
  EXPECT_EQ(r.records[0].first_token_ns, (8192 + 8192 + 7808) * 500);
  EXPECT_EQ(r.stages[0].idle_ns, 8192 * 500);  // stage 0 waits for stage 1's last chunk
}

TEST(EngineTest, StageHandOffIsARendezvousThatHoldsTheSender) {
  // PP2, 0.5 us/token per stage, 1 ms per hop (and for the output return).
  //   chunk 1 (8192): stage 0 0..4,096,000; stage 1 is free, so the send
  //     runs 4,096,000..5,096,000 and holds stage 0's stream until then;
  //     stage 1 5,096,000..9,192,000.
  //   chunk 2 (7808): stage 0 5,096,000..9,000,000; stage 1 posts its recv
  //     only after chunk 1, so the send runs 9,192,000..10,192,000;
  //     stage 1 10,192,000..14,096,000; + 1 ms back to stage 0 = 15,096,000.
  // A buffered hand-off (the send in the background) would give 14,096,000.
  LinearCost cost(2, 500, 0, 1'000'000);
  SimResult r = Simulate(Config(2, 8192), cost, Requests(1, 16000, 1), 1);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].first_token_ns, 15'096'000);
}

TEST(EngineTest, ClosedLoopObeysLittlesLaw) {
  LinearCost cost(1, 1000, 2'000'000);
  const int c = 8;
  SimResult r = Simulate(Config(1, 8192), cost, Requests(80, 16000, 1), c);
  double tokens = 80.0 * 16000;
  double tps = tokens / (r.window_ns * 1e-9);
  std::vector<double> ttft;
  for (const auto& rec : r.records) ttft.push_back(rec.ttft_s());
  std::sort(ttft.begin(), ttft.end());
  double median = ttft[ttft.size() / 2];
  // Little: time in system ~= C * prompt / throughput once the loop is full.
  EXPECT_NEAR(median, c * 16000 / tps, 0.1 * median);
}

TEST(EngineTest, SingleStageHasNoBubbleUnderLoad) {
  LinearCost cost(1, 1000);
  SimResult r = Simulate(Config(1, 8192), cost, Requests(16, 16000, 1), 4);
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_EQ(r.stages[0].idle_ns, 0);
}

TEST(EngineTest, DeterministicForSameInputs) {
  LinearCost cost(4, 300, 1'000'000, 50'000);
  auto a = Simulate(Config(4, 8192), cost, Requests(40, 12000, 4), 8);
  auto b = Simulate(Config(4, 8192), cost, Requests(40, 12000, 4), 8);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(a.records[i].first_token_ns, b.records[i].first_token_ns);
    EXPECT_EQ(a.records[i].end_ns, b.records[i].end_ns);
  }
}

TEST(EngineTest, MicroBatchCapOfOneSlowsDecodingWorkloadAtPp4) {
  // Requests that decode: finished prefills join their slot's running batch,
  // so a cap of 1 leaves at most one decoding request per slot.
  LinearCost cost(4, 100, 5'000'000);
  SchedulerConfig def = Config(4, 8192);
  SchedulerConfig capped = def;
  capped.pp_max_micro_batch_size = 1;
  auto reqs = Requests(64, 2000, 32);
  SimResult a = Simulate(def, cost, reqs, 16);
  SimResult b = Simulate(capped, cost, reqs, 16);
  EXPECT_EQ(a.pp_max_micro_batch_size, 64);  // 256 // 4
  EXPECT_EQ(b.pp_max_micro_batch_size, 1);
  EXPECT_GT(b.window_ns, 2 * a.window_ns);
  for (const auto& rec : b.records) EXPECT_EQ(rec.output_tokens, 32);
}

TEST(EngineTest, OpenLoopSendsAtPlannedArrivals) {
  LinearCost cost(1, 10);
  workload::WorkloadParams p;
  p.num_requests = 20;
  p.input_tokens = 100;
  p.request_rate = 10;
  p.seed = 7;
  auto reqs = workload::PlanRequests(p);
  SimResult r = Simulate(Config(1, 8192), cost, reqs, 0);
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(r.records[i].send_ns, reqs[i].arrival_ns);
}

// bench_serving's --max-concurrency: a request due while the cap is
// reached waits for a slot, so it is sent at its arrival or at a finish,
// whichever is later, and never more than the cap are in flight.
TEST(EngineTest, OpenLoopWithACapSendsAtArrivalOrWhenASlotFrees) {
  LinearCost cost(1, 1000);  // 4 ms per prompt, against arrivals 1 ms apart
  workload::WorkloadParams p;
  p.num_requests = 40;
  p.input_tokens = 4000;
  p.request_rate = 1000;  // far faster than the engine serves
  p.seed = 7;
  auto reqs = workload::PlanRequests(p);
  const int cap = 3;
  SimResult r = Simulate(Config(1, 8192), cost, reqs, cap);
  int delayed = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const auto& rec = r.records[i];
    ASSERT_GE(rec.send_ns, reqs[i].arrival_ns);
    if (rec.send_ns > reqs[i].arrival_ns) {
      ++delayed;
      // Sent the moment an earlier request finished.
      bool at_a_finish = false;
      for (size_t j = 0; j < i; ++j) at_a_finish |= r.records[j].end_ns == rec.send_ns;
      EXPECT_TRUE(at_a_finish) << "request " << i;
    }
    int in_flight = 0;
    for (const auto& other : r.records)
      in_flight += other.send_ns <= rec.send_ns && other.end_ns > rec.send_ns ? 1 : 0;
    EXPECT_LE(in_flight, cap) << "at request " << i << "'s send";
  }
  EXPECT_GT(delayed, 20);
  // Without the cap every request goes at its arrival.
  SimResult free = Simulate(Config(1, 8192), cost, reqs, 0);
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(free.records[i].send_ns, reqs[i].arrival_ns);
}

TEST(EngineTest, RequestLargerThanKvPoolFailsWithoutHanging) {
  LinearCost cost(1, 10);
  SchedulerConfig c = Config(1, 8192);
  c.max_total_tokens = 1000;
  SimResult r = Simulate(c, cost, Requests(2, 5000, 1), 1);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.status, workload::RequestStatus::kHttpError);
    EXPECT_EQ(rec.error, "request does not fit the KV cache pool");
  }
}

}  // namespace
}  // namespace ppsearch::sim
