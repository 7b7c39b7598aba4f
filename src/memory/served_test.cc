// A server's memory as it has run: the pools as planned, the activations of
// the largest batches so far.

#include "memory/served.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/hf_config.h"
#include "util/files.h"

namespace ppsearch::memory {
namespace {

// Kimi K3's last stage of PP4/TP8/EP4 on a 85,651 MiB GPU: layers 69-92
// with the LM head, a chunk of 8,192 tokens whose prompts (16,000 tokens)
// end one per chunk.
struct LastStage {
  model::ModelDesc model;
  MemoryInputs in;
};

LastStage K3LastStage() {
  LastStage s;
  Result<model::ModelDesc> m = model::LoadModel(DataDir() + "/models/kimi-k3/config.json");
  EXPECT_TRUE(m.ok()) << m.error().message;
  if (!m.ok()) return s;
  s.model = *m;
  s.in.gpu_total_mib = 85651;
  s.in.tp = 8;
  s.in.pp = 4;
  s.in.chunked_prefill_size = 8192;
  s.in.context_len = 1048576;
  s.in.mem_fraction_static = 0.88;
  s.in.workspace_mib = 4000;
  StageFootprint f;
  f.weight_mib = 50000;
  f.kv_bytes_per_token = 7500;
  f.activation_shape.first_layer = 69;
  f.activation_shape.end_layer = s.model.num_layers;
  f.activation_shape.has_lm_head = true;
  f.activation_shape.receives = true;
  f.activation_shape.tp = 8;
  f.activation_shape.ep = 4;
  f.activation_shape.chunk_tokens = 8192;
  f.activation_shape.logit_rows = 1;
  f.activation = EstimateStageActivation(s.model, f.activation_shape);
  s.in.stages.push_back(f);
  return s;
}

TEST(ServedMemory, BeforeAnyBatchThePoolsAreHeldAndNoActivations) {
  const LastStage s = K3LastStage();
  ASSERT_FALSE(s.in.stages.empty());
  const MemoryPlan planned = PlanMemory(s.in);
  const MemoryPlan idle = PlanServedMemory(s.in, s.model, {});
  EXPECT_EQ(idle.max_total_tokens, planned.max_total_tokens);
  EXPECT_EQ(idle.max_running_requests, planned.max_running_requests);
  EXPECT_DOUBLE_EQ(idle.stages[0].kv_pool_mib, planned.stages[0].kv_pool_mib);
  EXPECT_DOUBLE_EQ(idle.stages[0].activation_mib, 0);
  EXPECT_EQ(idle.stages[0].activation_peak, "no batch yet");
  EXPECT_NEAR(idle.stages[0].peak_mib,
              planned.stages[0].peak_mib - planned.stages[0].activation_mib, 1e-6);
}

// A prefill batch of `tokens` whose prompts end `rows` in it, alone.
ServedBatches Prefill(int64_t tokens, int64_t rows) { return {{{tokens, rows}}, 0}; }

TEST(ServedMemory, TheBatchThePlanAssumesGivesThePlansPeak) {
  const LastStage s = K3LastStage();
  ASSERT_FALSE(s.in.stages.empty());
  const MemoryPlan planned = PlanMemory(s.in);
  const MemoryPlan full = PlanServedMemory(s.in, s.model, Prefill(8192, 1));
  EXPECT_DOUBLE_EQ(full.stages[0].peak_mib, planned.stages[0].peak_mib);
  // A larger batch than the chunk is not run: the chunk caps it.
  EXPECT_DOUBLE_EQ(PlanServedMemory(s.in, s.model, Prefill(100000, 1)).stages[0].peak_mib,
                   planned.stages[0].peak_mib);
}

TEST(ServedMemory, ShorterBatchesHoldLessAndManyEndingPromptsMore) {
  const LastStage s = K3LastStage();
  ASSERT_FALSE(s.in.stages.empty());
  const double full = PlanServedMemory(s.in, s.model, Prefill(8192, 1)).stages[0].activation_mib;
  const double shorter = PlanServedMemory(s.in, s.model, Prefill(2048, 1)).stages[0].activation_mib;
  EXPECT_GT(shorter, 0);
  EXPECT_LT(shorter, full);
  // 1,024 prompts ending in one batch: a row of logits over the vocabulary
  // each, more than the batch's MoE buffers.
  const MemoryPlan rows = PlanServedMemory(s.in, s.model, Prefill(1024, 1024));
  EXPECT_GT(rows.stages[0].activation_mib,
            PlanServedMemory(s.in, s.model, Prefill(1024, 1)).stages[0].activation_mib);
  EXPECT_EQ(rows.stages[0].activation_peak, "LM head logits");
  // Never more rows than the batch has tokens.
  EXPECT_DOUBLE_EQ(PlanServedMemory(s.in, s.model, Prefill(16, 512)).stages[0].activation_mib,
                   PlanServedMemory(s.in, s.model, Prefill(16, 16)).stages[0].activation_mib);
}

// Each batch counts by its own shape: a full chunk ending one prompt and a
// batch of 6,000 ending as many hold the larger of their two live sets
// (here the second's logits), not the chunk's tokens with the other's rows,
// never live together.
TEST(ServedMemory, EachBatchCountsByItsOwnShape) {
  const LastStage s = K3LastStage();
  ASSERT_FALSE(s.in.stages.empty());
  const double chunk = PlanServedMemory(s.in, s.model, Prefill(8192, 1)).stages[0].activation_mib;
  const double many = PlanServedMemory(s.in, s.model, Prefill(6000, 6000)).stages[0].activation_mib;
  const ServedBatches both{{{8192, 1}, {6000, 6000}}, 0};
  EXPECT_DOUBLE_EQ(PlanServedMemory(s.in, s.model, both).stages[0].activation_mib,
                   std::max(chunk, many));
  EXPECT_LT(PlanServedMemory(s.in, s.model, both).stages[0].activation_mib,
            PlanServedMemory(s.in, s.model, Prefill(8192, 6000)).stages[0].activation_mib);
}

// A decode step the decode CUDA graph holds runs in the graph's pool (in
// the reserve already): it adds no activations. One larger than the graph,
// or any with the graph off, runs eagerly and counts.
TEST(ServedMemory, DecodeStepsCountOnlyOutsideTheirGraph) {
  LastStage s = K3LastStage();
  ASSERT_FALSE(s.in.stages.empty());
  s.in.cuda_graph_max_bs = 64;
  const MemoryPlan in_graph = PlanServedMemory(s.in, s.model, {{}, 64});
  EXPECT_DOUBLE_EQ(in_graph.stages[0].activation_mib, 0);
  EXPECT_EQ(in_graph.stages[0].activation_peak, "decode steps in the CUDA graph's pool");
  EXPECT_GT(PlanServedMemory(s.in, s.model, {{}, 65}).stages[0].activation_mib, 0);
  s.in.decode_graph = false;
  EXPECT_GT(PlanServedMemory(s.in, s.model, {{}, 64}).stages[0].activation_mib, 0);
}

TEST(ServedMemory, TheFrontKeepsTheShapesNoOtherCovers) {
  std::vector<sim::BatchShape> front;
  EXPECT_TRUE(sim::AddToFront(front, {8192, 1}));
  EXPECT_FALSE(sim::AddToFront(front, {4096, 1}));
  EXPECT_TRUE(sim::AddToFront(front, {1024, 40}));
  EXPECT_TRUE(sim::AddToFront(front, {8192, 2}));  // covers {8192, 1}
  EXPECT_EQ(front, (std::vector<sim::BatchShape>{{1024, 40}, {8192, 2}}));
}

}  // namespace
}  // namespace ppsearch::memory
