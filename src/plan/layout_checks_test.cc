// Every layout error and spec warning, with its exact message: users read
// these, and editors jump to the file:line:col they start with.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/hf_config.h"
#include "plan/plan.h"
#include "plan/plan_internal.h"
#include "plan/plan_testing.h"
#include "ppsearch_source_dir.h"
#include "util/files.h"

namespace ppsearch::plan {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using testing::IntArg;
using ::testing::IsEmpty;
using testing::KimiLikeModel;
using testing::Layout;
using testing::Loc;
using testing::MissionSpec;
using testing::Rtx6000d;
using testing::SetArg;
using testing::StringArg;
using testing::SwitchArg;
using testing::TinyGqaModel;

std::vector<std::string> ErrorTexts(const std::vector<Diagnostic>& diagnostics) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diagnostics) out.push_back(d.message);
  return out;
}

std::vector<std::string> ErrorsOf(const spec::LayoutSpec& layout,
                                  const model::ModelDesc& model = KimiLikeModel(),
                                  const spec::Spec& spec = MissionSpec(),
                                  const hardware::HardwareProfile& hw = Rtx6000d()) {
  return ErrorTexts(PlanLayout(layout, spec, model, hw).errors);
}

// A shipped profile with NVLink, where SGLang can run DeepEP.
hardware::HardwareProfile H200() {
  Result<hardware::HardwareProfile> hw = hardware::LoadHardwareProfile("h200");
  EXPECT_TRUE(hw.ok()) << hw.error().message;
  return hw.ok() ? *hw : hardware::HardwareProfile{};
}

constexpr char kAt[] = "examples/x.toml:31:10: key 'sweep.layouts[1]': ";

TEST(ValidateLayout, MissionLayoutsAreValid) {
  for (const auto& layout : MissionSpec().sweep.layouts) {
    EXPECT_THAT(ErrorsOf(layout), IsEmpty()) << layout.Label();
  }
}

TEST(ValidateLayout, GpuCountMustMatchTheCluster) {
  EXPECT_THAT(ErrorsOf(Layout(3, 8, 4, 1)),
              ElementsAre(std::string(kAt) +
                          "PP3/TP8/EP4 uses 24 GPUs but the cluster has 32 (4 hosts x 8); "
                          "TP x PP must equal the GPU count"));
}

TEST(ValidateLayout, WorldMustDivideOverNodes) {
  EXPECT_THAT(ErrorsOf(Layout(1, 6, 1, 1)),
              Contains(std::string(kAt) +
                       "PP1/TP6/EP1 has 6 ranks, which do not divide over 4 nodes; SGLang "
                       "asserts (tp_size * pp_size) % nnodes == 0"));
}

spec::LayoutSpec Instances(int n, int pp, int tp, int ep) {
  spec::LayoutSpec l = Layout(pp, tp, ep, 1);
  l.instances = n;
  return l;
}

TEST(ValidateLayout, InstancesSplitTheHostsInOrder) {
  const LayoutPlan two =
      PlanLayout(Instances(2, 2, 8, 4), MissionSpec(), TinyGqaModel(), Rtx6000d());
  EXPECT_TRUE(two.valid) << (two.errors.empty() ? "" : two.errors.front().message);
  EXPECT_EQ(two.layout.Label(), "2xPP2/TP8/EP4");
  EXPECT_EQ(two.layout.Slug(), "2x-pp2-tp8-ep4");
  EXPECT_EQ(two.world_size, 16);
  EXPECT_EQ(two.layout.gpus(), 32);
  EXPECT_THAT(two.instance_nodes, ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3)));
  // One instance's ranks: its stages on its own two nodes, as PP2/TP8 on a
  // 16-GPU cluster would be.
  ASSERT_EQ(two.tp_groups.size(), 2u);
  EXPECT_THAT(two.tp_groups[0].nodes, ElementsAre(0));
  EXPECT_THAT(two.tp_groups[1].nodes, ElementsAre(1));
  EXPECT_EQ(two.cross_node_stage_boundaries, 1);
  const LayoutPlan four =
      PlanLayout(Instances(4, 1, 8, 8), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(four.instance_nodes,
              ElementsAre(ElementsAre(0), ElementsAre(1), ElementsAre(2), ElementsAre(3)));
  const LayoutPlan one =
      PlanLayout(Layout(2, 16, 4, 1), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(one.instance_nodes, ElementsAre(ElementsAre(0, 1, 2, 3)));
}

TEST(ValidateLayout, InstancesMustUseTheClusterOnWholeNodes) {
  const LayoutPlan three =
      PlanLayout(Instances(2, 3, 8, 4), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_FALSE(three.valid);
  EXPECT_EQ(three.errors.front().reason, "gpu_count");
  EXPECT_EQ(three.errors.front().message,
            std::string(kAt) +
                "2xPP3/TP8/EP4 uses 2 instances x 24 GPUs = 48 GPUs but the cluster has 32 (4 "
                "hosts x 8); instances x TP x PP must equal the GPU count");
  EXPECT_TRUE(three.ranks.empty());  // more GPUs than the cluster: nothing is laid out
  spec::Spec six_hosts = MissionSpec();
  six_hosts.cluster.hosts.resize(2);
  six_hosts.cluster.gpus_per_node = 12;  // 24 GPUs on 2 hosts: 3 instances of 8 GPUs
  const LayoutPlan split =
      PlanLayout(Instances(3, 1, 8, 8), six_hosts, KimiLikeModel(), Rtx6000d());
  EXPECT_FALSE(split.valid);
  ASSERT_FALSE(split.errors.empty());
  EXPECT_EQ(split.errors.front().reason, "instance_nodes");
  EXPECT_EQ(split.errors.front().message,
            std::string(kAt) +
                "3xPP1/TP8/EP8 runs 3 instances on 2 hosts: each instance needs whole nodes of "
                "its own (the hosts split in order, the same number each), so the instance "
                "count must divide the host count");
  EXPECT_TRUE(split.instance_nodes.empty());
}

TEST(ValidateLayout, ExpertsMustDivideOverEp) {
  model::ModelDesc model = KimiLikeModel();
  model.moe.num_experts = 100;
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 8, 1), model),
              ElementsAre(std::string(kAt) +
                          "PP1/TP32/EP8 splits 100 routed experts over EP 8; the expert count "
                          "must be a multiple of EP"));
}

TEST(ValidateLayout, MoeTpMustDivideMoeIntermediate) {
  model::ModelDesc model = KimiLikeModel();
  model.moe.moe_intermediate = 3076;
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), model),
              ElementsAre(std::string(kAt) +
                          "PP1/TP32/EP4 has MoE-TP 8 (TP/EP = 32/4), which does not divide "
                          "moe_intermediate_size 3076"));
}

model::ModelDesc ShippedModel(const std::string& dir) {
  Result<model::ModelDesc> m = model::LoadModel(DataDir() + "/models/" + dir);
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? *m : model::ModelDesc{};
}

