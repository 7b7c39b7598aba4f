// --moe-a2a-backend deepep through the planner and the predictor: whole
// shared experts in the weights, DeepEP's collectives in the plan, the cost
// model's shape, and the combinations the simulator refuses.

#include <gtest/gtest.h>

#include "plan/plan_testing.h"
#include "predict/point_parts.h"
#include "predict/predict.h"
#include "testkit/example_search.h"

namespace ppsearch::predict {
namespace {

using plan::testing::Layout;
using plan::testing::SetArg;
using plan::testing::StringArg;
using testkit::Example;

spec::Spec WithBackend(const std::string& backend) {
  spec::Spec spec = Example().spec;
  SetArg(spec, "moe-a2a-backend", StringArg(backend, {}));
  return spec;
}

// The example's model and cluster on H200s: SGLang runs DeepEP only where
// the GPUs have NVLink, which the example's RTX 6000Ds do not.
const hardware::HardwareProfile& H200() {
  static const hardware::HardwareProfile hw = [] {
    Result<hardware::HardwareProfile> loaded = hardware::LoadHardwareProfile("h200");
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded.ok() ? *loaded : hardware::HardwareProfile{};
  }();
  return hw;
}

plan::LayoutPlan DeepEpPlan(const spec::LayoutSpec& layout, const spec::Spec& spec) {
  return plan::PlanLayout(layout, spec, Example().model, H200());
}

TEST(PredictDeepEp, ModelledAtPp1AndRefusedWithPpOrDpOrAnotherBackend) {
  const spec::Spec deepep = WithBackend("deepep");
  EXPECT_EQ(NotModelled(DeepEpPlan(Layout(1, 32, 32), deepep)), std::nullopt);
  EXPECT_NE(NotModelled(DeepEpPlan(Layout(2, 16, 16), deepep)).value_or("").find("sglang#17823"),
            std::string::npos);
  spec::LayoutSpec dp = Layout(1, 32, 32);
  dp.dp = 4;
  EXPECT_NE(NotModelled(DeepEpPlan(dp, deepep)).value_or("").find("DeepEP with DP attention"),
            std::string::npos);
  EXPECT_EQ(NotModelled(DeepEpPlan(Layout(1, 32, 32), WithBackend("mooncake"))).value_or(""),
            "PP1/TP32/EP32 runs moe-a2a-backend \"mooncake\", which the simulator does not model "
            "(it costs \"none\" and \"deepep\"); plan it, or measure it with --engine sglang");
  spec::Spec bad_mode = deepep;
  SetArg(bad_mode, "deepep-mode", StringArg("fast", {}));
  EXPECT_EQ(NotModelled(DeepEpPlan(Layout(1, 32, 32), bad_mode)).value_or(""),
            "deepep-mode \"fast\" is not one of SGLang's modes (auto, normal, low_latency)");
}

TEST(PredictDeepEp, TheCostModelGetsTheBackendAndItsMode) {
  spec::Spec deepep = WithBackend("deepep");
  EXPECT_FALSE(ShapeFromPlan(DeepEpPlan(Layout(1, 32, 32), Example().spec)).deepep);
  cost::LayoutShape shape = ShapeFromPlan(DeepEpPlan(Layout(1, 32, 32), deepep));
  EXPECT_TRUE(shape.deepep);
  EXPECT_EQ(shape.deepep_mode, cost::DeepEpMode::kAuto);
  SetArg(deepep, "deepep-mode", StringArg("low_latency", {}));
  EXPECT_EQ(ShapeFromPlan(DeepEpPlan(Layout(1, 32, 32), deepep)).deepep_mode,
            cost::DeepEpMode::kLowLatency);
  // DeepEP dispatches BF16 under the MoE runners that quantize inside
  // (get_deepep_output_dtype), FP8 under the others.
  EXPECT_FALSE(shape.deepep_bf16_dispatch);
  for (const char* runner : {"cutlass", "flashinfer_cutedsl"}) {
    SetArg(deepep, "moe-runner-backend", StringArg(runner, {}));
    EXPECT_TRUE(ShapeFromPlan(DeepEpPlan(Layout(1, 32, 32), deepep)).deepep_bf16_dispatch)
        << runner;
  }
  SetArg(deepep, "moe-runner-backend", StringArg("deep_gemm", {}));
  EXPECT_FALSE(ShapeFromPlan(DeepEpPlan(Layout(1, 32, 32), deepep)).deepep_bf16_dispatch);
}

TEST(PlanDeepEp, SharedExpertsAreWholeOnEveryRankAndEachMoeLayerDispatchesAndCombines) {
  const plan::LayoutPlan none = DeepEpPlan(Layout(1, 32, 32), Example().spec);
  const plan::LayoutPlan deepep = DeepEpPlan(Layout(1, 32, 32), WithBackend("deepep"));
  // The difference is every shared expert's 31/32 a rank no longer splits.
  double shared_bytes = 0;
  int moe_layers = 0;
  for (const model::LayerDesc& layer : Example().model.layers) {
    moe_layers += layer.ffn == model::FfnKind::kMoe;
    for (const model::Linear& l : layer.linears)
      if (l.role == model::OpRole::kSharedExpert)
        shared_bytes += static_cast<double>(l.params()) * model::BytesPerParam(l.dtype);
  }
  ASSERT_GT(shared_bytes, 0);
  EXPECT_NEAR(deepep.stages[0].weight_mib_per_rank - none.stages[0].weight_mib_per_rank,
              shared_bytes * 31 / 32 / (1024.0 * 1024.0), 1e-6);
  EXPECT_EQ(none.stages[0].collectives.alltoall_count, 0);
  EXPECT_EQ(deepep.stages[0].collectives.alltoall_count, 2 * moe_layers);
  EXPECT_EQ(deepep.stages[0].collectives.allreduce_count,
            none.stages[0].collectives.allreduce_count);
}

}  // namespace
}  // namespace ppsearch::predict
