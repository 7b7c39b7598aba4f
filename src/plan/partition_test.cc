// The layer split that leaves a pipeline's tightest stage more memory than
// SGLang's even split, on the K3-like model of the mission (93 layers, the
// LM head on the last stage).

#include "plan/partition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "plan/plan.h"
#include "plan/plan_testing.h"
#include "spec/engine_env.h"

namespace ppsearch::plan {
namespace {

double WorstHeadroom(const LayoutPlan& p) {
  double worst = 1e300;
  for (const auto& s : p.memory.stages) worst = std::min(worst, s.headroom_mib);
  return worst;
}

TEST(RoomierPartition, MovesLayersOffTheTightestStageAndNoStageGrowsPastTheEvenSplit) {
  const model::ModelDesc model = KimiLikeModel();
  const spec::Spec spec = MissionSpec();
  const spec::LayoutSpec layout = Layout(8, 4, 4);
  const std::optional<RoomierSplit> split = RoomierPartition(layout, spec, model, Rtx6000d());
  ASSERT_TRUE(split.has_value());
  // The even split is 11 x 3 + 12 x 5; no stage may take a 13th layer.
  ASSERT_EQ(split->partition.size(), 8u);
  EXPECT_EQ(std::accumulate(split->partition.begin(), split->partition.end(), 0), 93);
  for (int layers : split->partition) EXPECT_LE(layers, 12);
  EXPECT_NE(split->partition, (std::vector<int>{11, 11, 11, 12, 12, 12, 12, 12}));
  // The last stage (LM head, the largest KV share) gives up a layer.
  EXPECT_EQ(split->partition.back(), 11);
  // The headroom it reports is what planning with it gives, and more than
  // the even split's.
  const LayoutPlan even = PlanLayout(layout, spec, model, Rtx6000d());
  const LayoutPlan moved =
      PlanLayout(layout, WithPartition(spec, split->partition), model, Rtx6000d());
  EXPECT_DOUBLE_EQ(split->even_worst_headroom_mib, WorstHeadroom(even));
  EXPECT_DOUBLE_EQ(split->worst_headroom_mib, WorstHeadroom(moved));
  EXPECT_GT(split->worst_headroom_mib, split->even_worst_headroom_mib + 1000);
}

TEST(RoomierPartition, NoneAtPp1OrWhereTheSpecSplitsItself) {
  const model::ModelDesc model = KimiLikeModel();
  EXPECT_FALSE(RoomierPartition(Layout(1, 32, 4), MissionSpec(), model, Rtx6000d()));
  const spec::Spec own = WithPartition(MissionSpec(), {11, 12, 12, 12, 12, 12, 11, 11});
  EXPECT_FALSE(RoomierPartition(Layout(8, 4, 4), own, model, Rtx6000d()));
  spec::Spec env = MissionSpec();
  env.engine.env.emplace_back("SGLANG_PP_LAYER_PARTITION", "11,12,12,12,12,12,11,11");
  EXPECT_FALSE(RoomierPartition(Layout(8, 4, 4), env, model, Rtx6000d()));
  // Another pipeline size's split leaves this one's even.
  const spec::Spec other = WithPartition(MissionSpec(), {47, 46});
  EXPECT_TRUE(RoomierPartition(Layout(8, 4, 4), other, model, Rtx6000d()));
}

// The split becomes its pipeline size's entry, replacing an earlier one
// and an [engine.env] split (the parser allows one of the two), and leaves
// the other variables and sizes alone.
TEST(WithPartition, SetsItsPipelineSizesEntry) {
  spec::Spec spec = MissionSpec();
  spec.engine.env.emplace_back("NCCL_DEBUG", "WARN");
  spec.engine.env.emplace_back("SGLANG_PP_LAYER_PARTITION", "12,12,12,12,12,11,11,11");
  const spec::Spec once =
      WithPartition(WithPartition(WithPartition(spec, {46, 47}), {47, 46}), {23, 24, 23, 23});
  EXPECT_EQ(spec::FindEnv(once.engine, "SGLANG_PP_LAYER_PARTITION"), nullptr);
  EXPECT_EQ(*spec::FindEnv(once.engine, "NCCL_DEBUG"), "WARN");
  EXPECT_EQ(spec::PpLayerPartition(once.engine, 2), (std::vector<int>{47, 46}));
  EXPECT_EQ(spec::PpLayerPartition(once.engine, 4), (std::vector<int>{23, 24, 23, 23}));
  EXPECT_EQ(once.engine.pp_layer_partitions.size(), 2u);
}

}  // namespace
}  // namespace ppsearch::plan