// The layout's block-FP8 error, "" when it has none.
std::string BlockRefusalOf(const spec::LayoutSpec& layout, const model::ModelDesc& model,
                           const spec::Spec& spec = MissionSpec()) {
  for (const std::string& e : ErrorsOf(layout, model, spec))
    if (e.find("block-FP8") != std::string::npos) return e;
  return "";
}

// SGLang's fp8.py refuses a TP shard of a block-FP8 weight that holds part of
// a 128 x 128 block: DeepSeek-V3 at TP32 (sglang issues #3345, #3491, #10641)
// and Qwen3-235B-A22B-FP8 at TP8, as the LMSYS PP blog found for both.
TEST(ValidateLayout, BlockFp8ShardsMustHoldWholeBlocks) {
  const model::ModelDesc deepseek = ShippedModel("deepseek-v3");
  EXPECT_EQ(BlockRefusalOf(Layout(1, 32, 1, 1), deepseek),
            std::string(kAt) +
                "PP1/TP32/EP1 splits block-FP8 weights (quantization_config.weight_block_size "
                "[128, 128] in " +
                deepseek.source_path +
                ") into partial blocks, and SGLang refuses to load it: \"Weight "
                "output_partition_size = 576 is not divisible by weight quantization block_n = "
                "128.\" (gate_proj: 18,432 output features / TP 32); also partial per rank: "
                "up_proj 576, down_proj 576, experts.gate_up_proj 64, experts.down_proj 64, "
                "shared_experts.gate_proj 64, shared_experts.up_proj 64, shared_experts.down_proj "
                "64. Use moe-a2a-backend = \"deepep\" with ep = 32 (whole shared experts, one "
                "MoE-TP rank per expert) and moe-dense-tp-size = 1 (the dense MLP whole on every "
                "rank); or a smaller TP, or an unquantized checkpoint");
  // TP8 and TP16 shards hold whole blocks (2,048 / 16 = 128).
  EXPECT_EQ(BlockRefusalOf(Layout(4, 8, 1, 1), deepseek), "");
  // The same weights unquantized load at TP32.
  model::ModelDesc unquantized = deepseek;
  unquantized.fp8_block = {};
  EXPECT_EQ(BlockRefusalOf(Layout(1, 32, 1, 1), unquantized), "");

  // Qwen3-235B-A22B-FP8: 1,536 expert columns / 8 = 192; EP2 keeps 384 per
  // rank. Four KV heads over TP8: each rank holds one whole 128-wide head.
  const model::ModelDesc qwen = ShippedModel("qwen3-235b-a22b-fp8");
  EXPECT_EQ(BlockRefusalOf(Layout(4, 8, 1, 1), qwen),
            std::string(kAt) +
                "PP4/TP8/EP1 splits block-FP8 weights (quantization_config.weight_block_size "
                "[128, 128] in " +
                qwen.source_path +
                ") into partial blocks, and SGLang refuses to load it: \"The output_size of "
                "gate's and up's weight = 192 is not divisible by weight quantization block_n = "
                "128.\" (experts.gate_up_proj: 1,536 moe_intermediate_size / MoE-TP 8); also "
                "partial per rank: experts.down_proj 192. Use ep = 2 (MoE-TP 4 keeps whole "
                "blocks); or a smaller TP, or an unquantized checkpoint");
  EXPECT_EQ(BlockRefusalOf(Layout(4, 8, 2, 1), qwen), "");
  EXPECT_EQ(BlockRefusalOf(Layout(8, 4, 1, 1), qwen), "");
}

// Where SGLang builds a weight over another group than TP, its shard is
// checked over that group; merged GEMMs are checked even where TP does not
// split them; replicated KV heads are checked one head per rank.
TEST(ValidateLayout, BlockFp8ChecksFollowTheGroupSglangBuildsEachWeightOver) {
  const model::ModelDesc deepseek = ShippedModel("deepseek-v3");
  // --moe-dense-tp-size 1 keeps the dense MLP whole; EP4 leaves each expert
  // 2,048 / 8 = 256 columns; the shared experts still split over TP32.
  spec::Spec dense_whole = MissionSpec();
  SetArg(dense_whole, "moe-dense-tp-size", IntArg(1, Loc(20, 1, "engine.args.moe-dense-tp-size")));
  const std::string shared = BlockRefusalOf(Layout(1, 32, 4, 1), deepseek, dense_whole);
  EXPECT_NE(shared.find("\"Weight output_partition_size = 64 is not divisible by weight "
                        "quantization block_n = 128.\" (shared_experts.gate_proj: 2,048 output "
                        "features / TP 32); also partial per rank: shared_experts.up_proj 64, "
                        "shared_experts.down_proj 64. Use moe-a2a-backend = \"deepep\" with ep "
                        "= 32 (whole shared experts, one MoE-TP rank per expert); or a smaller "
                        "TP, or an unquantized checkpoint"),
            std::string::npos)
      << shared;
  // DeepEP dispatches tokens to whole shared experts on every rank
  // (deepseek_v2.py builds them with tp_size = 1): the large-EP layout loads.
  spec::Spec deepep = dense_whole;
  SetArg(deepep, "moe-a2a-backend", StringArg("deepep", Loc(21, 1, "engine.args.moe-a2a-backend")));
  EXPECT_EQ(BlockRefusalOf(Layout(1, 32, 32, 1), deepseek, deepep), "");

  // Under a backend that forces EP = TP each expert is whole (MoE-TP 1), and
  // moe-dense-tp-size other than 1 (which SGLang rejects) changes nothing.
  EXPECT_EQ(BlockRefusalOf(Layout(1, 32, 1, 1), deepseek, deepep), "");
  spec::Spec dense_32 = MissionSpec();
  SetArg(dense_32, "moe-dense-tp-size", IntArg(32, Loc(20, 1, "engine.args.moe-dense-tp-size")));
  const std::string dense_split = BlockRefusalOf(Layout(1, 32, 4, 1), deepseek, dense_32);
  EXPECT_NE(dense_split.find("(gate_proj: 18,432 output features / TP 32)"), std::string::npos)
      << dense_split;

  // A merged gate/up GEMM whose part is not whole blocks is refused at TP 1.
  model::ModelDesc odd = deepseek;
  for (auto& layer : odd.layers)
    for (auto& l : layer.linears)
      if (l.name == "gate_proj" || l.name == "up_proj") l.out_features = 18432 + 64;
  spec::Spec one_node = MissionSpec();
  one_node.cluster.hosts.resize(1);
  one_node.cluster.gpus_per_node = 1;
  const std::string merged = BlockRefusalOf(Layout(1, 1, 1, 1), odd, one_node);
  EXPECT_NE(merged.find("\"Weight output_partition_size = 18496 is not divisible by weight "
                        "quantization block_n = 128.\" (gate_proj: 18,496 output features, "
                        "merged); also partial per rank: up_proj 18496. Use an unquantized "
                        "checkpoint (no layout makes these widths whole blocks)"),
            std::string::npos)
      << merged;

  // 64-wide KV heads, four of them over TP8: each rank holds one 64-wide head.
  model::ModelDesc narrow = ShippedModel("qwen3-235b-a22b-fp8");
  narrow.gqa.head_dim = 64;
  for (auto& layer : narrow.layers)
    for (auto& l : layer.linears)
      if (l.name == "k_proj" || l.name == "v_proj") l.out_features = 4 * 64;
  EXPECT_NE(BlockRefusalOf(Layout(4, 8, 2, 1), narrow)
                .find("\"Weight output_partition_size = 64 is not divisible by weight "
                      "quantization block_n = 128.\" (k_proj: one 64-wide KV head per rank (4 KV "
                      "heads / TP 8)); also partial per rank: v_proj 64."),
            std::string::npos)
      << BlockRefusalOf(Layout(4, 8, 2, 1), narrow);
}

