// Activation bytes of a prefill chunk per TP rank against hand-worked
// numbers: a small synthetic model term by term, Kimi K3 at PP1/TP32 and at
// PP8/TP4 (per-rank widths shrink with TP, the stage's layers and block
// residuals set the rest), block attention residuals, the logits and the PP
// receive buffers.

#include "memory/activation.h"

#include <gtest/gtest.h>

#include "model/hf_config.h"
#include "model/model_testing.h"
#include "util/files.h"

namespace ppsearch::memory {
namespace {

using model::AttentionKind;
using model::FfnKind;
using model::OpRole;
using model::Sharding;
using model::testing::MakeLinear;

// hidden 1024, vocab 32,000; every layer GQA (16 heads, 4 KV heads, head_dim
// 64); `moe_layer` has an 8-expert top-2 MoE (intermediate 512, at the hidden
// width), the others a dense MLP of intermediate 4096.
model::ModelDesc SmallModel(int layers, int moe_layer) {
  model::ModelDesc m;
  m.name = "small";
  m.family = "qwen3_moe";
  m.hidden = 1024;
  m.vocab = 32000;
  m.num_layers = layers;
  m.gqa = {16, 4, 64};
  for (int i = 0; i < layers; ++i) {
    model::LayerDesc l;
    l.index = i;
    l.attention = AttentionKind::kGqa;
    l.linears = {MakeLinear("q_proj", 1024, 1024, Sharding::kColumn),
                 MakeLinear("k_proj", 1024, 256, Sharding::kColumn),
                 MakeLinear("v_proj", 1024, 256, Sharding::kColumn),
                 MakeLinear("o_proj", 1024, 1024, Sharding::kRow)};
    if (i == moe_layer) {
      l.ffn = FfnKind::kMoe;
      l.linears.push_back(MakeLinear("router", 1024, 8, Sharding::kReplicated, OpRole::kRouter));
      l.linears.push_back(MakeLinear("experts.gate_up_proj", 1024, 1024, Sharding::kExpert,
                                     OpRole::kRoutedExpert, model::DType::kBf16, 8, 2));
      l.linears.push_back(MakeLinear("experts.down_proj", 512, 1024, Sharding::kExpert,
                                     OpRole::kRoutedExpert, model::DType::kBf16, 8, 2));
    } else {
      l.ffn = FfnKind::kDense;
      l.linears.push_back(
          MakeLinear("gate_proj", 1024, 4096, Sharding::kColumn, OpRole::kDenseMlp));
      l.linears.push_back(MakeLinear("up_proj", 1024, 4096, Sharding::kColumn, OpRole::kDenseMlp));
      l.linears.push_back(MakeLinear("down_proj", 4096, 1024, Sharding::kRow, OpRole::kDenseMlp));
    }
    m.layers.push_back(l);
  }
  m.embedding = MakeLinear("embed_tokens", 32000, 1024, Sharding::kVocab, OpRole::kEmbedding);
  m.lm_head = MakeLinear("lm_head", 1024, 32000, Sharding::kVocab, OpRole::kLmHead);
  return m;
}

// Layers [first, end) at TP tp / EP ep, a 1,000-token chunk ending one prompt.
ActivationShape Shape(int first, int end, int tp, int ep) {
  return {first, end, /*has_lm_head=*/false, /*receives=*/false, tp, ep, 1000, 1};
}

// Per token at TP2 / EP2 (MoE-TP 1), bf16 unless said:
//   stream: hidden states + residual = 2 x 1024 x 2 B                  = 4,096 B
//   attention: q 1024/2 + k 256/2 + v 256/2 + o in 1024/2 + o out 1024
//     = 512 + 128 + 128 + 512 + 1024 = 2,304 x 2 B                     = 4,608 B
//   dense MLP: gate 4096/2 + up 4096/2 + down in 4096/2 + down out 1024
//     = 2048 + 2048 + 2048 + 1024 = 7,168 x 2 B                        = 14,336 B
//   MoE: router 8 x 4 B (fp32) = 32; top-2 ids and weights 2 x 8 B = 16;
//     per routed pair (2, EP does not shrink them): dispatch 1024 +
//     gate_up 1024/1 + down in 512/1 + down out 1024 = 3,584; + combine 1024
//     = (2 x 3,584 + 1,024) x 2 B = 16,384                             = 16,432 B
// Layer 0: 4,096 + max(4,608, 14,336) = 18,432; layer 1: 4,096 + 16,432 =
// 20,528 B/token -> 20,528,000 B for 1,000 tokens, set by the MoE.
TEST(EstimateStageActivation, SmallModelHandWorked) {
  const model::ModelDesc m = SmallModel(2, 1);
  const StageActivation a = EstimateStageActivation(m, Shape(0, 2, 2, 2));
  EXPECT_DOUBLE_EQ(a.stream_bytes, 4096.0 * 1000);
  EXPECT_DOUBLE_EQ(a.sublayer_bytes, 16432.0 * 1000);
  EXPECT_DOUBLE_EQ(a.logits_bytes, 0);
  EXPECT_DOUBLE_EQ(a.receive_bytes, 0);
  EXPECT_DOUBLE_EQ(a.bytes, 20528.0 * 1000);
  EXPECT_EQ(a.peak, "MoE experts (layer 1)");
}

// At TP1 the per-rank widths are whole: attention 1024 + 256 + 256 + 1024 +
// 1024 = 3,584 x 2 = 7,168 B; dense 4096 x 3 + 1024 = 13,312 x 2 = 26,624 B;
// the MoE is unchanged (16,432 B: no TP split, MoE-TP 1). Layer 0 now peaks:
// 4,096 + 26,624 = 30,720 B/token.
TEST(EstimateStageActivation, WiderRanksAtSmallerTp) {
  const StageActivation a = EstimateStageActivation(SmallModel(2, 1), Shape(0, 2, 1, 1));
  EXPECT_DOUBLE_EQ(a.sublayer_bytes, 26624.0 * 1000);
  EXPECT_DOUBLE_EQ(a.bytes, 30720.0 * 1000);
  EXPECT_EQ(a.peak, "dense MLP (layer 0)");
}

// A later stage also holds the next micro-batch's received hidden states and
// residual: 2 x 1024 x 2 B = 4,096 B/token on top of layer 1's 20,528.
TEST(EstimateStageActivation, ReceiveBuffersOnLaterStages) {
  ActivationShape shape = Shape(1, 2, 2, 2);
  shape.receives = true;
  const StageActivation a = EstimateStageActivation(SmallModel(2, 1), shape);
  EXPECT_DOUBLE_EQ(a.receive_bytes, 4096.0 * 1000);
  EXPECT_DOUBLE_EQ(a.bytes, (20528.0 + 4096) * 1000);
}

// Logits per row at TP2: the bf16 slice 16,000 x 2 + the all-gathered bf16
// 32,000 x 2 + the fp32 copy 32,000 x 4 = 224,000 B. One row (the usual
// prefill chunk ends one prompt) leaves the MoE as the peak; 100 rows give
// 22,400,000 + the stream 4,096,000 = 26,496,000 B, above 20,528,000.
TEST(EstimateStageActivation, LogitsOnTheLastStage) {
  ActivationShape shape = Shape(0, 2, 2, 2);
  shape.has_lm_head = true;
  EXPECT_DOUBLE_EQ(EstimateStageActivation(SmallModel(2, 1), shape).bytes, 20528.0 * 1000);
  shape.logit_rows = 100;
  const StageActivation a = EstimateStageActivation(SmallModel(2, 1), shape);
  EXPECT_DOUBLE_EQ(a.logits_bytes, 224000.0 * 100);
  EXPECT_DOUBLE_EQ(a.stream_bytes, 4096.0 * 1000);
  EXPECT_DOUBLE_EQ(a.bytes, 26496.0 * 1000);
  EXPECT_EQ(a.peak, "LM head logits");
}

// Block attention residuals of block size 1 over 12 dense layers: layer i
// carries i + 1 block vectors besides the hidden states; layer 11 has
// 1 + 12 = 13 x 1024 x 2 B = 26,624 B/token, above the MLP's 14,336 (TP2),
// so the peak is 26,624 + 14,336 = 40,960 B/token and the residuals set it.
// Without them every layer carries 2 vectors: 4,096 + 14,336 = 18,432.
TEST(EstimateStageActivation, BlockAttentionResidualsGrowWithDepth) {
  model::ModelDesc m = SmallModel(12, -1);
  EXPECT_DOUBLE_EQ(EstimateStageActivation(m, Shape(0, 12, 2, 2)).bytes, 18432.0 * 1000);
  m.attn_res_block_size = 1;
  const StageActivation a = EstimateStageActivation(m, Shape(0, 12, 2, 2));
  EXPECT_EQ(m.StreamVectorsAt(11), 13);
  EXPECT_DOUBLE_EQ(a.stream_bytes, 26624.0 * 1000);
  EXPECT_DOUBLE_EQ(a.bytes, 40960.0 * 1000);
  EXPECT_EQ(a.peak, "block residuals (layer 11)");
  // A stage of layers [6, 12) receives 1 + 7 = 8 vectors (the blocks done so
  // far), 16,384 B/token.
  ActivationShape later = Shape(6, 12, 2, 2);
  later.receives = true;
  EXPECT_DOUBLE_EQ(EstimateStageActivation(m, later).receive_bytes, 16384.0 * 1000);
}

model::ModelDesc KimiK3() {
  Result<model::ModelDesc> m = model::LoadModel(DataDir() + "/models/kimi-k3");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : model::ModelDesc{};
}

// Kimi K3 (hidden 7168, attn_res_block_size 12), chunk 8192, EP4. A MoE
// layer per token, at TP t and MoE-TP m = t/4:
//   router 896 x 4 = 3,584; top-16 ids and weights 16 x 8 = 128;
//   latent down 3584 x 2 = 7,168, latent up 7168 x 2 = 14,336;
//   shared experts (6144/t gate + 6144/t up + 6144/t down in + 7168) x 2;
//   routed: (16 x (3584 dispatch + 6144/m gate_up + 3072/m + 3584 down) +
//     3584 combine) x 2.
//   TP32 (m 8): shared 15,488, routed 273,408 -> 314,112 B
//   TP4 (m 1):  shared 23,552, routed 531,456 -> 580,224 B
// MLA (9,280 + 86,016/t) x 2 and KDA (7,168 + 110,688/t) x 2 stay below
// them. The stream at layer l is (2 + l / 12) x 7168 x 2 B: 9 vectors =
// 129,024 B from layer 84 on.
TEST(EstimateStageActivation, KimiK3Pp1Tp32VersusPp8Tp4) {
  const model::ModelDesc k3 = KimiK3();
  ASSERT_EQ(k3.num_layers, 93);
  ActivationShape pp1 = {0, 93, true, false, 32, 4, 8192, 1};
  const StageActivation a = EstimateStageActivation(k3, pp1);
  EXPECT_DOUBLE_EQ(a.sublayer_bytes, 314112.0 * 8192);
  EXPECT_DOUBLE_EQ(a.stream_bytes, 129024.0 * 8192);
  EXPECT_DOUBLE_EQ(a.bytes, (314112.0 + 129024) * 8192);  // 3,462 MiB
  EXPECT_EQ(a.peak, "MoE experts (layer 84)");
  // PP8's last stage runs layers [81, 93) at TP4: each rank's widths are
  // 8x those of TP32 (the routed buffers grow with MoE-TP 1), and it holds
  // the next micro-batch's received stream of layer 81, 2 + 81/12 = 8
  // vectors x 14,336 = 114,688 B/token. 580,224 + 129,024 + 114,688 = 823,936 B (6,437 MiB).
  ActivationShape last = {81, 93, true, true, 4, 4, 8192, 1};
  const StageActivation b = EstimateStageActivation(k3, last);
  EXPECT_DOUBLE_EQ(b.sublayer_bytes, 580224.0 * 8192);
  EXPECT_DOUBLE_EQ(b.receive_bytes, 114688.0 * 8192);
  EXPECT_DOUBLE_EQ(b.bytes, 823936.0 * 8192);
  // Its first stage [0, 11) has the stream of layers before the first block
  // ends: 2 vectors until layer 11, 28,672 B; the peak is a MoE layer.
  ActivationShape first = {0, 11, false, false, 4, 4, 8192, 1};
  EXPECT_DOUBLE_EQ(EstimateStageActivation(k3, first).bytes, (580224.0 + 28672) * 8192);
}

}  // namespace
}  // namespace ppsearch::memory
