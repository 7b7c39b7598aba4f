// The stage peak interval against a hand-worked stage.

#include "memory/memory_interval.h"

#include <gtest/gtest.h>

namespace ppsearch::memory {
namespace {

constexpr double kMib = 1024.0 * 1024.0;

// One stage on an 80000 MiB GPU, mem_fraction_static 0.8, 40000 MiB of
// weights, 100 KiB of KV per token, 12288 MiB of activations, TP8 (decode
// graphs up to bs 512: 1024 MiB), no workspace.
MemoryInputs OneStage() {
  MemoryInputs in;
  in.gpu_total_mib = 80000;
  in.tp = 8;
  in.chunked_prefill_size = 8192;
  in.mem_fraction_static = 0.8;
  StageFootprint f;
  f.weight_mib = 40000;
  f.kv_bytes_per_token = 100 * 1024;
  f.activation.bytes = 12288 * kMib;
  in.stages.push_back(f);
  return in;
}

TEST(StagePeakIntervals, CornersOfRuntimeAndActivationsThenModelForm) {
  MemoryTermRange r;
  r.runtime_low_mib = 1500;
  r.runtime_high_mib = 3500;
  r.activation_low_scale = 0.75;
  r.activation_high_scale = 1.25;
  r.kv_model_form_share = 0.05;
  const std::vector<StagePeakInterval> out = StagePeakIntervals(OneStage(), r);
  ASSERT_EQ(out.size(), 1u);
  // Runtime 1500: pool = 78500 x 0.8 - 40000 = 22800 MiB;
  //   peak = 1500 + 40000 + 22800 + 1024 + 12288 s = 65324 + 12288 s.
  // Runtime 3500: pool = 76500 x 0.8 - 40000 = 21200 MiB (a smaller pool);
  //   peak = 3500 + 40000 + 21200 + 1024 + 12288 s = 65724 + 12288 s.
  // Low: 65324 + 9216 = 74540; high: 65724 + 15360 = 81084.
  EXPECT_NEAR(out[0].terms_low_mib, 74540, 1e-6);
  EXPECT_NEAR(out[0].terms_high_mib, 81084, 1e-6);
  // Model form: 5% of the central 22800 MiB pool on each side.
  EXPECT_NEAR(out[0].model_form_mib, 1140, 1e-6);
  EXPECT_NEAR(out[0].low_mib, 73400, 1e-6);
  EXPECT_NEAR(out[0].high_mib, 82224, 1e-6);
}

// Two stages keeping 8 and 4 MiB of state a request; the whole model 24.
MemoryInputs HybridPipeline(bool version_known) {
  MemoryInputs in = OneStage();
  in.pp = 2;
  in.stages.push_back(in.stages[0]);
  in.stages[0].state_bytes_per_request = 8 * kMib;
  in.stages[1].state_bytes_per_request = 4 * kMib;
  in.state_pool.whole_model_bytes_per_request = 24 * kMib;
  in.state_pool.version_known = version_known;
  return in;
}

// Without the SGLang version a hybrid pipeline's stages may be sized by
// either state-pool rule: the interval reaches down to the older rule's
// peaks (the state it sets aside but does not allocate), and only then.
TEST(StagePeakIntervals, AnUnknownVersionSpansBothStatePoolRules) {
  MemoryTermRange r;
  r.runtime_low_mib = r.runtime_high_mib = 1500;
  const std::vector<StagePeakInterval> known = StagePeakIntervals(HybridPipeline(true), r);
  const std::vector<StagePeakInterval> unknown = StagePeakIntervals(HybridPipeline(false), r);
  MemoryInputs older = HybridPipeline(true);
  older.state_pool.whole_model_per_stage = true;
  const MemoryPlan before = PlanMemory(older);
  const MemoryPlan now = PlanMemory(HybridPipeline(true));
  ASSERT_EQ(unknown.size(), 2u);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_LT(before.stages[s].peak_mib, now.stages[s].peak_mib - 1000) << s;
    EXPECT_DOUBLE_EQ(known[s].terms_low_mib, now.stages[s].peak_mib) << s;
    EXPECT_DOUBLE_EQ(unknown[s].terms_low_mib, before.stages[s].peak_mib) << s;
    EXPECT_DOUBLE_EQ(unknown[s].terms_high_mib, known[s].terms_high_mib) << s;
  }
}

TEST(StagePeakIntervals, TheCentralPeakLiesInside) {
  const MemoryInputs in = OneStage();
  const double central = PlanMemory(in).stages[0].peak_mib;  // 77612
  const StagePeakInterval i = StagePeakIntervals(in, DefaultMemoryTermRange())[0];
  EXPECT_LT(i.low_mib, central);
  EXPECT_GT(i.high_mib, central);
}

}  // namespace
}  // namespace ppsearch::memory