// block_n bounds output features, block_k input features: with [64, 128]
// blocks DeepSeek-V3's TP32 column shards (576, 64) are whole and its row
// shards are not.
TEST(ValidateLayout, BlockFp8RowShardsFollowBlockK) {
  model::ModelDesc deepseek = ShippedModel("deepseek-v3");
  deepseek.fp8_block = {64, 128};
  const std::string e = BlockRefusalOf(Layout(1, 32, 1, 1), deepseek);
  EXPECT_NE(e.find("SGLang refuses to load it: \"Weight input_size_per_partition = 576 is not "
                   "divisible by weight quantization block_k = 128.\" (down_proj: 18,432 input "
                   "features / TP 32); also partial per rank: experts.down_proj 64, "
                   "shared_experts.down_proj 64."),
            std::string::npos)
      << e;
  model::ModelDesc qwen = ShippedModel("qwen3-235b-a22b-fp8");
  qwen.fp8_block = {64, 128};
  EXPECT_NE(BlockRefusalOf(Layout(4, 8, 1, 1), qwen)
                .find("\"The input_size of down's weight = 192 is not divisible by weight "
                      "quantization block_k = 128.\" (experts.down_proj: 1,536 "
                      "moe_intermediate_size / MoE-TP 8)."),
            std::string::npos)
      << BlockRefusalOf(Layout(4, 8, 1, 1), qwen);
}

// A width that does not divide over TP at all fails SGLang's divide(), whatever the dtype.
TEST(ValidateLayout, MlpWidthsMustDivideOverTp) {
  model::ModelDesc odd = ShippedModel("deepseek-v3");
  odd.fp8_block = {};
  for (auto& layer : odd.layers)
    for (auto& l : layer.linears) {
      if (l.name == "gate_proj" || l.name == "up_proj") l.out_features = 16400;
      if (l.name == "down_proj") l.in_features = 16400;
    }
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), odd),
              Contains(std::string(kAt) +
                       "PP1/TP32/EP4 splits gate_proj's 16,400 output features over TP 32, which "
                       "does not divide them; SGLang's loader asserts \"16400 is not divisible by "
                       "32\""));
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), odd),
              Contains(std::string(kAt) +
                       "PP1/TP32/EP4 splits down_proj's 16,400 input features over TP 32, which "
                       "does not divide them; SGLang's loader asserts \"16400 is not divisible by "
                       "32\""));
}

TEST(ValidateLayout, EpMustDivideTp) {
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 3, 1)),
              Contains(std::string(kAt) +
                       "PP1/TP32/EP3 has TP 32 not divisible by EP 3; SGLang builds EP groups "
                       "inside each TP group, so EP must divide TP"));
}

TEST(ValidateLayout, AttentionHeadsMustDivideOverTp) {
  model::ModelDesc model = KimiLikeModel();
  model.kda.num_heads = 40;
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), model),
              ElementsAre(std::string(kAt) +
                          "PP1/TP32/EP4 splits 40 KDA attention heads over TP 32; the head "
                          "count must be a multiple of TP"));
  model = KimiLikeModel();
  model.mla.num_heads = 100;
  EXPECT_THAT(ErrorsOf(Layout(4, 8, 4, 1), model),
              ElementsAre(std::string(kAt) +
                          "PP4/TP8/EP4 splits 100 MLA attention heads over TP 8; the head count "
                          "must be a multiple of TP"));
}

TEST(ValidateLayout, GqaKvHeadsMustTileTp) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  model::ModelDesc model = TinyGqaModel();
  model.gqa.num_kv_heads = 6;  // fewer than 8 ranks, and 8 % 6 != 0
  EXPECT_THAT(ErrorsOf(Layout(1, 8, 8, 1), model, spec),
              ElementsAre(std::string(kAt) +
                          "PP1/TP8/EP8 splits 6 GQA KV heads over TP 8; with fewer KV heads than "
                          "TP ranks, TP must be a multiple of the KV head count"));
  model.gqa.num_kv_heads = 12;  // more than 8 ranks, and 12 % 8 != 0
  EXPECT_THAT(ErrorsOf(Layout(1, 8, 8, 1), model, spec),
              ElementsAre(std::string(kAt) +
                          "PP1/TP8/EP8 splits 12 GQA KV heads over TP 8; the KV head count must "
                          "be a multiple of TP"));
}

TEST(ValidateLayout, A2aBackendForcesEpEqualTp) {
  spec::Spec spec = MissionSpec();
  SetArg(spec, "moe-a2a-backend", StringArg("deepep", Loc(20, 1, "engine.args.moe-a2a-backend")));
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), KimiLikeModel(), spec, H200()),
              ElementsAre(std::string(kAt) +
                          "PP1/TP32/EP4 sets EP 4 but moe-a2a-backend = \"deepep\" "
                          "(examples/x.toml:20:1) forces EP = TP; SGLang would silently change "
                          "ep from 4 to 32. Set ep = 32 or moe-a2a-backend = \"none\""));
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 32, 1), KimiLikeModel(), spec, H200()), IsEmpty());
  SetArg(spec, "moe-a2a-backend",
         StringArg("deepep_v2", Loc(20, 1, "engine.args.moe-a2a-backend")));
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), KimiLikeModel(), spec),
              ElementsAre(std::string(kAt) +
                          "PP1/TP32/EP4 sets EP 4 but moe-a2a-backend = \"deepep_v2\" "
                          "(examples/x.toml:20:1) forces EP = TP; SGLang would silently change "
                          "ep from 4 to 32. Set ep = 32 or moe-a2a-backend = \"none\""));
  SetArg(spec, "moe-a2a-backend", StringArg("none", Loc(20, 1, "engine.args.moe-a2a-backend")));
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), KimiLikeModel(), spec), IsEmpty());
}

