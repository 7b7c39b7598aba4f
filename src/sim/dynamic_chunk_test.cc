// Dynamic chunking: the profile and fit, and chunk sequences worked by hand
// on a cost whose fresh-prefill time is exactly l^2 ns.

#include "sim/dynamic_chunk.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/engine.h"
#include "sim/scheduler.h"

namespace ppsearch::sim {
namespace {

// Attention-like cost: extending a prefix of P tokens by x costs x (x + 2P)
// ns, so a fresh prefill of l tokens costs l^2 and f(P + x) - f(P) is exact.
class QuadraticCost : public CostModel {
 public:
  explicit QuadraticCost(int stages) : stages_(stages) {}
  int num_stages() const override { return stages_; }
  StageTime StageCost(int, const MicroBatch& b) const override {
    StageTime t;
    for (const auto& e : b.entries)
      t.compute_ns += e.extend_tokens * (e.extend_tokens + 2 * e.prefix_tokens);
    return t;
  }
  int64_t HopNs(int, const MicroBatch&) const override { return 0; }
  int64_t OutputReturnNs(const MicroBatch&) const override { return 0; }
  int64_t ScheduleNs(const MicroBatch&) const override { return 0; }
  int64_t IngestNs(int64_t) const override { return 0; }
  int64_t StreamOutNs() const override { return 0; }

