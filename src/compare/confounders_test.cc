// The classification table and the confounder check on run descriptions
// built from the shipped example spec.

#include "compare/confounders.h"

#include <gtest/gtest.h>

#include "analysis/analysis_testing.h"
#include "compare/description.h"

namespace ppsearch::compare {
namespace {

using analysis::testing::SmallSweepSpec;

evidence::RunMetadata Engine(bool simulated) {
  evidence::RunMetadata run;
  run.engine = simulated ? "sim" : "sglang";
  run.simulated = simulated;
  return run;
}

RunDescription Described(std::vector<std::string> overrides, const Observed& seen = {},
                         bool simulated = true) {
  return DescribeRun(SmallSweepSpec(std::move(overrides)), Engine(simulated), seen, "run");
}

TEST(ClassifySettingTest, TheTableNamesHarmfulFlagsWithReasons) {
  const SettingClass micro = ClassifySetting("engine.args.pp-max-micro-batch-size");
  EXPECT_EQ(micro.severity, Severity::kHarmful);
  EXPECT_EQ(micro.label, "pp-max-micro-batch-size");
  EXPECT_NE(micro.reason.find("serializes admission"), std::string::npos);
  EXPECT_EQ(ClassifySetting("engine.args.moe-runner-backend").kind, "MoE backend");
  EXPECT_EQ(ClassifySetting("engine.args.chunked-prefill-size").kind, "chunked prefill");
  EXPECT_EQ(ClassifySetting("engine.args.mem-fraction-static").severity, Severity::kRelevant);
  EXPECT_EQ(ClassifySetting("engine.args.log-level").severity, Severity::kCosmetic);
  // Unknown flags and variables are never silently cosmetic.
  EXPECT_EQ(ClassifySetting("engine.args.some-new-flag").severity, Severity::kRelevant);
  EXPECT_EQ(ClassifySetting("engine.env.NCCL_ALGO").severity, Severity::kHarmful);
  EXPECT_EQ(ClassifySetting("engine.env.NCCL_DEBUG").severity, Severity::kCosmetic);
  EXPECT_EQ(ClassifySetting("engine.env.MY_VAR").severity, Severity::kRelevant);
  EXPECT_EQ(ClassifySetting("engine.patches.pp.patch").severity, Severity::kHarmful);
  EXPECT_EQ(ClassifySetting("engine.patches.pp.patch").label, "pp.patch");
  EXPECT_EQ(ClassifySetting("engine.image").severity, Severity::kHarmful);
  EXPECT_EQ(ClassifySetting("gpu.driver").severity, Severity::kRelevant);
  EXPECT_EQ(ClassifySetting("experiment.name").severity, Severity::kCosmetic);
}

TEST(FindConfoundersTest, TheOlderPp4RunHasExactlyItsThreeFlagsHarmful) {
  const RunDescription old_run = Described(
      {"experiment.name=\"old\"", "engine.args.pp-max-micro-batch-size=1",
       "engine.args.moe-runner-backend=\"marlin\"", "engine.args.chunked-prefill-size=16384"});
  const RunDescription new_run = Described({});
  const ConfounderReport r = FindConfounders(old_run, new_run);
  ASSERT_EQ(r.harmful().size(), 3u);
  EXPECT_FALSE(r.comparable);
  EXPECT_EQ(r.verdict,
            "not comparable because of chunked-prefill-size (16384 vs 8192), moe-runner-backend "
            "(marlin vs flashinfer_mxfp4), pp-max-micro-batch-size (1 vs unset)");
  ASSERT_EQ(r.differences.size(), 4u);
  EXPECT_EQ(r.differences[3].key, "experiment.name");
  EXPECT_EQ(r.differences[3].what.severity, Severity::kCosmetic);
}

TEST(FindConfoundersTest, IdenticalRunsAreComparable) {
  const ConfounderReport r = FindConfounders(Described({}), Described({}));
  EXPECT_TRUE(r.differences.empty());
  EXPECT_TRUE(r.unchecked.empty());
  EXPECT_EQ(r.verdict, "comparable");
}

TEST(FindConfoundersTest, WhatOneSideDidNotRecordIsUnchecked) {
  Observed measured;
  measured.driver_versions = {"575.57.08"};
  measured.server_versions = {"0.5.18"};
  measured.gpu_names = {"NVIDIA RTX 6000D"};
  Observed sim;
  sim.gpu_names = {"NVIDIA RTX 6000D"};
  const ConfounderReport r =
      FindConfounders(Described({}, sim, true), Described({}, measured, false));
  ASSERT_EQ(r.differences.size(), 1u);
  EXPECT_EQ(r.differences[0].key, "engine.kind");
  EXPECT_EQ(r.differences[0].a, "simulated");
  EXPECT_EQ(r.differences[0].b, "measured");
  ASSERT_EQ(r.unchecked.size(), 2u);
  EXPECT_EQ(r.unchecked[0],
            "gpu.driver: recorded by B only ('575.57.08'); A (run) is simulated and has none");
  EXPECT_TRUE(r.comparable);
  EXPECT_EQ(r.verdict, "comparable in what could be checked");
}

TEST(FindConfoundersTest, PatchesEnvAndDriversAreCompared) {
  Observed a_seen, b_seen;
  a_seen.driver_versions = {"570.124.06"};
  b_seen.driver_versions = {"575.57.08"};
  evidence::RunMetadata run = Engine(false);
  run.patches = {{"/p/pp.patch", 10, std::string(64, 'a')}};
  const RunDescription a =
      DescribeRun(SmallSweepSpec({"engine.env.NCCL_ALGO=\"Ring\""}), run, a_seen, "a");
  run.patches.emplace();
  const RunDescription b = DescribeRun(SmallSweepSpec(), run, b_seen, "b");
  const ConfounderReport r = FindConfounders(a, b);
  ASSERT_EQ(r.harmful().size(), 2u);
  EXPECT_EQ(r.harmful()[0]->key, "engine.env.NCCL_ALGO");
  EXPECT_EQ(r.harmful()[0]->b, "unset");
  EXPECT_EQ(r.harmful()[1]->key, "engine.patches.pp.patch");
  EXPECT_EQ(r.harmful()[1]->a, "sha256:aaaaaaaaaaaaaaaa");
  EXPECT_EQ(r.harmful()[1]->b, "unset");
  ASSERT_EQ(r.differences.size(), 3u);
  EXPECT_EQ(r.differences[2].key, "gpu.driver");
  EXPECT_EQ(r.differences[2].what.severity, Severity::kRelevant);
}

// A layer split is a setting of one pipeline size's servers: written in
// [engine.env] or in [engine.pp_layer_partition] it is the same setting,
// another split is harmful where both sides ran that size, and a side with
// no layout of that size (a PP1 baseline) is not compared on it.
TEST(FindConfoundersTest, ALayerSplitIsComparedWhereBothSidesRanItsPipelineSize) {
  const std::string split = "[12,12,12,12,12,11,11,11]";
  const RunDescription table = Described({"sweep.pp=[8]", "engine.pp_layer_partition.8=" + split});
  const RunDescription env = Described(
      {"sweep.pp=[8]", "engine.env.SGLANG_PP_LAYER_PARTITION=\"12,12,12,12,12,11,11,11\""});
  EXPECT_EQ(table.settings.at("engine.env.SGLANG_PP_LAYER_PARTITION (PP8)"),
            "12,12,12,12,12,11,11,11");
  EXPECT_TRUE(FindConfounders(table, env).comparable) << FindConfounders(table, env).verdict;
  const ConfounderReport even = FindConfounders(table, Described({"sweep.pp=[8]"}));
  ASSERT_EQ(even.harmful().size(), 1u) << even.verdict;
  EXPECT_EQ(even.harmful()[0]->key, "engine.env.SGLANG_PP_LAYER_PARTITION (PP8)");
  EXPECT_EQ(even.harmful()[0]->b, "unset");
  // The split of PP8 says nothing of a run of PP1 and PP4 only.
  const RunDescription pp1 = Described({"sweep.pp=[1,4]"});
  EXPECT_TRUE(FindConfounders(Described({"engine.pp_layer_partition.8=" + split}), pp1).comparable);
  EXPECT_FALSE(
      FindConfounders(Described({"engine.pp_layer_partition.4=[23,24,23,23]"}), pp1).comparable);
}

TEST(FindConfoundersTest, ABareCsvSaysWhatCouldNotBeChecked) {
  analysis::PointSummary row;
  row.requests_total = 40;
  row.repeats = 3;
  const RunDescription csv = DescribeCsv({row}, std::nullopt, "pp1.csv");
  const ConfounderReport r = FindConfounders(Described({}), csv);
  // workload.requests = 8 in the small sweep, 40 in the CSV.
  ASSERT_EQ(r.differences.size(), 2u);
  EXPECT_EQ(r.differences[0].key, "workload.requests");
  EXPECT_EQ(r.differences[1].key, "sweep.repeats");
  ASSERT_EQ(r.unchecked.size(), 1u);
  EXPECT_EQ(r.unchecked[0],
            "B (pp1.csv) is a CSV of medians without run metadata: engine image and version, MoE "
            "and A2A backends, chunked prefill, every other server flag, environment, patches, "
            "model and quantization, input and output lengths, arrival process (open or closed "
            "loop), hosts, GPU kind and count, "
            "driver, hardware profile and engine kind could not be checked (it records only "
            "sweep.repeats, workload.requests)");
  EXPECT_FALSE(r.comparable);
}

}  // namespace
}  // namespace ppsearch::compare