// SGLang runs DeepEP's normal kernels only over NVLink, and their combine
// only with DeepGEMM (no SM120 kernels): on PCIe-only GPUs DeepEP is refused
// rather than costed over the NIC. Other backends are not affected.
TEST(ValidateLayout, DeepEpNeedsNvlink) {
  spec::Spec spec = MissionSpec();
  SetArg(spec, "moe-a2a-backend", StringArg("deepep", Loc(20, 1, "engine.args.moe-a2a-backend")));
  EXPECT_THAT(
      ErrorsOf(Layout(1, 32, 32, 1), KimiLikeModel(), spec),
      ElementsAre(std::string(kAt) +
                  "PP1/TP32/EP32 sets moe-a2a-backend = \"deepep\" (examples/x.toml:20:1) but "
                  "the GPUs (NVIDIA RTX 6000D, hardware profile rtx-6000d) have no NVLink: "
                  "SGLang runs DeepEP's normal kernels (every prefill batch) only over NVLink "
                  "inside a node, and their combine needs DeepGEMM, which has no kernels for "
                  "SM120 GPUs. Use moe-a2a-backend = \"none\" (the MoE all-reduce over TP)"));
  const LayoutPlan planned = PlanLayout(Layout(1, 32, 32, 1), spec, KimiLikeModel(), Rtx6000d());
  ASSERT_EQ(planned.errors.size(), 1u);
  EXPECT_EQ(planned.errors[0].reason, "a2a_backend");
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 32, 1), KimiLikeModel(), spec, H200()), IsEmpty());
  SetArg(spec, "moe-a2a-backend", StringArg("mooncake", Loc(20, 1, "engine.args.moe-a2a-backend")));
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 32, 1), KimiLikeModel(), spec), IsEmpty());
}

TEST(ValidateLayout, PipelineCannotExceedLayers) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 8;
  EXPECT_THAT(ErrorsOf(Layout(8, 1, 1, 1), TinyGqaModel(), spec),
              ElementsAre(std::string(kAt) +
                          "PP8/TP1/EP1 has 8 pipeline stages but the model has only 4 layers; "
                          "PP must not exceed the layer count"));
}

TEST(ValidateLayout, WeightsMustFitTheGpu) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 4;
  hardware::HardwareProfile hw = Rtx6000d();
  hw.memory_mib = 100;  // TinyGqaModel at PP2/TP2 needs about 140 MiB per rank
  LayoutPlan plan = PlanLayout(Layout(2, 2, 2, 1), spec, TinyGqaModel(), hw);
  EXPECT_FALSE(plan.valid);
  EXPECT_THAT(ErrorTexts(plan.errors),
              ElementsAre(std::string(kAt) +
                          "PP2/TP2/EP2 needs 140 MiB of weights per GPU on stage 0 but the GPU "
                          "(NVIDIA RTX 6000D) has 100 MiB; use more GPUs per stage (larger TP)"));
}

