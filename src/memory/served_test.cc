// A server's memory as it has run: the pools as planned, the activations of
// the largest batches so far.

#include "memory/served.h"

#include <gtest/gtest.h>

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

TEST(ServedMemory, TheBatchThePlanAssumesGivesThePlansPeak) {
  const LastStage s = K3LastStage();
  ASSERT_FALSE(s.in.stages.empty());
  const MemoryPlan planned = PlanMemory(s.in);
  const MemoryPlan full = PlanServedMemory(s.in, s.model, {8192, 1});
  EXPECT_DOUBLE_EQ(full.stages[0].peak_mib, planned.stages[0].peak_mib);
  // A larger batch than the chunk is not run: the chunk caps it.
  EXPECT_DOUBLE_EQ(PlanServedMemory(s.in, s.model, {100000, 1}).stages[0].peak_mib,
                   planned.stages[0].peak_mib);
}

TEST(ServedMemory, ShorterBatchesHoldLessAndManyEndingPromptsMore) {
  const LastStage s = K3LastStage();
  ASSERT_FALSE(s.in.stages.empty());
  const double full = PlanServedMemory(s.in, s.model, {8192, 1}).stages[0].activation_mib;
  const double shorter = PlanServedMemory(s.in, s.model, {2048, 1}).stages[0].activation_mib;
  EXPECT_GT(shorter, 0);
  EXPECT_LT(shorter, full);
  // 1,024 prompts ending in one batch: a row of logits over the vocabulary
  // each, more than the batch's MoE buffers.
  const MemoryPlan rows = PlanServedMemory(s.in, s.model, {1024, 1024});
  EXPECT_GT(rows.stages[0].activation_mib,
            PlanServedMemory(s.in, s.model, {1024, 1}).stages[0].activation_mib);
  EXPECT_EQ(rows.stages[0].activation_peak, "LM head logits");
  // Never more rows than the batch has tokens.
  EXPECT_DOUBLE_EQ(PlanServedMemory(s.in, s.model, {16, 512}).stages[0].activation_mib,
                   PlanServedMemory(s.in, s.model, {16, 16}).stages[0].activation_mib);
}

}  // namespace
}  // namespace ppsearch::memory