 private:
  int stages_;
};

// Stage time 1 us per token: no curvature.
class FlatCost : public QuadraticCost {
 public:
  using QuadraticCost::QuadraticCost;
  StageTime StageCost(int, const MicroBatch& b) const override {
    StageTime t;
    t.compute_ns = 1000 * b.extend_tokens();
    return t;
  }
};

SchedulerConfig Pp2(int64_t chunk, double smooth) {
  SchedulerConfig c;
  c.pp_size = 2;
  c.num_slots = 2;
  c.chunked_prefill_size = chunk;
  c.max_running_requests = 16;
  c.dynamic_chunking.enabled = true;
  c.dynamic_chunking.smooth_factor = smooth;
  return c;
}

// The chunks one request of `input` tokens is cut into, scheduling slot
// after slot without waiting for results (as the PP event loop does).
std::vector<int64_t> Chunks(const SchedulerConfig& config, int64_t input) {
  QuadraticCost cost(2);
  Scheduler s(config, MakeChunkSizePredictor(cost, config.chunked_prefill_size,
                                             config.dynamic_chunking, config.page_size,
                                             config.context_len, config.max_prefill_tokens));
  s.Enqueue(s.AddRequest(input, 1));
  std::vector<int64_t> chunks;
  for (int i = 0; i < 64; ++i) {
    MicroBatch b = s.NextBatch(i % 2);
    if (b.empty()) break;
    chunks.push_back(b.extend_tokens());
  }
  return chunks;
}

TEST(DynamicChunkTest, ProfileLengthsFollowSglang) {
  std::vector<int64_t> l = ProfileLengths(4096);
  ASSERT_EQ(l.size(), 128u);
  EXPECT_EQ(l.front(), 5120);  // 4096 x 1.25
  EXPECT_EQ(l[1], 5120 - 40);  // step 5120 // 128
  EXPECT_EQ(l.back(), 5120 - 127 * 40);
}

TEST(DynamicChunkTest, FitRecoversAQuadratic) {
  std::vector<int64_t> lengths = ProfileLengths(8192);
  std::vector<double> times;
  for (int64_t l : lengths) times.push_back(3e-3 * l * l + 500.0 * l + 2e6);
  times[0] = 1e12;  // the dropped warm-up sample must not matter
  auto curve = FitPrefillCurve(lengths, times);
  ASSERT_TRUE(curve.has_value());
  EXPECT_NEAR(curve->a, 3e-3, 1e-9);
  EXPECT_NEAR(curve->b, 500.0, 1e-4);
  EXPECT_NEAR(curve->c, 2e6, 1.0);
}

TEST(DynamicChunkTest, FlatCurveIsNotConvexAndDisablesIt) {
  FlatCost cost(2);
  EXPECT_FALSE(MakeChunkSizePredictor(cost, 4096, {true, 0.75}, 1, 0, 16384).has_value());
  workload::WorkloadParams p;
  p.num_requests = 1;
  p.input_tokens = 8192;
  SimResult r = Simulate(Pp2(4096, 0.75), cost, workload::PlanRequests(p), 1);
  EXPECT_FALSE(r.dynamic_chunking);
  EXPECT_EQ(r.prefill_batches, 2);  // fixed 4096 + 4096
}

// C = 4096, f(l) = l^2, target 4096^2. After L tokens the ideal chunk is
// sqrt(L^2 + 4096^2) - L: 1696.6 at L = 4096, 1307.9 at 5760, 1104.9 at 7040.
TEST(DynamicChunkTest, StrictChunksKeepEachChunksCostEqual) {
  // 1696 -> 1664, 1307 -> 1280, 1104 -> 1088 (multiples of 64); the last 64 remain.
  EXPECT_EQ(Chunks(Pp2(4096, 1.0), 8192), (std::vector<int64_t>{4096, 1664, 1280, 1088, 64}));
}

TEST(DynamicChunkTest, SmoothingMovesPartWayFromTheInitialChunk) {
  // 4096 + 0.5 (1696.6 - 4096) = 2896.3 -> 2880; at L = 6976 the ideal is
  // 1113.6, smoothed 2604.8, more than the 1216 left.
  EXPECT_EQ(Chunks(Pp2(4096, 0.5), 8192), (std::vector<int64_t>{4096, 2880, 1216}));
  EXPECT_EQ(Chunks(Pp2(4096, 0.0), 8192), (std::vector<int64_t>{4096, 4096}));
}

// f(l) = l^2, strict: the ideal chunk after L tokens is sqrt(L^2 + C^2) - L.
ChunkSizePredictor StrictSquare(int64_t base_chunk) {
  ChunkSizePredictor p;
  p.curve = {1.0, 0.0, 0.0};
  p.base_chunk = base_chunk;
  p.target_ns = static_cast<double>(base_chunk) * static_cast<double>(base_chunk);
  p.smooth_factor = 1.0;
  return p;
}

TEST(DynamicChunkTest, ChunksAreClippedBelowAndByTheContext) {
  // Far into a long prompt the ideal (4096^2 / 2L ~ 410 at L = 20480) is
  // under C / 4 = 1024, which is the floor.
  ChunkSizePredictor p = StrictSquare(4096);
  EXPECT_EQ(NextChunkSize(p, 20480), 1024);
  // A context of 22,000 allows 22,000 - L - 100: 1,420 at L = 20,480 (no
  // clip), 400 at L = 21,500, aligned down to 384; 50 at L = 21,850, under
  // one alignment unit, so the fixed chunk runs.
  p.context_len = 22000;
  EXPECT_EQ(NextChunkSize(p, 20480), 1024);
  EXPECT_EQ(NextChunkSize(p, 21500), 384);
  EXPECT_EQ(NextChunkSize(p, 21850), 4096);
  p.max_prefill_tokens = 500;
  EXPECT_EQ(NextChunkSize(p, 20480), 448);
}

TEST(DynamicChunkTest, SmallChunksKeepOneAlignmentUnit) {
  // C = 128: C / 4 = 32 rounds down to 0 multiples of 64, and SGLang keeps 64.
  EXPECT_EQ(NextChunkSize(StrictSquare(128), 20480), 64);
}

TEST(DynamicChunkTest, EngineUsesItOnlyWithPipelineStages) {
  QuadraticCost cost(2);
  workload::WorkloadParams p;
  p.num_requests = 1;
  p.input_tokens = 8192;
  auto reqs = workload::PlanRequests(p);
  SimResult pp2 = Simulate(Pp2(4096, 1.0), cost, reqs, 1);
  EXPECT_TRUE(pp2.dynamic_chunking);
  EXPECT_EQ(pp2.prefill_batches, 5);
  SchedulerConfig pp1 = Pp2(4096, 1.0);
  pp1.pp_size = 1;
  pp1.num_slots = 1;
  QuadraticCost one(1);
  SimResult r1 = Simulate(pp1, one, reqs, 1);
  EXPECT_FALSE(r1.dynamic_chunking);
  EXPECT_EQ(r1.prefill_batches, 2);
}

}  // namespace
}  // namespace ppsearch::sim
