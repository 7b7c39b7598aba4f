// DP attention steps on the small hand-made model: the attention side on the
// attention-TP group with each rank's own tokens, the MLP over the whole TP
// group on the gathered tokens, and the gather/scatter collectives of the
// padding mode SGLang picks.

#include <gtest/gtest.h>

#include <vector>

#include "cost/cost_testing.h"
#include "cost/layout_cost.h"

namespace ppsearch::cost {
namespace {

using testing::Ideal;
using testing::TinyDenseModel;
using testing::TinyGpu;

// The cost model keeps a reference to its model.
const model::ModelDesc kModel = TinyDenseModel();

// One stage of the 4 layers with TP `tp` split into `dp` attention ranks.
LayoutShape DpLayout(int tp, int dp, std::vector<int> graphs = {}) {
  LayoutShape l;
  l.tp = tp;
  l.dp = dp;
  StageShape st;
  st.end_layer = 4;
  st.has_embedding = true;
  st.has_lm_head = true;
  l.stages.push_back(st);
  l.decode_graph_batch_sizes = std::move(graphs);
  return l;
}

sim::MicroBatch RankPrefill(int first_request, std::vector<int64_t> prompts) {
  sim::MicroBatch b;
  b.is_prefill = true;
  for (int64_t n : prompts) b.entries.push_back({first_request++, n, 0, true});
  return b;
}

sim::MicroBatch RankDecode(int first_request, int sequences, int64_t context) {
  sim::MicroBatch b;
  for (int i = 0; i < sequences; ++i) b.entries.push_back({first_request + i, 1, context, false});
  return b;
}

sim::MicroBatch Step(std::vector<sim::MicroBatch> ranks) {
  sim::MicroBatch step;
  for (const auto& r : ranks) {
    step.is_prefill = step.is_prefill || r.is_prefill;
    step.entries.insert(step.entries.end(), r.entries.begin(), r.entries.end());
  }
  step.dp_ranks = std::move(ranks);
  return step;
}

TEST(DpStep, Tp2Dp2PrefillHandWorked) {
  // TP2 DP2: attention TP 1, each rank prefills its own 1024-token prompt.
  LayoutCostModel cost(kModel, TinyGpu(), DpLayout(2, 2), Ideal());
  const sim::MicroBatch step = Step({RankPrefill(0, {1024}), RankPrefill(1, {1024})});
  const StageBreakdown b = cost.Breakdown(0, step);
  // A rank's attention side, whole heads (attention TP 1), m = 1024 (the
  // numbers of the TP1 hand-worked test): qkv 37,749 + o_proj 37,749 per
  // layer, x 4 = 301,992; the replicated embedding's gather 4,194.304.
  // MLP over TP2 on the 2048 gathered tokens:
  //   gate_up n 8192 / 2 = 4096 k 1024: 16 x 32 = 512 tiles, 6 waves, wave
  //     512/600, depth 8/9: 1.7180e10 FLOP / 75.85 TFLOPS = 226,492.4 -> 226,492
  //   down n 1024 k 4096 / 2 = 2048: 128 x 64 tiles (per-tile 0.9) 256 tiles,
  //     3 waves, wave 256/300, depth 16/17, 0.7228 x 100 TFLOPS:
  //     8.5899e9 FLOP / 72.28 TFLOPS = 118,838.6 -> 118,839
  //   per layer 345,331, x 4 = 1,381,324
  //   LM head over TP2 on the 2 gathered last positions: n 16384 k 1024,
  //     memory-bound: (16384 x 1024 x 2 + 2 x 2 x 1024 + 2 x 2 x 16384) bytes
  //     / 1000 GB/s = 33,624.064 -> 33,624
  // 301,992 + 4,194.304 + 1,381,324 + 33,624 = 1,721,134.304
  EXPECT_DOUBLE_EQ(b.gemm_ns, 1721134.304);
  // Attention: all 16 heads on the rank (171,966.464 as at TP1).
  EXPECT_NEAR(b.attention_ns, 171966.464, 1e-6);
  // Element-wise: 6 passes on the rank's 1024 tokens (12,582.912 per layer)
  // and 6 on the 2048 gathered (25,165.824), x 4 = 150,994.944.
  EXPECT_NEAR(b.elementwise_ns, 150994.944, 1e-6);
  EXPECT_DOUBLE_EQ(b.gaps_ns, 48000);
  // Extending: SUM_LEN, two all-reduces over TP2 per layer of the 2048
  // gathered tokens: 2048 x 1024 x 2 = 4,194,304 bytes, 5 us + 4,194,304 /
  // 40 GB/s = 109,857.6 -> 109,858; x 8 = 878,864. LM head: the 2 last
  // positions all-reduced (4,096 bytes: 5,000 + 102.4 -> 5,102) and their
  // logits all-gathered (131,072 bytes: 5,000 + 1/2 x 131,072 / 40 = 6,638.4
  // -> 6,638). No all-reduce for the replicated embedding.
  EXPECT_DOUBLE_EQ(b.allreduce_ns, 890604);
  EXPECT_EQ(b.allreduce_calls, 9);
  const sim::StageTime t = cost.StageCost(0, step);
  // 1,721,134.304 + 171,966.464 + 150,994.944 = 2,044,095.712 -> 2,044,096
  EXPECT_EQ(t.compute_ns, 2044096);
  EXPECT_EQ(t.comm_ns, 890604);
  EXPECT_EQ(t.overhead_ns, 48000);
  EXPECT_EQ(t.total_ns(), 2982700);
}

TEST(DpStep, TheBusiestRankSetsTheAttentionSide) {
  LayoutCostModel cost(kModel, TinyGpu(), DpLayout(2, 2), Ideal());
  const StageBreakdown idle = cost.Breakdown(0, Step({RankPrefill(0, {1024}), {}}));
  const StageBreakdown small =
      cost.Breakdown(0, Step({RankPrefill(0, {1024}), RankPrefill(1, {512})}));
  // Rank 0's attention runs either way; rank 1's shorter one hides behind it.
  EXPECT_NEAR(idle.attention_ns, 171966.464, 1e-6);
  EXPECT_DOUBLE_EQ(small.attention_ns, idle.attention_ns);
  // The MLP runs on the gathered tokens: 1536 cost more than 1024.
  EXPECT_GT(small.gemm_ns, idle.gemm_ns);
  EXPECT_GT(small.allreduce_ns, idle.allreduce_ns);
  // Swapping the ranks changes nothing.
  const StageBreakdown swapped =
      cost.Breakdown(0, Step({RankPrefill(0, {512}), RankPrefill(1, {1024})}));
  EXPECT_DOUBLE_EQ(swapped.gemm_ns, small.gemm_ns);
  EXPECT_DOUBLE_EQ(swapped.attention_ns, small.attention_ns);
}

TEST(DpStep, GraphDecodeGathersByAllGatherHandWorked) {
  // Decode of 8 sequences on each rank under CUDA graphs: MAX_LEN padding,
  // every rank's 8 rows all-gathered over TP2 and the MLP's output
  // reduce-scattered back (no all-reduce).
  LayoutCostModel cost(kModel, TinyGpu(), DpLayout(2, 2, {1, 2, 4, 8, 16}), Ideal());
  const StageBreakdown b =
      cost.Breakdown(0, Step({RankDecode(0, 8, 1000), RankDecode(8, 8, 1000)}));
  // 16 gathered rows x 1024 x 2 = 32,768 bytes: all-gather 5,000 + 1/2 x
  // 32,768 / 40 GB/s = 5,409.6 -> 5,410, the reduce-scatter the same; x 4
  // layers = 43,280. LM head: the 16 rows all-reduced 5,000 + 819.2 -> 5,819,
  // their logits (16 x 32,768 x 2 = 1,048,576 bytes) all-gathered 5,000 +
  // 13,107.2 -> 18,107. 43,280 + 5,819 + 18,107 = 67,206.
  EXPECT_DOUBLE_EQ(b.allreduce_ns, 67206);
  EXPECT_EQ(b.allreduce_calls, 9);
  // An idle rank replays the same graph: the gathered rows, so the
  // collectives, are the same.
  const StageBreakdown one_busy = cost.Breakdown(0, Step({RankDecode(0, 8, 1000), {}}));
  EXPECT_DOUBLE_EQ(one_busy.allreduce_ns, 67206);
}

TEST(DpStep, KimiK3AllReducesTheFfnOutputUnderMaxLenHandWorked) {
  // GraphDecodeGathersByAllGatherHandWorked's step on a model SGLang runs as
  // Kimi K3 (models/kimi_k3.py: no layer communicator; the FFN all-reduces
  // over TP and dp_scatter copies): the reduce-scatter of the FFN output
  // becomes an all-reduce of its 32,768 bytes, 5,000 + 32,768 / 40 GB/s
  // (bus factor 1 at TP2) = 5,819.2 -> 5,819. Per layer 5,410 + 5,819 =
  // 11,229; x 4 = 44,916; + the LM head's 5,819 + 18,107 = 68,842.
  model::ModelDesc k3 = TinyDenseModel();
  k3.model_type = "kimi_k3";
  LayoutCostModel cost(k3, TinyGpu(), DpLayout(2, 2, {1, 2, 4, 8, 16}), Ideal());
  const StageBreakdown b =
      cost.Breakdown(0, Step({RankDecode(0, 8, 1000), RankDecode(8, 8, 1000)}));
  EXPECT_DOUBLE_EQ(b.allreduce_ns, 68842);
  EXPECT_EQ(b.allreduce_calls, 9);
  // SUM_LEN (a step that extends) is the same as under the communicator.
  const sim::MicroBatch prefill = Step({RankPrefill(0, {512}), RankPrefill(1, {1024})});
  EXPECT_DOUBLE_EQ(cost.Breakdown(0, prefill).allreduce_ns,
                   LayoutCostModel(kModel, TinyGpu(), DpLayout(2, 2, {1, 2, 4, 8, 16}), Ideal())
                       .Breakdown(0, prefill)
                       .allreduce_ns);
}

TEST(DpStep, AttentionTpGroupsAddTheirOwnScatterAndGather) {
  // TP4 DP2: attention over 2 GPUs, so the MAX_LEN gather reduce-scatters
  // inside the attention-TP group first and the scatter all-gathers in it
  // after: 4 collectives per layer instead of 2.
  LayoutCostModel cost(kModel, TinyGpu(), DpLayout(4, 2, {8}), Ideal());
  const StageBreakdown b =
      cost.Breakdown(0, Step({RankDecode(0, 8, 1000), RankDecode(8, 8, 1000)}));
  EXPECT_EQ(b.allreduce_calls, 4 * 4 + 1);
  // Heads split over the attention-TP group of 2: half the TP1 attention.
  LayoutCostModel tp1(kModel, TinyGpu(), DpLayout(2, 2), Ideal());
  const sim::MicroBatch prefill = Step({RankPrefill(0, {1024}), RankPrefill(1, {1024})});
  LayoutCostModel tp4(kModel, TinyGpu(), DpLayout(4, 2), Ideal());
  EXPECT_NEAR(tp4.Breakdown(0, prefill).attention_ns, tp1.Breakdown(0, prefill).attention_ns / 2,
              1e-6);
}

TEST(DpStep, UnevenEagerDecodeGathersTheSum) {
  // No graphs, one rank of 8 sequences and three idle (TP4 DP4): 2 x 8 < 8 x
  // 4, so SUM_LEN: two all-reduces of 8 rows per layer, cheaper than
  // all-gathering 4 x 8 padded rows.
  LayoutCostModel cost(kModel, TinyGpu(), DpLayout(4, 4), Ideal());
  const StageBreakdown uneven = cost.Breakdown(0, Step({RankDecode(0, 8, 1000), {}, {}, {}}));
  const StageBreakdown even =
      cost.Breakdown(0, Step({RankDecode(0, 8, 1000), RankDecode(8, 8, 1000),
                              RankDecode(16, 8, 1000), RankDecode(24, 8, 1000)}));
  EXPECT_EQ(uneven.allreduce_calls, 9);
  EXPECT_LT(uneven.allreduce_ns, even.allreduce_ns);
  EXPECT_LT(uneven.gemm_ns, even.gemm_ns);
}

}  // namespace
}  // namespace ppsearch::cost
