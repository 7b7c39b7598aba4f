// The mission's acceptance cases for the rank map, TP groups, stage split,
// stage boundaries, collectives and per-rank memory.

#include "plan/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_internal.h"
#include "plan/plan_testing.h"

namespace ppsearch::plan {
namespace {

using ::testing::ElementsAre;
using testing::KimiLikeModel;
using testing::Layout;
using testing::Loc;
using testing::MissionSpec;
using testing::Rtx6000d;
using testing::SetArg;
using testing::StringArg;
using testing::TinyGqaModel;

LayoutPlan PlanMission(int pp, int tp, int ep) {
  return PlanLayout(Layout(pp, tp, ep), MissionSpec(), KimiLikeModel(), Rtx6000d());
}

std::vector<int> LayerCounts(const LayoutPlan& plan) {
  std::vector<int> counts;
  for (const StagePlan& s : plan.stages) counts.push_back(s.num_layers());
  return counts;
}

TEST(StageLayerRange, LastRemainderStagesGetTheExtraLayer) {
  std::vector<int> sizes;
  for (int s = 0; s < 8; ++s) {
    auto [first, end] = StageLayerRange(93, 8, s);
    sizes.push_back(end - first);
  }
  EXPECT_THAT(sizes, ElementsAre(11, 11, 11, 12, 12, 12, 12, 12));
  EXPECT_EQ(StageLayerRange(93, 8, 0), std::make_pair(0, 11));
  EXPECT_EQ(StageLayerRange(93, 8, 3), std::make_pair(33, 45));
  EXPECT_EQ(StageLayerRange(93, 8, 7), std::make_pair(81, 93));
  EXPECT_EQ(StageLayerRange(93, 2, 0), std::make_pair(0, 46));
  EXPECT_EQ(StageLayerRange(93, 2, 1), std::make_pair(46, 93));
}

// SGLANG_PP_LAYER_PARTITION: each stage takes its entry, in order; one that
// does not fit is SGLang's ValueError, and the even split stands in.
TEST(StageLayerRange, APartitionGivesEachStageItsEntry) {
  const std::vector<int> partition = {12, 12, 12, 12, 12, 12, 12, 9};
  EXPECT_EQ(StageLayerRange(93, 8, 0, partition), std::make_pair(0, 12));
  EXPECT_EQ(StageLayerRange(93, 8, 7, partition), std::make_pair(84, 93));
  EXPECT_EQ(PartitionError(partition, 93, 8), "");
  EXPECT_EQ(PartitionError({}, 93, 8), "");
  EXPECT_EQ(PartitionError(partition, 93, 4), "len(partitions)=8 does not match pp_size=4.");
  EXPECT_EQ(PartitionError({50, 50}, 93, 2),
            "sum(partitions)=100 does not match num_hidden_layers=93.");
  EXPECT_EQ(StageLayerRange(93, 2, 1, {50, 50}), std::make_pair(46, 93));
}

TEST(PlanLayout, APartitionInTheEnvironmentSplitsTheStages) {
  spec::Spec spec = MissionSpec();
  spec.engine.env.emplace_back("SGLANG_PP_LAYER_PARTITION", "12,12,12,12,12,12,12,9");
  const LayoutPlan plan = PlanLayout(Layout(8, 4, 4), spec, KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(LayerCounts(plan), ElementsAre(12, 12, 12, 12, 12, 12, 12, 9));
  EXPECT_THAT(plan.errors, IsEmpty());
  // The last stage, with the LM head, now holds less than the even split's.
  const LayoutPlan even = PlanMission(8, 4, 4);
  EXPECT_LT(plan.stages.back().weight_mib_per_rank, even.stages.back().weight_mib_per_rank);
  // A layout it does not fit is refused in SGLang's words.
  const LayoutPlan pp4 = PlanLayout(Layout(4, 8, 4), spec, KimiLikeModel(), Rtx6000d());
  ASSERT_EQ(pp4.errors.size(), 1u);
  EXPECT_EQ(pp4.errors[0].reason, "pp_layer_partition");
  EXPECT_THAT(pp4.errors[0].message,
              HasSubstr("PP4/TP8/EP4 does not fit [engine.env] SGLANG_PP_LAYER_PARTITION = "
                        "\"12,12,12,12,12,12,12,9\", and SGLang refuses to start it: "
                        "\"len(partitions)=8 does not match pp_size=4.\""));
}

// [engine.pp_layer_partition] splits the layouts of its pipeline size and
// no other; one that does not sum to the model's layers is refused naming it.
TEST(PlanLayout, APartitionPerPipelineSizeSplitsThatSizeOnly) {
  spec::Spec spec = MissionSpec();
  spec.engine.pp_layer_partitions[8] = {12, 12, 12, 12, 12, 12, 12, 9};
  const LayoutPlan pp8 = PlanLayout(Layout(8, 4, 4), spec, KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(LayerCounts(pp8), ElementsAre(12, 12, 12, 12, 12, 12, 12, 9));
  EXPECT_THAT(pp8.errors, IsEmpty());
  const LayoutPlan pp4 = PlanLayout(Layout(4, 8, 4), spec, KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(pp4.errors, IsEmpty());
  EXPECT_EQ(LayerCounts(pp4), LayerCounts(PlanMission(4, 8, 4)));
  spec.engine.pp_layer_partitions[4] = {24, 24, 24, 24};
  const LayoutPlan wrong = PlanLayout(Layout(4, 8, 4), spec, KimiLikeModel(), Rtx6000d());
  ASSERT_EQ(wrong.errors.size(), 1u);
  EXPECT_EQ(wrong.errors[0].reason, "pp_layer_partition");
  EXPECT_THAT(wrong.errors[0].message,
              HasSubstr("PP4/TP8/EP4 does not fit [engine.pp_layer_partition] 4 = [24, 24, 24, "
                        "24], and SGLang refuses to start it: \"sum(partitions)=96 does not "
                        "match num_hidden_layers=93.\""));
}

TEST(PlanLayout, Pp1Tp32GroupSpansAllFourNodes) {
  LayoutPlan plan = PlanMission(1, 32, 4);
  EXPECT_TRUE(plan.valid);
  ASSERT_EQ(plan.tp_groups.size(), 1u);
  EXPECT_THAT(plan.tp_groups[0].nodes, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(plan.tp_groups[0].ranks.size(), 32u);
  EXPECT_EQ(plan.cross_node_stage_boundaries, 0);
  EXPECT_EQ(plan.moe_tp, 8);
  // 2 per layer + the embedding's; every one crosses nodes.
  EXPECT_EQ(plan.allreduce_per_forward, 187);
  EXPECT_EQ(plan.cross_node_allreduce_per_forward, 187);
  EXPECT_EQ(plan.allgather_per_forward, 1);
}

TEST(PlanLayout, Pp2Tp16GroupsSpanTwoNodes) {
  LayoutPlan plan = PlanMission(2, 16, 4);
  EXPECT_TRUE(plan.valid);
  ASSERT_EQ(plan.tp_groups.size(), 2u);
  EXPECT_THAT(plan.tp_groups[0].nodes, ElementsAre(0, 1));
  EXPECT_THAT(plan.tp_groups[1].nodes, ElementsAre(2, 3));
  EXPECT_EQ(plan.cross_node_stage_boundaries, 1);
  EXPECT_THAT(plan.boundaries[0].node_pairs, ElementsAre(std::pair(0, 2), std::pair(1, 3)));
  EXPECT_EQ(plan.moe_tp, 4);
  EXPECT_EQ(plan.allreduce_per_forward, 187);
  EXPECT_EQ(plan.cross_node_allreduce_per_forward, 187);
}

TEST(PlanLayout, Pp4Tp8OneStagePerNode) {
  LayoutPlan plan = PlanMission(4, 8, 4);
  EXPECT_TRUE(plan.valid);
  for (int s = 0; s < 4; ++s) {
    EXPECT_THAT(plan.tp_groups[s].nodes, ElementsAre(s));
    EXPECT_THAT(plan.stages[s].nodes, ElementsAre(s));
  }
  EXPECT_EQ(plan.cross_node_stage_boundaries, 3);
  EXPECT_THAT(LayerCounts(plan), ElementsAre(23, 23, 23, 24));
  EXPECT_EQ(plan.cross_node_allreduce_per_forward, 0);
  EXPECT_EQ(plan.moe_tp, 2);
}

TEST(PlanLayout, Pp8Tp4TwoStagesPerNode) {
  LayoutPlan plan = PlanMission(8, 4, 4);
  EXPECT_TRUE(plan.valid);
  for (int s = 0; s < 8; ++s) {
    EXPECT_FALSE(plan.tp_groups[s].crosses_nodes());
    EXPECT_THAT(plan.stages[s].nodes, ElementsAre(s / 2));
  }
  EXPECT_THAT(LayerCounts(plan), ElementsAre(11, 11, 11, 12, 12, 12, 12, 12));
  EXPECT_EQ(plan.cross_node_stage_boundaries, 3);
  ASSERT_EQ(plan.boundaries.size(), 7u);
  EXPECT_FALSE(plan.boundaries[0].crosses_nodes());  // 601 -> 601
  EXPECT_TRUE(plan.boundaries[1].crosses_nodes());   // 601 -> 602
  EXPECT_EQ(plan.boundaries[1].cross_node_rank_pairs, 4);
  EXPECT_EQ(plan.moe_tp, 1);
  EXPECT_EQ(plan.allreduce_per_forward, 187);
  EXPECT_EQ(plan.cross_node_allreduce_per_forward, 0);
}

// More ranks than the cluster has GPUs cannot be mapped onto its nodes; a
// typo of that size must not build millions of ranks before saying so.
TEST(PlanLayout, ALayoutLargerThanTheClusterIsRefusedWithoutMappingRanks) {
  LayoutPlan plan = PlanMission(4096, 4096, 1);
  EXPECT_FALSE(plan.valid);
  EXPECT_TRUE(plan.ranks.empty());
  EXPECT_TRUE(plan.stages.empty());
  ASSERT_FALSE(plan.errors.empty());
  EXPECT_NE(plan.errors[0].message.find("PP4096/TP4096/EP1 uses 16777216 GPUs but the cluster "
                                        "has 32"),
            std::string::npos)
      << plan.errors[0].message;
}

TEST(PlanLayout, RankMapFillsNodesInOrder) {
  LayoutPlan plan = PlanMission(8, 4, 4);
  const RankPlacement& r = plan.ranks[13];  // stage 3, tp rank 1
  EXPECT_EQ(r.node, 1);
  EXPECT_EQ(r.local_gpu, 5);
  EXPECT_EQ(r.pp_rank, 3);
  EXPECT_EQ(r.tp_rank, 1);
  EXPECT_EQ(r.moe_ep_rank, 1);
  EXPECT_EQ(r.moe_tp_rank, 0);
  LayoutPlan pp1 = PlanMission(1, 32, 4);
  EXPECT_EQ(pp1.ranks[13].moe_ep_rank, 1);  // moe_tp 8: tp ranks 8-15 are EP rank 1
  EXPECT_EQ(pp1.ranks[13].moe_tp_rank, 5);
}

TEST(PlanLayout, StagesCountLayerKindsAndEnds) {
  LayoutPlan plan = PlanMission(8, 4, 4);
  const StagePlan& first = plan.stages[0];  // layers 0-10: MLA at 3, 7
  EXPECT_EQ(first.mla_layers, 2);
  EXPECT_EQ(first.kda_layers, 9);
  EXPECT_EQ(first.dense_layers, 1);
  EXPECT_EQ(first.moe_layers, 10);
  EXPECT_TRUE(first.has_embedding);
  EXPECT_FALSE(first.has_lm_head);
  const StagePlan& last = plan.stages[7];  // layers 81-92: MLA at 83, 87, 91, 92
  EXPECT_EQ(last.mla_layers, 4);
  EXPECT_EQ(last.kda_layers, 8);
  EXPECT_TRUE(last.has_lm_head);
  EXPECT_FALSE(last.has_embedding);
  // Stage 0: 11 layers x 2 + embedding; stage 7: 12 x 2, logits all-gathered.
  EXPECT_EQ(first.collectives.allreduce_count, 23);
  EXPECT_EQ(last.collectives.allreduce_count, 24);
  EXPECT_EQ(last.collectives.allgather_count, 1);
  EXPECT_EQ(first.collectives.allreduce_bytes_per_token, 7168 * 2);
}

TEST(PlanLayout, BoundaryBytesAreTwoBf16TensorsSplitOverTp) {
  LayoutPlan plan = PlanMission(4, 8, 4);
  EXPECT_EQ(plan.boundaries[0].bytes_per_token, 4 * 7168);
  EXPECT_EQ(plan.boundaries[0].bytes_per_token_per_rank, 4 * 7168 / 8);
}

// With block attention residuals (block size 12) a hop carries the hidden
// states, the blocks completed before the next stage's first layer and the
// running block sum: PP8 stage 1 starts at layer 11 (1 + 0 + 1 = 2 vectors,
// 28,672 B), stage 2 at 22 (1 + 1 + 1 = 3, 43,008 B), stage 7 at 81
// (1 + 6 + 1 = 8, 114,688 B); each of the 4 TP ranks sends a quarter.
TEST(PlanLayout, BoundaryBytesCarryTheBlockResiduals) {
  model::ModelDesc model = KimiLikeModel();
  model.attn_res_block_size = 12;
  LayoutPlan plan = PlanLayout(Layout(8, 4, 4), MissionSpec(), model, Rtx6000d());
  ASSERT_EQ(plan.boundaries.size(), 7u);
  EXPECT_EQ(plan.boundaries[0].bytes_per_token, 2 * 7168 * 2);
  EXPECT_EQ(plan.boundaries[1].bytes_per_token, 3 * 7168 * 2);
  EXPECT_EQ(plan.boundaries[1].bytes_per_token_per_rank, 3 * 7168 * 2 / 4);
  EXPECT_EQ(plan.boundaries[6].bytes_per_token, 8 * 7168 * 2);
  Plan search = PlanSearch(MissionSpec(), model, Rtx6000d());
  const std::string text = RenderPlanText(search);
  EXPECT_NE(text.find("hidden_states + block attention residuals, bf16 (B/token, per TP rank)"),
            std::string::npos);
  EXPECT_NE(text.find("  6 -> 7   intra-node (604)  114,688 / 28,672\n"), std::string::npos);
}

TEST(PlanLayout, TpOneHasNoCollectives) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 4;
  LayoutPlan plan = PlanLayout(Layout(4, 1, 1), spec, TinyGqaModel(), Rtx6000d());
  EXPECT_EQ(plan.allreduce_per_forward, 0);
  EXPECT_EQ(plan.allgather_per_forward, 0);
}

// Hand-worked from TinyGqaModel's comment: per layer and rank at TP2,
// 3 + 1 + 0.125 + 34 MiB + 4 KiB of norms = 38.12890625 MiB.
TEST(StageMemory, WeightsPerRankDivideShardedTensorsByTp) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 4;
  model::ModelDesc model = TinyGqaModel();
  model.family = "deepseek_v3";  // lm_head on the last stage only
  LayoutPlan plan = PlanLayout(Layout(2, 2, 2), spec, model, Rtx6000d());
  ASSERT_EQ(plan.stages.size(), 2u);
  // 2 layers + half the 64 MiB embedding.
  EXPECT_DOUBLE_EQ(plan.stages[0].weight_mib_per_rank, 2 * 38.12890625 + 32);
  // 2 layers + half the lm_head + the final norm (1024 x bf16).
  EXPECT_DOUBLE_EQ(plan.stages[1].weight_mib_per_rank, 2 * 38.12890625 + 32 + 2048.0 / (1 << 20));
  EXPECT_DOUBLE_EQ(plan.weight_mib_per_rank_max, plan.stages[1].weight_mib_per_rank);
}

TEST(StageMemory, LmHeadOnEveryStageForQwen3Moe) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 4;
  LayoutPlan plan = PlanLayout(Layout(2, 2, 2), spec, TinyGqaModel(), Rtx6000d());
  EXPECT_TRUE(plan.stages[0].holds_lm_head_weights);
  EXPECT_DOUBLE_EQ(plan.stages[0].weight_mib_per_rank, 2 * 38.12890625 + 32 + 32);
}

TEST(StageMemory, GqaKvHeadsSplitOverTpButKeepOneHead) {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  model::ModelDesc model = TinyGqaModel();
  // 4 KV heads: TP2 keeps 2 heads per rank, TP8 one head (replicated).
  spec.cluster.gpus_per_node = 2;
  EXPECT_EQ(
      PlanLayout(Layout(1, 2, 2), spec, model, Rtx6000d()).stages[0].kv_bytes_per_token_per_rank,
      4 * 1024 / 2);
  spec.cluster.gpus_per_node = 8;
  EXPECT_EQ(
      PlanLayout(Layout(1, 8, 8), spec, model, Rtx6000d()).stages[0].kv_bytes_per_token_per_rank,
      4 * 1024 / 4);
}

TEST(StageMemory, MlaLatentIsReplicatedAndKdaStateSplit) {
  LayoutPlan plan = PlanMission(8, 4, 4);
  // Stage 0: 2 MLA layers of 1,152 B/token, whole on every rank; 9 KDA
  // layers whose per-request state splits over TP4.
  EXPECT_EQ(plan.stages[0].kv_bytes_per_token_per_rank, 2 * 1152);
  EXPECT_EQ(plan.stages[0].state_bytes_per_request_per_rank, 9 * (96LL * 128 * 128 * 4 / 4));
}

TEST(PlanSearch, PlansEveryLayoutWithModelTotals) {
  model::ModelDesc model = KimiLikeModel();
  Plan plan = PlanSearch(MissionSpec(), model, Rtx6000d());
  ASSERT_EQ(plan.layouts.size(), 4u);
  EXPECT_TRUE(plan.all_valid());
  EXPECT_EQ(plan.model.total_params, model.total_params());
  EXPECT_EQ(plan.model.active_params, model.active_params());
  EXPECT_THAT(plan.cluster.hosts, ElementsAre("601", "602", "603", "604"));
  EXPECT_EQ(plan.moe_a2a_backend, "none");
  EXPECT_TRUE(plan.warnings.empty());
}

// A search's knobs are typed: set over the spec's resolved configuration on
// every layout's plan, the spec's arguments left as written; a backend set
// by a knob cites the search, not the spec line it overrode.
TEST(PlanSearch, KnobsSetTheEngineConfigurationNotTheSpec) {
  spec::Spec spec = MissionSpec();
  SetArg(spec, "moe-a2a-backend", StringArg("none", Loc(20, 1, "engine.args.moe-a2a-backend")));
  const spec::Spec written = spec;
  EngineKnobs knobs;
  knobs.chunked_prefill_size = 4096;
  knobs.max_running_requests = 48;
  knobs.moe_a2a_backend = "deepep";
  const Plan plan = PlanSearch(spec, KimiLikeModel(), Rtx6000d(), knobs);
  EXPECT_EQ(spec.engine.args.size(), written.engine.args.size());
  EXPECT_EQ(spec.engine.FindArg("chunked-prefill-size"), nullptr);
  EXPECT_EQ(plan.moe_a2a_backend, "deepep");
  for (const LayoutPlan& lp : plan.layouts) {
    EXPECT_EQ(lp.engine.chunked_prefill_size, 4096) << lp.layout.Label();
    EXPECT_TRUE(lp.engine.chunked_prefill_size_from_spec());
    EXPECT_EQ(lp.engine.max_running_requests, 48);
    EXPECT_EQ(lp.engine.moe_a2a_backend, "deepep");
    ASSERT_TRUE(lp.engine.moe_a2a_backend_origin.has_value());
    EXPECT_EQ(lp.engine.moe_a2a_backend_origin->Position(), "search");
    ASSERT_TRUE(lp.engine.chunked_prefill_size_origin.has_value());
    EXPECT_EQ(lp.engine.chunked_prefill_size_origin->Position(), "search");
  }
  // PP1/TP32/EP4 under a DeepEP knob: refused, citing the search.
  ASSERT_FALSE(plan.layouts[0].valid);
  EXPECT_EQ(plan.layouts[0].errors[0].reason, "a2a_backend");
  EXPECT_NE(plan.layouts[0].errors[0].message.find("\"deepep\" (search) forces"), std::string::npos)
      << plan.layouts[0].errors[0].message;

  const Plan kept = PlanSearch(spec, KimiLikeModel(), Rtx6000d());
  EXPECT_EQ(kept.layouts[0].engine.moe_a2a_backend, "none");
  ASSERT_TRUE(kept.layouts[0].engine.moe_a2a_backend_origin.has_value());
  EXPECT_EQ(kept.layouts[0].engine.moe_a2a_backend_origin->Position(), "examples/x.toml:20:1");
  EXPECT_FALSE(kept.layouts[0].engine.chunked_prefill_size_origin.has_value());
  EXPECT_EQ(kept.layouts[0].engine.chunked_prefill_size, 8192);
  EXPECT_FALSE(kept.layouts[0].engine.chunked_prefill_size_from_spec());
  EXPECT_EQ(EngineKnobs{}.Label(), "spec's knobs");
  EXPECT_EQ(knobs.Label(), "chunk 4096, mrr 48, a2a deepep");
}

}  // namespace
}  // namespace ppsearch::plan
