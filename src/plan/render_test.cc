// The text and JSON forms of a plan: the phrases people look for, the JSON
// keys other tools read, and the 100-column limit.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "plan/plan.h"
#include "plan/plan_testing.h"
#include "util/format.h"

namespace ppsearch::plan {
namespace {

using ::testing::HasSubstr;
using testing::KimiLikeModel;
using testing::Layout;
using testing::MissionSpec;
using testing::Rtx6000d;

Plan MissionPlan() { return PlanSearch(MissionSpec(), KimiLikeModel(), Rtx6000d()); }

TEST(RenderPlanText, ShowsTpSpansAndStageHops) {
  const std::string text = RenderPlanText(MissionPlan());
  EXPECT_THAT(text, HasSubstr("# model    kimi-k3 (kimi_linear): 93 layers"));
  EXPECT_THAT(text, HasSubstr("4 hosts x 8 GPUs = 32: 601 602 603 604"));
  EXPECT_THAT(text, HasSubstr("== PP1/TP32/EP4  valid"));
  EXPECT_THAT(text, HasSubstr("spans 4 nodes: 601 602 603 604"));
  EXPECT_THAT(text, HasSubstr("spans 2 nodes: 601 602"));
  EXPECT_THAT(text, HasSubstr("node-local (601)"));
  EXPECT_THAT(text, HasSubstr("crosses nodes 601->602"));
  EXPECT_THAT(text, HasSubstr("0 -> 1   intra-node (601)"));
  EXPECT_THAT(text, HasSubstr("MoE-TP 8 (TP 32 / EP 4)"));
  EXPECT_THAT(text, HasSubstr("total  187 all-reduce (187 across nodes), 1 logits all-gather"));
  EXPECT_THAT(text, HasSubstr("# 4 layouts, 4 valid, 0 invalid; 0 spec warnings"));
}

TEST(RenderPlanText, LinesFitInOneHundredColumns) {
  spec::Spec spec = MissionSpec();
  spec.sweep.layouts.push_back(Layout(3, 8, 4, 4));  // an invalid one, with its long error
  std::istringstream lines(RenderPlanText(PlanSearch(spec, KimiLikeModel(), Rtx6000d())));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("error: ", 0) == 0 || line.rfind("warning: ", 0) == 0) continue;
    EXPECT_LE(line.size(), 100u) << line;
  }
}

TEST(RenderPlanText, InvalidLayoutShowsItsErrors) {
  spec::Spec spec = MissionSpec();
  spec.sweep.layouts = {Layout(3, 8, 4, 1)};
  const std::string text = RenderPlanText(PlanSearch(spec, KimiLikeModel(), Rtx6000d()));
  EXPECT_THAT(text, HasSubstr("== PP3/TP8/EP4  INVALID"));
  EXPECT_THAT(text, HasSubstr("error: examples/x.toml:31:10: key 'sweep.layouts[1]': PP3/TP8/EP4 "
                              "uses 24 GPUs"));
}

// Every layout's memory plan names its tightest stage. PP1 has one stage; in
// PP8 the last stage [81, 93) has as many layers as stages 3-6 (which tie,
// the model having no block residuals; the first is named) but four MLA
// layers to their three: 1,152 B more KV cache per pool token, more than
// its 560 MiB of LM head weights.
TEST(RenderPlanText, NamesTheTightestStage) {
  const Plan plan = MissionPlan();
  const std::string text = RenderPlanText(plan);
  EXPECT_THAT(text, ::testing::ContainsRegex("  memory MiB      stage +KV +state +reqs +"
                                             "activations +peak +headroom +activations peak at\n"));
  EXPECT_THAT(text, HasSubstr("                  tightest: stage 0 (the only stage)\n"));
  const memory::MemoryPlan& pp8 = plan.layouts[3].memory;
  ASSERT_EQ(pp8.stages.size(), 8u);
  EXPECT_EQ(pp8.tightest_stage, 7);
  EXPECT_THAT(text,
              HasSubstr("                  tightest: stage 7 (" + pp8.tightest_reason + ")\n"));
  const double extra_kv_mib = static_cast<double>(pp8.max_total_tokens) * 1152 / (1024.0 * 1024);
  EXPECT_GT(extra_kv_mib, 560);
  EXPECT_EQ(pp8.tightest_reason,
            "KV cache: +" + FormatThousands(std::llround(extra_kv_mib)) + " MiB over stage 3");
}

TEST(PlanToJson, HasTheContractKeys) {
  const nlohmann::json j = PlanToJson(MissionPlan());
  const model::ModelDesc model = KimiLikeModel();
  EXPECT_EQ(j["model"]["total_params"], model.total_params());
  EXPECT_EQ(j["model"]["active_params"], model.active_params());
  ASSERT_EQ(j["layouts"].size(), 4u);
  const nlohmann::json& pp1 = j["layouts"][0];
  EXPECT_EQ(pp1["pp"], 1);
  EXPECT_EQ(pp1["tp"], 32);
  EXPECT_EQ(pp1["ep"], 4);
  EXPECT_EQ(pp1["moe_tp"], 8);
  EXPECT_EQ(pp1["valid"], true);
  EXPECT_TRUE(pp1["errors"].empty());
  EXPECT_TRUE(pp1["warnings"].empty());
  EXPECT_EQ(pp1["tp_groups"][0]["nodes"], nlohmann::json({"601", "602", "603", "604"}));
  EXPECT_EQ(pp1["tp_groups"][0]["ranks"].size(), 32u);
  EXPECT_EQ(pp1["allreduce_per_forward"], 187);
  EXPECT_EQ(pp1["cross_node_stage_boundaries"], 0);
  EXPECT_GT(pp1["weight_mib_per_rank_max"].get<double>(), 0);
  EXPECT_EQ(pp1["memory"]["tightest_stage"], 0);
  EXPECT_EQ(pp1["memory"]["fits"], true);
  EXPECT_GT(pp1["memory"]["stages"][0]["activation_mib"].get<double>(), 0);
  const nlohmann::json& pp8 = j["layouts"][3];
  EXPECT_EQ(pp8["stages"][3]["layers"], nlohmann::json({33, 45}));
  EXPECT_EQ(pp8["stages"][3]["nodes"], nlohmann::json({"602"}));
  EXPECT_EQ(pp8["tp_groups"][7]["nodes"], nlohmann::json({"604"}));
  EXPECT_EQ(pp8["cross_node_stage_boundaries"], 3);
  EXPECT_TRUE(j["warnings"].is_array());
}

TEST(PlanToJson, WarningsCarryMessageAndLocation) {
  spec::Spec spec = MissionSpec();
  spec.workload.requests = 40;
  const nlohmann::json j = PlanToJson(PlanSearch(spec, KimiLikeModel(), Rtx6000d()));
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_THAT(j["warnings"][0]["message"].get<std::string>(), HasSubstr("40 requests"));
  EXPECT_EQ(j["warnings"][0]["location"]["file"], "examples/x.toml");
  EXPECT_EQ(j["warnings"][0]["location"]["line"], 40);
  EXPECT_EQ(j["warnings"][0]["location"]["key"], "workload.requests");
}

}  // namespace
}  // namespace ppsearch::plan