TEST(ValidateLayout, NonPositiveSizesStopPlanning) {
  LayoutPlan plan = PlanLayout(Layout(0, 32, 4, 1), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_FALSE(plan.valid);
  EXPECT_TRUE(plan.ranks.empty());
  EXPECT_THAT(ErrorTexts(plan.errors),
              ElementsAre(std::string(kAt) +
                          "PP0/TP32/EP4 has a size below 1; PP, TP, EP and DP must be at least 1"));
  spec::LayoutSpec no_dp;
  no_dp.pp = 1;
  no_dp.tp = 8;
  no_dp.ep = 1;
  no_dp.dp = 0;
  EXPECT_EQ(no_dp.Label(), "PP1/TP8/EP1/DP0");
}

std::vector<std::string> SpecWarningsOf(const spec::Spec& spec) {
  return ErrorTexts(PlanSearch(spec, KimiLikeModel(), Rtx6000d()).warnings);
}

TEST(SpecWarnings, MicroBatchSizeOne) {
  spec::Spec spec = MissionSpec();
  SetArg(spec, "pp-max-micro-batch-size",
         IntArg(1, Loc(22, 1, "engine.args.pp-max-micro-batch-size")));
  EXPECT_THAT(SpecWarningsOf(spec),
              ElementsAre("examples/x.toml:22:1: key 'engine.args.pp-max-micro-batch-size': "
                          "pp-max-micro-batch-size = 1 lets the scheduler admit only one new "
                          "request per micro-batch, which serializes a concurrent load and "
                          "exposes pipeline bubbles; SGLang's default is "
                          "max(max_running_requests // pp_size, 1). Remove it to keep the "
                          "default"));
  SetArg(spec, "pp-max-micro-batch-size",
         IntArg(4, Loc(22, 1, "engine.args.pp-max-micro-batch-size")));
  EXPECT_THAT(SpecWarningsOf(spec), IsEmpty());
}

TEST(SpecWarnings, RequestsNotAMultipleOfConcurrency) {
  spec::Spec spec = MissionSpec();
  spec.workload.requests = 40;
  spec.sweep.concurrency = {8, 16, 12};
  EXPECT_THAT(SpecWarningsOf(spec),
              ElementsAre("examples/x.toml:40:1: key 'workload.requests': 40 requests per "
                          "sample is not a multiple of concurrency 16, 12: the last wave of "
                          "each sample has fewer requests in flight, so its throughput mixes two "
                          "load levels. Use a multiple of every concurrency (e.g. 48)"));
}

TEST(SpecWarnings, PromptLengthsNotFixed) {
  spec::Spec spec = MissionSpec();
  spec.workload.input_distribution = "uniform";
  spec.workload.range_ratio = 0.5;
  EXPECT_THAT(SpecWarningsOf(spec),
              ElementsAre("examples/x.toml:40:1: key 'workload.input_distribution': prompt "
                          "lengths are not fixed (input_distribution = \"uniform\", range_ratio "
                          "= 0.5), so TTFT and input TPS depend on the lengths drawn and layouts "
                          "are harder to compare. Use input_distribution = \"fixed\" and "
                          "range_ratio = 1 (bench_serving: --random-range-ratio 1)"));
}

TEST(SpecWarnings, PrefixCacheWithRepeatedPromptsAndWarmup) {
  spec::Spec spec = MissionSpec();
  spec.engine.args.clear();  // radix cache on
  spec.workload.unique_prompts = false;
  spec.workload.warmup_requests = 1;
  EXPECT_THAT(
      SpecWarningsOf(spec),
      ElementsAre("examples/x.toml:40:1: key 'workload.unique_prompts': prompts repeat "
                  "(unique_prompts = false) while SGLang's radix (prefix) cache is on: repeated "
                  "prompts hit the cache and skip most of their prefill, inflating input TPS. "
                  "Set disable-radix-cache = true in the engine args",
                  "examples/x.toml:40:1: key 'workload.warmup_requests': warmup_requests = 1 "
                  "while SGLang's radix (prefix) cache is on: the warmup reuses request 0's "
                  "prompt (as sglang.bench_serving does), so request 0 hits the cache and its "
                  "TTFT is too short. Set disable-radix-cache = true in the engine args"));
  spec = MissionSpec();  // radix cache disabled: no warning
  spec.workload.unique_prompts = false;
  spec.workload.warmup_requests = 1;
  EXPECT_THAT(SpecWarningsOf(spec), IsEmpty());
}

TEST(SpecWarnings, AThroughputObjectiveInAnOpenLoop) {
  spec::Spec spec = MissionSpec();
  spec.workload.request_rate = 0.3;
  EXPECT_THAT(SpecWarningsOf(spec),
              ElementsAre("examples/x.toml:40:1: key 'workload.request_rate': request_rate = "
                          "0.3 is an open loop: every layout that keeps up serves the offered "
                          "rate, so objective input_tps ranks arrival noise; rank by ttft_p50, "
                          "or by goodput with SLA limits, to compare how each layout serves that "
                          "traffic"));
  spec.decision.objective = *decide::Objective::FromName("ttft_p50");
  EXPECT_THAT(SpecWarningsOf(spec), IsEmpty());
  spec.workload.request_rate = 0;
  spec.decision.objective = *decide::Objective::FromName("input_tps");
  EXPECT_THAT(SpecWarningsOf(spec), IsEmpty()) << "a closed loop";
}

TEST(LayoutWarnings, PpOnSglangVersionsWithPpBugs) {
  spec::Spec spec = MissionSpec();
  spec.engine.version = "0.5.9";
  Plan plan = PlanSearch(spec, KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(plan.layouts[0].warnings, IsEmpty());  // PP1
  EXPECT_THAT(ErrorTexts(plan.layouts[1].warnings),
              ElementsAre("examples/x.toml:31:10: key 'sweep.layouts[1]': PP2/TP16/EP4 runs "
                          "pipeline parallelism on SGLang 0.5.9, whose inverted admission check "
                          "can hang PP with chunked prefill (fixed in 0.5.11 by PR #23006); use "
                          "0.5.11 or later",
                          "examples/x.toml:31:10: key 'sweep.layouts[1]': PP2/TP16/EP4 runs "
                          "pipeline parallelism on SGLang 0.5.9, which sizes the linear-attention "
                          "state pool for the whole model on every stage (fixed in 0.5.17 by PR "
                          "#33666); max_running_requests and pp_max_micro_batch_size come out "
                          "far too small"));
}

// Without a version the state pool follows 0.5.17 and later; where that
// decides a PP layout's memory the plan says so.
TEST(LayoutWarnings, AnUnversionedHybridPipelineNamesTheStatePoolItAssumes) {
  spec::Spec spec = MissionSpec();
  spec.engine.version.clear();
  Plan plan = PlanSearch(spec, KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(plan.layouts[0].warnings, IsEmpty());  // PP1: one stage holds every layer
  EXPECT_THAT(ErrorTexts(plan.layouts[3].warnings),
              ElementsAre("examples/x.toml:31:10: key 'sweep.layouts[3]': PP8/TP4/EP4 sizes its "
                          "linear-attention state pool as SGLang 0.5.17 and later do (every rank "
                          "pays for the largest stage's state layers); before, every stage paid "
                          "for the whole model's (PR #33666), leaving most of that memory unused "
                          "and running far fewer requests. Set engine.version to the image's "
                          "SGLang version"));
  // A GQA model keeps no state: nothing to say.
  spec.cluster.hosts.resize(1);
  EXPECT_THAT(PlanLayout(Layout(2, 4, 4, 1), spec, TinyGqaModel(), Rtx6000d()).warnings, IsEmpty());
}

TEST(LayoutWarnings, GqaKvHeadReplication) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  LayoutPlan plan = PlanLayout(Layout(1, 8, 8, 1), spec, TinyGqaModel(), Rtx6000d());
  EXPECT_THAT(ErrorTexts(plan.warnings),
              ElementsAre(std::string(kAt) +
                          "PP1/TP8/EP8 replicates each of the 4 GQA KV heads on 2 TP ranks; the "
                          "KV cache per token does not shrink beyond TP 4"));
}

// SGLang refuses to start when the weights leave its static pool no KV
// token; the memory model computes that pool (memory/memory_model.h) and
// quotes SGLang's refusal: the smallest viable fraction is weights / (GPU -
// runtime) = 140.26 / 200 = 0.7013. A 256-token chunk and decode graphs up
// to batch 8 keep the activations (7.5 MiB) and graphs (16 MiB) inside the
// tiny GPU, so that 0.9 fits.
TEST(ValidateLayout, WeightsThatLeaveNoRoomForKvCacheAreAnError) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 4;
  SetArg(spec, "mem-fraction-static", StringArg("0.5", Loc(22, 1, "")));
  SetArg(spec, "chunked-prefill-size", IntArg(256, Loc(23, 1, "")));
  SetArg(spec, "cuda-graph-max-bs", IntArg(8, Loc(24, 1, "")));
  hardware::HardwareProfile hw = Rtx6000d();
  hw.memory_mib = 1700;  // TinyGqaModel at PP2/TP2 holds about 140 MiB on stage 0
  LayoutPlan plan = PlanLayout(Layout(2, 2, 2, 1), spec, TinyGqaModel(), hw);
  EXPECT_FALSE(plan.valid);
  EXPECT_THAT(ErrorTexts(plan.errors),
              ElementsAre(std::string(kAt) +
                          "PP2/TP2/EP2 holds 140 MiB of weights per GPU on stage 0, but "
                          "mem-fraction-static = 0.5 leaves no room for the KV cache: "
                          "mem_fraction_static x (GPU - CUDA context and NCCL) - weights = "
                          "0.5 x (1,700 - 1,500) - 140 = -40 MiB. SGLang refuses to start: "
                          "\"Loaded weights leave no GPU memory for the KV cache under "
                          "--mem-fraction-static=0.5. Raise --mem-fraction-static above 0.702 "
                          "(minimum viable = 1 - available/pre = 0.7013).\" Use more GPUs per "
                          "stage (larger TP) or a larger mem-fraction-static"));
  EXPECT_THAT(ErrorTexts(plan.warnings), IsEmpty());
  SetArg(spec, "mem-fraction-static", StringArg("0.9", Loc(22, 1, "")));
  EXPECT_TRUE(PlanLayout(Layout(2, 2, 2, 1), spec, TinyGqaModel(), hw).valid);
}

// With an 8192-token chunk and decode graphs up to bs 256 (SGLang's defaults
// on an 84 GB GPU, set here: a 1,700 MiB GPU's own would be 2048 and 8) the
// same GPU cannot hold stage 0's activations beside its weights, whatever
// mem-fraction-static says. Per
// token at TP2 / EP2: hidden states + residual 4,096 B; the MoE sublayer
// (4 routed pairs x (1024 dispatch + 2048 gate_up) + 1024 combine) x 2 B +
// 4 x 8 B of top-k = 26,656 B (above attention's 6,272): 30,752 B x 8192 =
// 240.25 MiB. Graphs: 256 (TP < 4) x 2 = 512 MiB. 1500 + 140.26 + 240.25 +
// 512 = 2,393 MiB > 1,700.
TEST(ValidateLayout, ActivationsThatLeaveNoRoomForKvCacheAreAnError) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 4;
  SetArg(spec, "mem-fraction-static", StringArg("0.9", Loc(22, 1, "")));
  SetArg(spec, "chunked-prefill-size", IntArg(8192, Loc(23, 1, "")));
  SetArg(spec, "cuda-graph-max-bs", IntArg(256, Loc(24, 1, "")));
  hardware::HardwareProfile hw = Rtx6000d();
  hw.memory_mib = 1700;
  LayoutPlan plan = PlanLayout(Layout(2, 2, 2, 1), spec, TinyGqaModel(), hw);
  EXPECT_FALSE(plan.valid);
  EXPECT_DOUBLE_EQ(plan.memory.stages[0].activation_mib, 30752.0 * 8192 / kBytesPerMib);
  EXPECT_THAT(ErrorTexts(plan.errors),
              ElementsAre(std::string(kAt) +
                          "PP2/TP2/EP2 leaves no room for the KV cache: stage 0 needs 2393 MiB "
                          "without any KV cache (weights 140, activations 240, CUDA graphs 512, "
                          "CUDA context and NCCL 1500) of the GPU's 1700 MiB; no "
                          "--mem-fraction-static leaves room for the KV cache. SGLang would run "
                          "out of memory capturing CUDA graphs or on the first full chunk. Use "
                          "more GPUs per stage (larger TP) or a smaller chunked-prefill-size"));
}

