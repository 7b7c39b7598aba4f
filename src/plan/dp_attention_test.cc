// DP attention as a layout dimension: SGLang's rule for dp, the attention
// groups it builds, what each rank then holds, and how plan shows it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "plan/plan_internal.h"
#include "plan/plan_testing.h"

namespace ppsearch::plan {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::KimiLikeModel;
using testing::Layout;
using testing::MissionSpec;
using ::testing::Not;
using testing::Rtx6000d;
using testing::TinyGqaModel;

spec::LayoutSpec WithDp(spec::LayoutSpec l, int dp) {
  l.dp = dp;
  return l;
}

std::vector<std::string> Messages(const std::vector<Diagnostic>& diagnostics) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diagnostics) out.push_back(d.message);
  return out;
}

// One node of 4 GPUs, for the tiny GQA model's hand-worked sizes.
spec::Spec OneNodeOfFour() {
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec.cluster.gpus_per_node = 4;
  return spec;
}

TEST(DpAttention, DpMustDivideTp) {
  const LayoutPlan plan =
      PlanLayout(WithDp(Layout(1, 32, 4), 3), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_FALSE(plan.valid);
  EXPECT_THAT(Messages(plan.errors),
              Contains("examples/x.toml:31:10: key 'sweep.layouts[0]': PP1/TP32/EP4/DP3 sets DP 3 "
                       "with TP 32: DP attention splits each TP group into DP groups of equal "
                       "size, and SGLang asserts tp_size % dp_size == 0"));
  EXPECT_FALSE(
      PlanLayout(WithDp(Layout(1, 32, 4), 64), MissionSpec(), KimiLikeModel(), Rtx6000d()).valid);
}

TEST(DpAttention, AcceptedWhereSglangRunsIt) {
  for (int dp : {2, 4}) {
    const LayoutPlan plan =
        PlanLayout(WithDp(Layout(1, 32, 4), dp), MissionSpec(), KimiLikeModel(), Rtx6000d());
    EXPECT_THAT(Messages(plan.errors), IsEmpty()) << dp;
  }
}

TEST(DpAttention, HeadsSplitOverTheAttentionGroupNotTheTpGroup) {
  // 12 heads do not split over TP 8, but over attention TP 4 (TP 8 / DP 2) they do.
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  model::ModelDesc model = TinyGqaModel();
  model.gqa.num_heads = 12;
  const auto errors = [&](int dp) {
    return Messages(PlanLayout(WithDp(Layout(1, 8, 8), dp), spec, model, Rtx6000d()).errors);
  };
  EXPECT_THAT(errors(1), Contains(HasSubstr("splits 12 GQA attention heads over TP 8; the head "
                                            "count must be a multiple of TP")));
  EXPECT_THAT(errors(2), IsEmpty());
  model.gqa.num_heads = 16;
  model.gqa.num_kv_heads = 3;  // 3 KV heads over attention TP 4: neither splits the other
  EXPECT_THAT(errors(2), Contains(HasSubstr(
                             "splits 3 GQA KV heads over attention TP 4 (TP 8 / DP 2); with fewer "
                             "KV heads than the attention TP ranks, the attention TP must be a "
                             "multiple of the KV head count")));
}

TEST(DpAttention, AttentionGroupsAreConsecutiveTpRanks) {
  // SGLang: attn_tp_size = tp / dp, dp_rank = tp_rank / attn_tp_size.
  const LayoutPlan plan =
      PlanLayout(WithDp(Layout(2, 16, 4), 4), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_EQ(plan.attn_tp, 4);
  ASSERT_EQ(plan.attention_groups.size(), 8u);  // 2 stages x 4
  EXPECT_EQ(plan.attention_groups[1].pp_rank, 0);
  EXPECT_EQ(plan.attention_groups[1].dp_rank, 1);
  EXPECT_EQ(plan.attention_groups[1].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(plan.attention_groups[1].nodes, (std::vector<int>{0}));
  EXPECT_EQ(plan.attention_groups[6].pp_rank, 1);
  EXPECT_EQ(plan.attention_groups[6].ranks, (std::vector<int>{24, 25, 26, 27}));
  EXPECT_EQ(plan.attention_groups[6].nodes, (std::vector<int>{3}));
  EXPECT_TRUE(PlanLayout(Layout(2, 16, 4), MissionSpec(), KimiLikeModel(), Rtx6000d())
                  .attention_groups.empty());
}

TEST(DpAttention, EachAttentionGroupHoldsTheAttentionWeightsAndItsKvHeads) {
  // TinyGqaModel per layer: qkv 1024 x 3072 and o_proj 1024 x 1024 in bf16,
  // 8 MiB of attention weights. TP 4 holds 8/4 = 2 MiB per layer and rank;
  // DP 2 splits them over attention TP 2 only: 4 MiB. 4 layers: +8 MiB.
  // The embedding (32768 x 1024 bf16, 64 MiB) is whole on every rank with
  // DP attention instead of a quarter of it: +48 MiB. The LM head stays split
  // over TP; the experts (and the replicated router) do not change.
  const spec::Spec spec = OneNodeOfFour();
  const LayoutPlan tp = PlanLayout(Layout(1, 4, 4), spec, TinyGqaModel(), Rtx6000d());
  const LayoutPlan dp = PlanLayout(WithDp(Layout(1, 4, 4), 2), spec, TinyGqaModel(), Rtx6000d());
  ASSERT_EQ(tp.stages.size(), 1u);
  ASSERT_EQ(dp.stages.size(), 1u);
  EXPECT_DOUBLE_EQ(dp.stages[0].weight_mib_per_rank - tp.stages[0].weight_mib_per_rank, 8.0 + 48.0);
  EXPECT_DOUBLE_EQ(StageMemoryInputs(dp, spec, TinyGqaModel(), Rtx6000d()).stages[0].embedding_mib,
                   64.0);
  // 4 KV heads of 1,024 B/token per layer: TP 4 keeps one head a rank
  // (256 B), attention TP 2 two heads (512 B); x 4 layers.
  EXPECT_EQ(tp.stages[0].kv_bytes_per_token_per_rank, 4 * 256);
  EXPECT_EQ(dp.stages[0].kv_bytes_per_token_per_rank, 4 * 512);
}

TEST(DpAttention, DpLmHeadSplitsTheLmHeadOverTheAttentionGroup) {
  // --enable-dp-lm-head: the LM head (1024 x 32768 bf16, 64 MiB) is split
  // over attention TP 2 instead of TP 4: 32 MiB a rank instead of 16, and
  // the final norm (1024 bf16 = 2 KiB) beside it.
  spec::Spec spec = OneNodeOfFour();
  const LayoutPlan dp = PlanLayout(WithDp(Layout(1, 4, 4), 2), spec, TinyGqaModel(), Rtx6000d());
  testing::SetArg(spec, "enable-dp-lm-head", testing::SwitchArg(SourceLoc{}));
  const LayoutPlan head = PlanLayout(WithDp(Layout(1, 4, 4), 2), spec, TinyGqaModel(), Rtx6000d());
  EXPECT_DOUBLE_EQ(head.stages[0].weight_mib_per_rank - dp.stages[0].weight_mib_per_rank, 16.0);
  EXPECT_DOUBLE_EQ(StageMemoryInputs(head, spec, TinyGqaModel(), Rtx6000d()).stages[0].lm_head_mib,
                   32.0 + 2.0 / 1024);
  // Without DP attention the attention group is the TP group: nothing moves.
  EXPECT_DOUBLE_EQ(
      PlanLayout(Layout(1, 4, 4), spec, TinyGqaModel(), Rtx6000d()).stages[0].weight_mib_per_rank,
      PlanLayout(Layout(1, 4, 4), OneNodeOfFour(), TinyGqaModel(), Rtx6000d())
          .stages[0]
          .weight_mib_per_rank);
}

TEST(DpAttention, TheMemoryModelReservesForItsGraphs) {
  const spec::Spec spec = MissionSpec();
  const LayoutPlan dp = PlanLayout(WithDp(Layout(1, 32, 4), 4), spec, KimiLikeModel(), Rtx6000d());
  const memory::MemoryInputs in = StageMemoryInputs(dp, spec, KimiLikeModel(), Rtx6000d());
  EXPECT_TRUE(in.dp_attention);
  EXPECT_EQ(in.dp_size, 4);
  const LayoutPlan tp = PlanLayout(Layout(1, 32, 4), spec, KimiLikeModel(), Rtx6000d());
  EXPECT_FALSE(StageMemoryInputs(tp, spec, KimiLikeModel(), Rtx6000d()).dp_attention);
}

TEST(DpAttention, WarnsOfThePipelineCrashAndTheDividedChunk) {
  const LayoutPlan plan =
      PlanLayout(WithDp(Layout(2, 16, 4), 4), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(Messages(plan.warnings), Contains(HasSubstr("sgl-project/sglang issue #9805")));
  EXPECT_THAT(Messages(plan.warnings),
              Contains(HasSubstr("each of the 4 DP ranks prefills chunks of 2048 tokens, not "
                                 "8192")));
  const LayoutPlan pp1 =
      PlanLayout(WithDp(Layout(1, 32, 4), 4), MissionSpec(), KimiLikeModel(), Rtx6000d());
  EXPECT_THAT(Messages(pp1.warnings), Not(Contains(HasSubstr("#9805"))));
}

TEST(DpAttention, PlanShowsTheAttentionGroups) {
  spec::Spec spec = MissionSpec();
  spec.sweep.layouts = {WithDp(Layout(1, 32, 4), 4)};
  const Plan plan = PlanSearch(spec, KimiLikeModel(), Rtx6000d());
  const std::string text = RenderPlanText(plan);
  EXPECT_THAT(text, HasSubstr("== PP1/TP32/EP4/DP4  valid"));
  EXPECT_THAT(text, HasSubstr("DP attention: 4 attention groups of 8 ranks per stage"));
  EXPECT_THAT(text, HasSubstr("attn groups"));
  const nlohmann::json j = PlanToJson(plan);
  const nlohmann::json& layout = j["layouts"][0];
  EXPECT_EQ(layout["dp"], 4);
  EXPECT_EQ(layout["attn_tp"], 8);
  ASSERT_EQ(layout["attention_groups"].size(), 4u);
  EXPECT_EQ(layout["attention_groups"][3]["ranks"].size(), 8u);
  EXPECT_EQ(layout["attention_groups"][3]["nodes"], nlohmann::json({"604"}));
}

}  // namespace
}  // namespace ppsearch::plan
