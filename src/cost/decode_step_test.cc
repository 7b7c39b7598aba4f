// The decode step: SGLang's CUDA-graph capture list and padding, the experts
// a batch touches, and one layout's decode step worked by hand.

#include "cost/decode_step.h"

#include <gtest/gtest.h>

#include <optional>

#include "cost/calibration.h"
#include "cost/cost_testing.h"
#include "cost/layout_cost.h"
#include "model/model_testing.h"

namespace ppsearch::cost {
namespace {

using model::OpRole;
using model::Sharding;
using model::testing::MakeLinear;

TEST(DecodeStep, CaptureListIsSglangsDefault) {
  // [1, 2, 4, 8, 12] + 16..256 step 8: 5 + 31 sizes.
  const std::vector<int> to256 = DecodeCaptureBatchSizes(256, 4096);
  ASSERT_EQ(to256.size(), 36u);
  EXPECT_EQ(to256[4], 12);
  EXPECT_EQ(to256[5], 16);
  EXPECT_EQ(to256.back(), 256);
  // + 272..496 step 16 + 512: 36 + 15 + 1.
  const std::vector<int> to512 = DecodeCaptureBatchSizes(512, 4096);
  ASSERT_EQ(to512.size(), 52u);
  EXPECT_EQ(to512[36], 272);
  EXPECT_EQ(to512.back(), 512);
  // The request pool caps the list; no graphs without a maximum.
  EXPECT_EQ(DecodeCaptureBatchSizes(512, 100).back(), 96);
  EXPECT_TRUE(DecodeCaptureBatchSizes(0, 4096).empty());
}

TEST(DecodeStep, PadsToTheNextCapturedSize) {
  const std::vector<int> captured = DecodeCaptureBatchSizes(256, 4096);
  EXPECT_EQ(PaddedDecodeBatch(1, captured), 1);
  EXPECT_EQ(PaddedDecodeBatch(3, captured), 4);
  EXPECT_EQ(PaddedDecodeBatch(13, captured), 16);
  EXPECT_EQ(PaddedDecodeBatch(249, captured), 256);
  EXPECT_EQ(PaddedDecodeBatch(257, captured), 257);  // eager above the largest graph
  EXPECT_EQ(PaddedDecodeBatch(5, {}), 5);            // no graphs
}

TEST(DecodeStep, ExpertsTouched) {
  // One token touches its k experts: 96 local of 384, top 8 -> 8 x 96 / 384 = 2.
  EXPECT_NEAR(ExpectedExpertsTouched(96, 384, 8, 1), 2.0, 1e-12);
  // 4 local of 8, top 2, 3 tokens: 4 x (1 - 0.75^3) = 2.3125.
  EXPECT_NEAR(ExpectedExpertsTouched(4, 8, 2, 3), 2.3125, 1e-12);
  // Realistic batches touch every expert: 512 tokens miss one with
  // (47/48)^512 = 2.1e-5, 0.002 of the 96.
  EXPECT_NEAR(ExpectedExpertsTouched(96, 384, 8, 512), 96.0, 0.003);
  EXPECT_GT(ExpectedExpertsTouched(96, 384, 8, 512), 95.99);
  EXPECT_EQ(ExpectedExpertsTouched(96, 384, 8, 0), 0);
}

TEST(DecodeStep, GemmIsARoofline) {
  // m 4 (padded to a 16-row MMA), n 768, k 1024, bf16 at 100 TFLOPS and
  // 1000 GB/s: memory 768 x 1024 x 2 + 2 x 4 x 1024 + 2 x 4 x 768 = 1,587,200 B
  // -> 1587.2 ns; compute 2 x 16 x 768 x 1024 / 1e14 -> 251.7 ns.
  GemmShape g{4, 768, 1024, 1, 2};
  EXPECT_NEAR(DecodeGemmNs(g, 100, 1000, 1.0), 1587.2, 1e-6);
  // At 1% of the tensor rate the padded compute (25,165,824 FLOPs) wins.
  EXPECT_NEAR(DecodeGemmNs(g, 100, 1000, 0.01), 25165.824, 1e-6);
}

// One layer: GQA (8 heads, 2 KV heads of 128) and 8 bf16 experts, top 2,
// intermediate 512 on hidden 1024; vocabulary 32768.
model::ModelDesc DecodeModel() {
  model::ModelDesc m;
  m.hidden = 1024;
  m.vocab = 32768;
  m.num_layers = 1;
  m.gqa = {8, 2, 128};
  m.moe = {8, 2, 0, 512, 1024, model::DType::kBf16};
  model::LayerDesc layer;
  layer.attention = model::AttentionKind::kGqa;
  layer.ffn = model::FfnKind::kMoe;
  layer.linears = {MakeLinear("qkv", 1024, 1536, Sharding::kColumn),
                   MakeLinear("o_proj", 1024, 1024, Sharding::kRow),
                   MakeLinear("experts.gate_up_proj", 1024, 1024, Sharding::kExpert,
                              OpRole::kRoutedExpert, model::DType::kBf16, 8, 2),
                   MakeLinear("experts.down_proj", 512, 1024, Sharding::kExpert,
                              OpRole::kRoutedExpert, model::DType::kBf16, 8, 2)};
  m.layers.push_back(layer);
  m.embedding = MakeLinear("embed_tokens", 32768, 1024, Sharding::kVocab, OpRole::kEmbedding);
  m.lm_head = MakeLinear("lm_head", 1024, 32768, Sharding::kVocab, OpRole::kLmHead);
  return m;
}

TEST(DecodeStep, Tp2Ep2StepHandWorked) {
  const hardware::HardwareProfile hw = testing::TinyGpu();
  Calibration c = testing::Ideal();
  c.Set(Param::kDecodeKernel, 2.0);
  LayoutShape layout;
  layout.tp = 2;
  layout.ep = 2;
  layout.stages = {{0, 1, true, true}};
  layout.decode_graph_batch_sizes = DecodeCaptureBatchSizes(8, 64);  // 1, 2, 4, 8
  const model::ModelDesc m = DecodeModel();
  LayoutCostModel cost(m, hw, layout, c);
  // Three sequences at 1023 cached tokens: the graph of 4 replays.
  sim::MicroBatch batch;
  for (int r = 0; r < 3; ++r) batch.entries.push_back({r, 1, 1023, false});
  const StageBreakdown b = cost.Breakdown(0, batch);
  // Weights once, memory-bound (bytes / 1000 GB/s), m = 4:
  //   qkv n 1536 / 2: 1,587,200 B -> 1587.2; o_proj k 1024 / 2:
  //   1,048,576 + 4,096 + 8,192 -> 1060.864;
  //   experts: 4 local, 3 tokens touch 4 x (1 - 0.75^3) = 2.31 -> 2, each
  //   with 4 x 2 / 4 = 2 rows: gate_up 2 x (2,097,152 + 4,096 + 4,096)
  //   -> 4210.688, down 2 x (1,048,576 + 2,048 + 4,096) -> 2109.44;
  //   embedding gather 2 x 4 x 1024 x 2 -> 16.384; LM head n 16384:
  //   33,554,432 + 8,192 + 131,072 -> 33693.696.
  EXPECT_NEAR(b.gemm_ns, 1587.2 + 1060.864 + 4210.688 + 2109.44 + 16.384 + 33693.696, 1e-6);
  // KV reads: 3 x 1024 tokens x 1 KV head x 128 x (K, V) x 2 B -> 3 x 524.288.
  EXPECT_NEAR(b.attention_ns, 1572.864, 1e-6);
  // Sampling 3 passes x 3 x 32768 x 4 B -> 1179.648; element-wise 12 x 8192
  // + permute 4 x 4 x 2 x 1024 x 2 / 2 -> 131.072.
  EXPECT_NEAR(b.sampling_ns, 1179.648, 1e-6);
  EXPECT_NEAR(b.elementwise_ns, 1179.648 + 131.072, 1e-6);
  // All-reduce of 4 x 1024 x 2 B: 5 us + 8192 / 40 GB/s = 5205 ns, twice per
  // layer and once for the embedding; logits all-gather 5 us + 0.5 x 262,144
  // / 40 GB/s = 8277 ns.
  EXPECT_EQ(b.allreduce_calls, 3);
  EXPECT_NEAR(b.allreduce_ns, 3 * 5205 + 8277, 1e-6);
  // Each kernel's floor, 2 us: 4 GEMMs, 2 norms, rope + cache write + one
  // attention kernel, top-k + sort, activation + weighted sum = 13 kernels.
  EXPECT_NEAR(b.gaps_ns, 26000, 1e-6);
  const sim::StageTime t = cost.StageCost(0, batch);
  EXPECT_EQ(t.compute_ns, 45562);  // 42678.272 + 1572.864 + 1310.72
  EXPECT_EQ(t.comm_ns, 23892);
  EXPECT_EQ(t.overhead_ns, 26000);
  EXPECT_EQ(t.total_ns(), 45562 + 23892 + 26000);
}

// `l` run in the merged GEMM `gemm`.
model::Linear Merged(model::Linear l, const char* gemm) {
  l.fused_gemm = gemm;
  return l;
}

// DeepSeek-R1's MoE layer as SGLang decodes it on fa3: the merged q_a/kv_a
// GEMM, q_b, kv_b (the absorbed key bmm), o_proj, the router, the routed
// gate-up and down, the shared experts' merged gate-up and down = 9 GEMMs,
// 8 of them FP8 (all but the router) with a quantization kernel each; 4
// norms (input, post-attention, q_a, kv_a); rope, cache write, the value
// bmm and fa3's split kernel with its combine = 5; top-k and the sort; the
// routed and shared activations and the weighted sum = 3. 31 kernels.
TEST(DecodeStep, DeepSeekMlaMoeLayerLaunches31Kernels) {
  model::LayerDesc layer;
  layer.attention = model::AttentionKind::kMla;
  layer.ffn = model::FfnKind::kMoe;
  auto fp8 = [](model::Linear l) {
    l.dtype = model::DType::kFp8;
    return l;
  };
  layer.linears = {
      fp8(Merged(MakeLinear("q_a_proj", 7168, 1536, Sharding::kReplicated), "qkv_a")),
      fp8(Merged(MakeLinear("kv_a_proj", 7168, 576, Sharding::kReplicated), "qkv_a")),
      fp8(MakeLinear("q_b_proj", 1536, 24576, Sharding::kColumn)),
      fp8(MakeLinear("kv_b_proj", 512, 32768, Sharding::kColumn)),
      fp8(MakeLinear("o_proj", 16384, 7168, Sharding::kRow)),
      MakeLinear("router", 7168, 256, Sharding::kReplicated, OpRole::kRouter),
      fp8(MakeLinear("experts.gate_up_proj", 7168, 4096, Sharding::kExpert, OpRole::kRoutedExpert,
                     model::DType::kFp8, 256, 8)),
      fp8(MakeLinear("experts.down_proj", 2048, 7168, Sharding::kExpert, OpRole::kRoutedExpert,
                     model::DType::kFp8, 256, 8)),
      fp8(Merged(
          MakeLinear("shared.gate_proj", 7168, 2048, Sharding::kColumn, OpRole::kSharedExpert),
          "shared.gate_up")),
      fp8(Merged(MakeLinear("shared.up_proj", 7168, 2048, Sharding::kColumn, OpRole::kSharedExpert),
                 "shared.gate_up")),
      fp8(MakeLinear("shared.down_proj", 2048, 7168, Sharding::kRow, OpRole::kSharedExpert))};
  const DecodeKernels k = DecodeKernelsPerLayer(layer, "fa3");
  EXPECT_EQ(k.gemms, 9);
  EXPECT_EQ(k.activation_quant, 8);
  EXPECT_EQ(k.norms, 4);
  EXPECT_EQ(k.attention, 5);
  EXPECT_EQ(k.routing, 2);
  EXPECT_EQ(k.ffn, 3);
  EXPECT_EQ(k.total(), 31);
  // One fused decode kernel on flashinfer: 30.
  EXPECT_EQ(DecodeKernelsPerLayer(layer, "flashinfer").total(), 30);
}

// A KDA layer with a dense MLP: the merged qkvg and [f_a | b] GEMMs, f_b,
// o_proj, the MLP's gate-up and down = 6 GEMMs; 3 norms (the gated output
// norm); the short-conv update and the recurrent step; the activation.
TEST(DecodeStep, KdaDenseLayerLaunches12Kernels) {
  model::LayerDesc layer;
  layer.attention = model::AttentionKind::kKda;
  layer.ffn = model::FfnKind::kDense;
  layer.linears = {
      Merged(MakeLinear("q_proj", 7168, 12288, Sharding::kColumn), "qkvg"),
      Merged(MakeLinear("k_proj", 7168, 12288, Sharding::kColumn), "qkvg"),
      Merged(MakeLinear("f_a_proj", 7168, 128, Sharding::kReplicated), "bfa"),
      Merged(MakeLinear("b_proj", 7168, 96, Sharding::kColumn), "bfa"),
      MakeLinear("f_b_proj", 128, 12288, Sharding::kColumn),
      MakeLinear("o_proj", 12288, 7168, Sharding::kRow),
      Merged(MakeLinear("gate_proj", 7168, 18432, Sharding::kColumn, OpRole::kDenseMlp), "gate_up"),
      Merged(MakeLinear("up_proj", 7168, 18432, Sharding::kColumn, OpRole::kDenseMlp), "gate_up"),
      MakeLinear("down_proj", 18432, 7168, Sharding::kRow, OpRole::kDenseMlp)};
  const DecodeKernels k = DecodeKernelsPerLayer(layer, "flashinfer");
  EXPECT_EQ(k.gemms, 6);
  EXPECT_EQ(k.total(), 6 + 3 + 2 + 1);
}

// The floor is per kernel and per step: a prefill keeps its 1 us gaps, and
// a decode stretch carries the same overhead at every step.
TEST(DecodeStep, TheKernelFloorIsADecodeTermConstantOverAStretch) {
  const hardware::HardwareProfile hw = testing::TinyGpu();
  Calibration c = testing::Ideal();
  c.Set(Param::kDecodeKernel, 3.0);
  LayoutShape layout;
  layout.stages = {{0, 1, true, true}};
  const model::ModelDesc m = DecodeModel();
  LayoutCostModel cost(m, hw, layout, c);
  sim::MicroBatch decode;
  for (int r = 0; r < 2; ++r) decode.entries.push_back({r, 1, 100, false});
  sim::DecodeGrowth g;
  ASSERT_TRUE(cost.DecodeStepGrowth(0, decode, &g));
  EXPECT_EQ(g.at_start.overhead_ns, 13 * 3000);
  sim::MicroBatch prefill;
  prefill.is_prefill = true;
  prefill.entries.push_back({0, 100, 0, true});
  // (4 GEMMs + 8) x 1 us, as before.
  EXPECT_EQ(cost.StageCost(0, prefill).overhead_ns, 12000);
  c.Set(Param::kDecodeKernel, 1.0);
  LayoutCostModel faster(m, hw, layout, c);
  ASSERT_TRUE(faster.DecodeStepGrowth(0, decode, &g));  // written over the first's
  EXPECT_EQ(g.at_start.overhead_ns, 13 * 1000);
  EXPECT_EQ(faster.StageCost(0, prefill).overhead_ns, 12000);
}

TEST(DecodeStep, TinyBatchesReadOnlyTheTouchedExperts) {
  // At B = 1 a rank reads k / ep of its experts; at B = 64 all of them.
  const hardware::HardwareProfile hw = testing::TinyGpu();
  Calibration c;
  c.Set(Param::kMemory, 1.0);
  LayoutShape layout;
  layout.stages = {{0, 1, false, false}};
  const model::ModelDesc m = DecodeModel();
  LayoutCostModel cost(m, hw, layout, c);
  auto gemm = [&](int sequences) {
    sim::MicroBatch batch;
    for (int r = 0; r < sequences; ++r) batch.entries.push_back({r, 1, 100, false});
    return cost.Breakdown(0, batch).gemm_ns;
  };
  const double dense = 2 * 1024 * (1536 + 1024) * 1e-3;  // qkv + o_proj weights, ns
  const double expert = 2 * 1024 * (1024 + 512) * 1e-3;  // one expert's weights, ns
  EXPECT_NEAR(gemm(1), dense + 2 * expert, 0.01 * expert);
  // Plus the 64 rows' activations, well under one more expert.
  EXPECT_GT(gemm(64), dense + 8 * expert);
  EXPECT_LT(gemm(64), dense + 9 * expert);
}

}  // namespace
}  // namespace ppsearch::cost