// mem-fraction-static 0.97 on the 85,651 MiB GPU gives weights and pools up
// to 0.97 x 84,151 = 81,626 MiB; with 1,500 MiB of runtime and 1,024 of
// graphs at most 1,501 MiB are left for a stage's chunk activations, fewer
// than PP8/TP4 needs: SGLang starts, but a full chunk may not fit.
TEST(LayoutWarnings, PoolsThatLeaveActivationsTooLittleRoom) {
  spec::Spec spec = MissionSpec();
  EXPECT_THAT(
      ErrorTexts(PlanLayout(Layout(8, 4, 4, 1), spec, KimiLikeModel(), Rtx6000d()).warnings),
      IsEmpty());
  SetArg(spec, "mem-fraction-static", StringArg("0.97", Loc(22, 1, "")));
  const LayoutPlan plan = PlanLayout(Layout(8, 4, 4, 1), spec, KimiLikeModel(), Rtx6000d());
  ASSERT_TRUE(plan.valid);
  const memory::StageMemory& last = plan.memory.stages[plan.memory.tightest_stage];
  EXPECT_GT(last.activation_mib, 1501);
  EXPECT_GT(last.peak_mib, 85651);
  EXPECT_THAT(
      ErrorTexts(plan.warnings),
      ElementsAre(::testing::StartsWith(
          std::string(kAt) + "PP8/TP4/EP4 is predicted to peak at " + FormatMib(last.peak_mib) +
          " MiB on stage " + std::to_string(plan.memory.tightest_stage) +
          ", above the GPU's 85,651 MiB: the pools that mem_fraction_static 0.97 sizes "
          "leave too little room for its activations (")));
  EXPECT_EQ(plan.memory.stages.size(), 8u);
}

// The prefill batch that sizes the activations: chunked-prefill-size, or
// with chunking disabled max-prefill-tokens (16384 unless set).
TEST(StageMemoryInputs, PrefillBatchFollowsChunking) {
  spec::Spec spec = MissionSpec();
  const model::ModelDesc model = KimiLikeModel();
  // The engine's settings are resolved when the layout is planned.
  const auto inputs = [&] {
    return StageMemoryInputs(PlanLayout(Layout(8, 4, 4, 1), spec, model, Rtx6000d()), spec, model,
                             Rtx6000d());
  };
  EXPECT_EQ(inputs().chunked_prefill_size, 8192);
  SetArg(spec, "chunked-prefill-size", IntArg(-1, Loc(21, 1, "")));
  EXPECT_EQ(inputs().chunked_prefill_size, 16384);
  SetArg(spec, "max-prefill-tokens", IntArg(4096, Loc(22, 1, "")));
  const memory::MemoryInputs in = inputs();
  EXPECT_EQ(in.chunked_prefill_size, 4096);
  // --max-total-tokens reaches the memory model as the pool's cap.
  EXPECT_FALSE(in.max_total_tokens.has_value());
  SetArg(spec, "max-total-tokens", IntArg(4096, Loc(23, 1, "")));
  EXPECT_EQ(inputs().max_total_tokens, 4096);
  // Stage 0 holds the embedding (163840 x 7168 bf16 / 4), the last stage the
  // LM head: 560 MiB each per rank.
  EXPECT_DOUBLE_EQ(in.stages.front().embedding_mib, 560);
  EXPECT_DOUBLE_EQ(in.stages.back().lm_head_mib, 560 + 7168 * 2 / (1024.0 * 1024));
  EXPECT_EQ(in.stages.back().num_layers, 12);
}

