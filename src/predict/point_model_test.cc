// One engine configuration per layout: the chunk the memory plan sizes
// activations for is the chunk the simulator prefills, on every shipped GPU
// profile, whether the spec sets it or SGLang's per-GPU default applies.

#include <gtest/gtest.h>

#include "hardware/hardware.h"
#include "memory/sglang_reserve.h"
#include "plan/plan_testing.h"
#include "predict/predict.h"

namespace ppsearch::predict {
namespace {

using plan::testing::Layout;
using plan::testing::MissionSpec;
using plan::testing::TinyGqaModel;

TEST(PointModel, ThePlannedChunkIsTheSimulatedChunkOnEveryShippedProfile) {
  const std::vector<std::string> profiles = hardware::ListHardwareProfiles();
  ASSERT_GE(profiles.size(), 5u);
  bool saw_16k_default = false;
  for (const std::string& name : profiles) {
    SCOPED_TRACE(name);
    const Result<hardware::HardwareProfile> hw = hardware::LoadHardwareProfile(name);
    ASSERT_TRUE(hw.ok()) << hw.error().message;
    spec::Spec spec = MissionSpec();
    spec.cluster.hosts.resize(1);
    spec.cluster.hardware = name;
    for (const std::optional<int64_t> set :
         {std::optional<int64_t>(), std::optional<int64_t>(6144)}) {
      if (set) plan::testing::SetArg(spec, "chunked-prefill-size", plan::testing::IntArg(*set, {}));
      const plan::LayoutPlan lp = plan::PlanLayout(Layout(1, 2, 1), spec, TinyGqaModel(), *hw);
      const PointModel m = BuildPointModel(lp, spec, TinyGqaModel(), *hw, cost::Calibration{});
      const int64_t expected = set.value_or(memory::DefaultChunkedPrefillSize(hw->memory_mib));
      EXPECT_EQ(lp.engine.chunked_prefill_size, expected);
      EXPECT_EQ(m.memory_inputs.chunked_prefill_size, expected);
      EXPECT_EQ(m.scheduler.chunked_prefill_size, expected);
      saw_16k_default |= !set && expected == 16384;
    }
  }
  // SGLang's default differs by GPU: B200-class GPUs prefill 16,384 tokens.
  EXPECT_TRUE(saw_16k_default);
}

TEST(PointModel, DpAttentionSplitsTheChunkTheMemoryPlanSizesWhole) {
  // server_args.py _handle_data_parallelism: each DP rank's scheduler gets
  // chunked_prefill_size // dp; the activations are sized for the whole chunk
  // (the gathered tokens the MoE runs on).
  const hardware::HardwareProfile hw = plan::testing::Rtx6000d();
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  spec::LayoutSpec layout = Layout(1, 8, 1);
  layout.dp = 2;
  const plan::LayoutPlan lp = plan::PlanLayout(layout, spec, TinyGqaModel(), hw);
  const PointModel m = BuildPointModel(lp, spec, TinyGqaModel(), hw, cost::Calibration{});
  EXPECT_EQ(m.memory_inputs.chunked_prefill_size, 8192);
  EXPECT_EQ(m.scheduler.chunked_prefill_size, 4096);
}

TEST(PointModel, TheCalibratedWorkspaceSizesTheMemoryPlan) {
  const hardware::HardwareProfile hw = plan::testing::Rtx6000d();
  spec::Spec spec = MissionSpec();
  spec.cluster.hosts.resize(1);
  const plan::LayoutPlan lp = plan::PlanLayout(Layout(1, 8, 1), spec, TinyGqaModel(), hw);
  cost::Calibration calibrated;
  calibrated.Set(cost::Param::kWorkspace, 1234);
  EXPECT_EQ(BuildPointModel(lp, spec, TinyGqaModel(), hw, calibrated).memory_inputs.workspace_mib,
            1234);
}

}  // namespace
}  // namespace ppsearch::predict
