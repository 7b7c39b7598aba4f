// What a side records: a run's keys from spec, run.json and observations;
// a CSV's from its columns.

#include "compare/description.h"

#include <gtest/gtest.h>

#include "analysis/analysis_testing.h"

namespace ppsearch::compare {
namespace {

evidence::RunMetadata Sglang() {
  evidence::RunMetadata run;
  run.engine = "sglang";
  run.simulated = false;
  return run;
}

using analysis::testing::SmallSweepSpec;

TEST(DescribeRunTest, SpecRunJsonAndObservations) {
  spec::Spec spec =
      SmallSweepSpec({"workload.input_distribution=\"uniform\"", "workload.range_ratio=0.5"});
  spec.engine.patches = {"/p/pp.patch"};
  Observed seen;
  seen.gpu_names = {"NVIDIA RTX 6000D"};
  seen.driver_versions = {"570.124.06", "575.57.08"};
  seen.model_quantization = "fp8";
  // run.json without "patches": an older run; the spec's list is all there is.
  const RunDescription d = DescribeRun(spec, Sglang(), seen, "results/x");
  EXPECT_TRUE(d.has_metadata);
  EXPECT_EQ(d.simulated, std::optional<bool>(false));
  const auto& s = d.settings;
  EXPECT_EQ(s.at("engine.kind"), "measured");
  EXPECT_EQ(s.at("engine.image"), "local/sglang:kimi-k3-sm120-flashinfer-mxfp4-phase5");
  EXPECT_EQ(s.at("engine.args.chunked-prefill-size"), "8192");
  EXPECT_EQ(s.at("engine.patches.pp.patch"), "sha256 not recorded");
  EXPECT_EQ(s.at("workload.range_ratio"), "0.5");
  EXPECT_EQ(s.at("cluster.gpus"), "32");
  EXPECT_EQ(s.at("cluster.hardware"), "rtx-6000d");
  // Two drivers within one run are both named: itself worth a look.
  EXPECT_EQ(s.at("gpu.driver"), "570.124.06, 575.57.08");
  EXPECT_EQ(s.at("model.quantization"), "fp8");
  EXPECT_EQ(s.count("server.version"), 0u);  // not reported: not recorded
  EXPECT_EQ(s.count("sim.noise_cv"), 0u);    // a measured run has no simulator knobs
}

TEST(DescribeCsvTest, OnlyWhatTheColumnsSay) {
  analysis::PointSummary a, b;
  a.requests_total = 40;
  b.requests_total = 20;
  const RunDescription d = DescribeCsv({a, b}, true, "m.csv");
  EXPECT_FALSE(d.has_metadata);
  EXPECT_EQ(d.settings.at("workload.requests"), "20, 40");
  EXPECT_EQ(d.settings.at("engine.kind"), "simulated");
  EXPECT_EQ(d.settings.count("sweep.repeats"), 0u);
}

}  // namespace
}  // namespace ppsearch::compare