// The KDA state pool as the SGLang version sizes it. K3-like PP8/TP4: 69
// KDA layers of 96 x 128 x 128 fp32 state, a quarter per TP rank, 1.5 MiB a
// layer; the largest stages keep 9 of them (13.5 MiB a request), the whole
// model 69 (103.5 MiB). Since 0.5.17 every rank charges the budget for the
// largest stage; before, for the whole model, so each stage used about a
// seventh of the state memory it set aside (SGLang PR #33666).
TEST(StageMemoryInputs, TheStatePoolFollowsTheSglangVersion) {
  spec::Spec spec = MissionSpec();  // version 0.5.18, radix cache off
  const model::ModelDesc model = KimiLikeModel();
  const auto planned = [&](const spec::LayoutSpec& layout) {
    return PlanLayout(layout, spec, model, Rtx6000d());
  };
  const LayoutPlan now = planned(Layout(8, 4, 4, 1));
  const memory::MemoryInputs in = StageMemoryInputs(now, spec, model, Rtx6000d());
  constexpr double kMib = 1024.0 * 1024.0;
  EXPECT_FALSE(in.state_pool.whole_model_per_stage);
  EXPECT_DOUBLE_EQ(in.state_pool.whole_model_bytes_per_request, 69 * 1.5 * kMib);
  EXPECT_EQ(in.state_pool.slots_per_request, 1);  // the radix cache is off
  EXPECT_DOUBLE_EQ(in.stages[0].state_bytes_per_request, 9 * 1.5 * kMib);

  spec.engine.version = "0.5.16";
  const LayoutPlan before = planned(Layout(8, 4, 4, 1));
  EXPECT_TRUE(StageMemoryInputs(before, spec, model, Rtx6000d()).state_pool.whole_model_per_stage);
  // A state slot then costs the budget 69 / 9 times as much: about that many
  // fewer slots, and requests, with the rest of the budget set aside unused.
  EXPECT_NEAR(static_cast<double>(now.memory.state_slots) / before.memory.state_slots, 69.0 / 9,
              0.1);
  EXPECT_EQ(before.memory.max_running_requests, before.memory.state_slots);
  for (size_t s = 0; s < 8; ++s)
    EXPECT_LT(before.memory.stages[s].state_pool_mib, now.memory.stages[s].state_pool_mib / 7)
        << "stage " << s;
  const auto tightest = [](const LayoutPlan& p) {
    return p.memory.stages[p.memory.tightest_stage].headroom_mib;
  };
  EXPECT_GT(tightest(before), tightest(now) + 5000);
  // One stage holds every layer, so it pays for the whole model's either
  // way; but 0.5.16 left the padding slot out of the solve at PP1 too:
  // floor(budget / state) slots, one more than 0.5.17's.
  EXPECT_TRUE(StageMemoryInputs(planned(Layout(1, 32, 4, 0)), spec, model, Rtx6000d())
                  .state_pool.whole_model_per_stage);
  spec::Spec v18 = spec;
  v18.engine.version = "0.5.18";
  EXPECT_EQ(planned(Layout(1, 32, 4, 0)).memory.state_slots,
            PlanLayout(Layout(1, 32, 4, 0), v18, model, Rtx6000d()).memory.state_slots + 1);

  // With the radix cache on, the request holds 3 slots plus the extra
  // buffer's ping-pong: 2 with the overlap scheduler (PP1), 1 under PP.
  spec::Spec radix = MissionSpec();
  radix.engine.args.clear();
  const auto slots = [&](const spec::LayoutSpec& layout) {
    return StageMemoryInputs(PlanLayout(layout, radix, model, Rtx6000d()), radix, model, Rtx6000d())
        .state_pool.slots_per_request;
  };
  EXPECT_EQ(slots(Layout(1, 32, 4, 0)), 5);
  EXPECT_EQ(slots(Layout(8, 4, 4, 1)), 4);
  // Another linear-attention backend has no extra buffer: auto is no_buffer.
  spec::Spec other_backend = radix;
  SetArg(other_backend, "linear-attn-backend",
         StringArg("flashinfer", Loc(20, 1, "engine.args.linear-attn-backend")));
  EXPECT_EQ(StageMemoryInputs(PlanLayout(Layout(1, 32, 4, 0), other_backend, model, Rtx6000d()),
                              other_backend, model, Rtx6000d())
                .state_pool.slots_per_request,
            3);
  // no_buffer as written needs the overlap scheduler off by the user (SGLang
  // asserts before PP turns it off): refused, then 3 slots with the flag.
  SetArg(radix, "mamba-radix-cache-strategy",
         StringArg("no_buffer", Loc(21, 1, "engine.args.mamba-radix-cache-strategy")));
  EXPECT_THAT(ErrorTexts(PlanLayout(Layout(8, 4, 4, 1), radix, model, Rtx6000d()).errors),
              ElementsAre(HasSubstr("PP8/TP4/EP4 sets its linear-attention state pool up as "
                                    "SGLang refuses to start it: \"no_buffer do not support "
                                    "overlap schedule. Try to set "
                                    "disable_overlap_schedule=True.\"")));
  SetArg(radix, "disable-overlap-schedule",
         SwitchArg(Loc(22, 1, "engine.args.disable-overlap-schedule")));
  EXPECT_EQ(slots(Layout(8, 4, 4, 1)), 3);
  EXPECT_THAT(PlanLayout(Layout(8, 4, 4, 1), radix, model, Rtx6000d()).errors, IsEmpty());
}

// SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK (0.5.17 on) takes a slot off a running
// request's; an older SGLang has no such variable.
TEST(LayoutChecks, SkippingTheDecodeLockIsReadFromTheEnvironmentFrom0517) {
  const model::ModelDesc model = KimiLikeModel();
  spec::Spec spec = MissionSpec();
  spec.engine.args.clear();  // the radix cache on
  spec.engine.env.emplace_back("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK", "1");
  const auto slots = [&](const std::string& version) {
    spec.engine.version = version;
    return StageMemoryInputs(PlanLayout(Layout(8, 4, 4, 1), spec, model, Rtx6000d()), spec, model,
                             Rtx6000d())
        .state_pool.slots_per_request;
  };
  EXPECT_EQ(slots(""), 3);  // 2 + the ping-pong under PP
  EXPECT_EQ(slots("0.5.18"), 3);
  EXPECT_EQ(slots("0.5.16"), 4);
}

// server_args.py _validate_mamba_extra_buffer (0.5.17 on): a PD server
// refuses the lazy extra buffer.
TEST(LayoutChecks, APdServerOf0517RefusesTheLazyBuffer) {
  const model::ModelDesc model = KimiLikeModel();
  spec::Spec spec = MissionSpec();
  spec.engine.args.clear();  // the radix cache on
  SetArg(spec, "mamba-radix-cache-strategy",
         StringArg("extra_buffer_lazy", Loc(21, 1, "engine.args.mamba-radix-cache-strategy")));
  const auto refusal = [&](const std::string& version) {
    spec.engine.version = version;
    return StageMemoryInputs(PlanLayout(Layout(1, 32, 4, 0), spec, model, Rtx6000d()), spec, model,
                             Rtx6000d())
        .state_pool.rule_refusal;
  };
  EXPECT_EQ(refusal(""), "");  // aggregated
  SetArg(spec, "disaggregation-mode", StringArg("prefill", Loc(22, 1, "sweep.prefill")));
  EXPECT_EQ(refusal(""),
            "extra_buffer_lazy unsupported under PD disaggregation; use "
            "--mamba-radix-cache-strategy extra_buffer.");
  EXPECT_EQ(refusal("0.5.16"), "");
}

// The planner reads a version as the spec does (spec::ParseVersion).
TEST(VersionCode, ReadsWhatTheSpecAccepts) {
  EXPECT_EQ(VersionCode("0.5.18"), 518);
  EXPECT_EQ(VersionCode("v0.5.16"), 516);
  EXPECT_EQ(VersionCode("0.5.18rc1"), 518);
  EXPECT_EQ(VersionCode("0.5"), 500);
  EXPECT_EQ(VersionCode("1"), 10000);
  EXPECT_EQ(VersionCode(""), -1);
  EXPECT_EQ(VersionCode("garbage"), -1);
}

// A state pool with no slot is refused in SGLang's words, as a state-pool
// problem, not as a KV pool the weights leave no room for.
TEST(ValidateLayout, AStatePoolWithNoSlotIsRefusedAsSuch) {
  spec::Spec spec = MissionSpec();
  SetArg(spec, "mamba-full-memory-ratio",
         spec::ArgValue{spec::ArgValue::Kind::kFloat, "0.0001", 0, 0.0001, false,
                        Loc(21, 1, "engine.args.mamba-full-memory-ratio")});
  const LayoutPlan plan = PlanLayout(Layout(8, 4, 4, 1), spec, KimiLikeModel(), Rtx6000d());
  ASSERT_EQ(plan.errors.size(), 1u);
  EXPECT_THAT(
      plan.errors[0].message,
      ::testing::AllOf(HasSubstr("PP8/TP4/EP4 leaves its linear-attention state pool no room for a "
                                 "request. SGLang refuses to start: \"Not enough GPU memory for "
                                 "hybrid (mamba/linear-attention) state cache. Computed "
                                 "max_mamba_cache_size=-1"),
                       HasSubstr("Raise mamba-full-memory-ratio or mem-fraction-static, or set "
                                 "max-mamba-cache-size"),
                       ::testing::Not(HasSubstr("weights per GPU"))));
}

// The CUDA graphs SGLang captures, resolved from the flags as
// cuda_graph_hook.py does: the breakable prefill graph is on by default only
// at pp 1 and not for KDA models; an explicit prefill backend overrides that;
// --disable-cuda-graph turns off what no per-phase flag sets.
TEST(StageMemoryInputs, CudaGraphsAsSglangResolvesThem) {
  spec::Spec spec = MissionSpec();
  const model::ModelDesc gqa = TinyGqaModel();
  const auto inputs = [&](const spec::LayoutSpec& layout, const model::ModelDesc& model) {
    return StageMemoryInputs(PlanLayout(layout, spec, model, Rtx6000d()), spec, model, Rtx6000d());
  };
  memory::MemoryInputs in = inputs(Layout(1, 4, 4, 0), gqa);
  EXPECT_FALSE(in.mla);
  EXPECT_TRUE(in.decode_graph);
  EXPECT_TRUE(in.prefill_graph);
  EXPECT_FALSE(inputs(Layout(2, 2, 2, 1), gqa).prefill_graph);
  // Kimi-like: MLA and KDA layers; KDA keeps the prefill graph off at pp 1 too.
  in = inputs(Layout(1, 32, 4, 0), KimiLikeModel());
  EXPECT_TRUE(in.mla);
  EXPECT_FALSE(in.prefill_graph);

  SetArg(spec, "cuda-graph-backend-prefill",
         StringArg("breakable", Loc(21, 1, "engine.args.cuda-graph-backend-prefill")));
  SetArg(spec, "moe-a2a-backend", StringArg("deepep", Loc(22, 1, "engine.args.moe-a2a-backend")));
  SetArg(spec, "disable-cuda-graph", SwitchArg(Loc(23, 1, "engine.args.disable-cuda-graph")));
  in = inputs(Layout(2, 2, 2, 1), gqa);
  EXPECT_TRUE(in.prefill_graph);  // the explicit backend wins at pp 2
  EXPECT_FALSE(in.decode_graph);
  EXPECT_TRUE(in.deepep);
}

// SGLang rejects every request whose input + output tokens reach the context
// length, unless [engine.args] context-length raises it.
TEST(ValidateLayout, PromptsLongerThanTheContextLengthAreAnError) {
  spec::Spec spec = MissionSpec();
  spec.workload.input_tokens = 50000;
  spec.origins["workload.input_tokens"] = Loc(41, 16, "workload.input_tokens");
  model::ModelDesc model = KimiLikeModel();
  model.max_context = 40960;
  EXPECT_THAT(ErrorsOf(Layout(8, 4, 4, 3), model, spec),
              ElementsAre("examples/x.toml:41:16: key 'workload.input_tokens': PP8/TP4/EP4 cannot "
                          "serve requests of 50,000 input + 1 output tokens: the context length is "
                          "40,960 (the model's max_position_embeddings; [engine.args] "
                          "context-length can raise it), and SGLang rejects a request whose input "
                          "+ output tokens reach it"));
  SetArg(spec, "context-length", IntArg(65536, Loc(23, 1, "engine.args.context-length")));
  EXPECT_THAT(ErrorsOf(Layout(8, 4, 4, 3), model, spec), IsEmpty());
  SetArg(spec, "context-length", IntArg(32768, Loc(23, 1, "engine.args.context-length")));
  EXPECT_THAT(ErrorsOf(Layout(8, 4, 4, 3), model, spec),
              ElementsAre("examples/x.toml:41:16: key 'workload.input_tokens': PP8/TP4/EP4 cannot "
                          "serve requests of 50,000 input + 1 output tokens: the context length is "
                          "32,768 ([engine.args] context-length), and SGLang rejects a request "
                          "whose input + output tokens reach it"));
}

// Dynamic chunking starts from chunked-prefill-size; with chunked prefill off
// there is no initial chunk, which the simulator does not model.
TEST(ValidateLayout, DynamicChunkingWithoutChunkedPrefillIsNotModelled) {
  spec::Spec spec = MissionSpec();
  model::ModelDesc model = KimiLikeModel();
  SetArg(spec, "enable-dynamic-chunking", StringArg("true", Loc(24, 1, "")));
  SetArg(spec, "chunked-prefill-size", IntArg(-1, Loc(25, 1, "engine.args.chunked-prefill-size")));
  spec.origins["engine.args.chunked-prefill-size"] = Loc(25, 1, "engine.args.chunked-prefill-size");
  EXPECT_THAT(ErrorsOf(Layout(8, 4, 4, 3), model, spec),
              ElementsAre("examples/x.toml:25:1: key 'engine.args.chunked-prefill-size': "
                          "PP8/TP4/EP4: [engine.args] enable-dynamic-chunking with "
                          "chunked-prefill-size = -1 (chunked prefill off) is not modelled; "
                          "dynamic chunking needs a positive chunked-prefill-size as its initial "
                          "chunk"));
  // PP1 never runs dynamic chunking (SGLang enables it only with PP > 1).
  EXPECT_THAT(ErrorsOf(Layout(1, 32, 4, 1), model, spec), IsEmpty());
  SetArg(spec, "chunked-prefill-size",
         IntArg(8192, Loc(25, 1, "engine.args.chunked-prefill-size")));
  EXPECT_THAT(ErrorsOf(Layout(8, 4, 4, 3), model, spec), IsEmpty());
}

// `search` counts its refusals by these reasons, and docs/search.md says
// what each one is: a reason added to the planner is added there too.
TEST(ErrorReasons, DocsSearchNamesEachOne) {
  Result<std::string> text = ReadFile(std::string(PPSEARCH_SOURCE_DIR) + "/docs/search.md");
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const std::string& reason : ErrorReasons())
    EXPECT_NE(text->find("`" + reason + "`"), std::string::npos) << reason;
}

}  // namespace
}  // namespace ppsearch::plan
