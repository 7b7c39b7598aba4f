// An adaptive run end to end on the simulated engine: the runner asks the
// adaptive session for each step, the session reads the run directory and
// writes the trajectory, and the analysis reads it back.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "adaptive/session.h"
#include "analysis/run.h"
#include "ppsearch_source_dir.h"
#include "run/replay_sample.h"
#include "run/runner.h"
#include "run/sim_sample.h"
#include "testkit/example_search.h"

namespace ppsearch::run {
namespace {

namespace fs = std::filesystem;

class AdaptiveRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_adaptive_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    inputs_ = testkit::Example();
    inputs_.spec.experiment.results_dir = dir_.string();
    inputs_.spec.lifecycle.reuse_server = true;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the example's full sweep on the simulated engine.
  Result<RunOutcome> RunFull(const std::string& run_id) {
    RunOptions o;
    o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
    o.run_id = run_id;
    SimSampleEngine engine(inputs_, cost::Calibration());
    return RunSamples(o, inputs_.spec, inputs_.plan, engine, [](const RunProgress&) {});
  }

  // Runs (or resumes) the example adaptively; with `stop_after` >= 0 a stop is
  // asked for as sample stop_after + 1 begins (that one still completes).
  Result<RunOutcome> Run(const std::string& run_id, const std::string& resume = "",
                         int stop_after = -1) {
    RunOptions o;
    o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
    o.run_id = run_id;
    o.resume_dir = resume;
    std::atomic<bool> stop{false};
    o.stop = &stop;
    adaptive::Session session(inputs_, cost::Calibration());
    o.next_samples = [&](const evidence::RunPaths& p) { return session.Next(p); };
    SimSampleEngine engine(inputs_, cost::Calibration());
    int seen = 0;
    return RunSamples(o, inputs_.spec, inputs_.plan, engine, [&](const RunProgress&) {
      if (stop_after >= 0 && seen++ >= stop_after) stop = true;
    });
  }

  fs::path dir_;
  plan::SearchInputs inputs_;
};

TEST_F(AdaptiveRunTest, MeasuresFewerSamplesAndEndsWithAMeasuredPrimaryAndFallback) {
  Result<RunOutcome> out = Run("adaptive");
  ASSERT_TRUE(out.ok()) << out.error().message;
  const int full = static_cast<int>(ExpandSamples(inputs_.spec, inputs_.plan).size());
  EXPECT_LT(out->completed, full);
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(out->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->evidence.trajectory.has_value());
  const evidence::Trajectory& t = *a->evidence.trajectory;
  ASSERT_TRUE(t.stop.has_value());
  EXPECT_EQ(t.stop->reason, "settled") << t.stop->message;
  EXPECT_EQ(t.stop->samples_spent, out->completed);
  EXPECT_LT(t.stop->gpu_hours_spent, t.stop->full_sweep_gpu_hours);
  EXPECT_FALSE(a->incomplete());
  EXPECT_EQ(static_cast<int>(a->evidence.not_needed.size()), full - out->completed);
  // The decision rests on the measured layouts, and names the ones the stop did.
  ASSERT_TRUE(a->decision.primary.has_value());
  ASSERT_TRUE(a->decision.fallback.has_value());
  EXPECT_EQ(a->decision.primary->Label(), t.stop->primary);
  EXPECT_EQ(a->decision.fallback->Label(), t.stop->fallback);
  // Every step is recorded with its reason and what it cost.
  ASSERT_FALSE(t.steps.empty());
  EXPECT_EQ(t.steps[0].step, 1);
  EXPECT_EQ(t.steps[0].samples_spent, 0);
  for (const auto& s : t.steps) {
    EXPECT_FALSE(s.reason.empty());
    EXPECT_GT(s.cost_gpu_hours, 0);
    EXPECT_EQ(static_cast<int>(s.samples.size()), inputs_.spec.sweep.repeats);
  }
  // After the first measured layout the calibration is refitted on it.
  EXPECT_TRUE(t.steps[0].calibrated_on.empty());
  EXPECT_FALSE(t.steps.back().calibrated_on.empty());
}

TEST_F(AdaptiveRunTest, AKilledRunResumesWhereItStoppedAndEndsAsAnUninterruptedOne) {
  Result<RunOutcome> whole = Run("whole");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  Result<RunOutcome> cut = Run("cut", "", 3);
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_TRUE(cut->interrupted);
  EXPECT_EQ(cut->completed, 4);  // one step of 3, and one sample into the next
  Result<RunOutcome> resumed = Run("", cut->run_dir);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_FALSE(resumed->interrupted);
  auto steps = [](const std::string& dir) {
    std::vector<std::string> out;
    Result<evidence::Trajectory> t = evidence::ReadTrajectory(evidence::RunPaths{dir});
    EXPECT_TRUE(t.ok());
    for (const auto& s : t->steps) out.push_back(s.label + " C=" + std::to_string(s.concurrency));
    EXPECT_TRUE(t->stop.has_value());
    return out;
  };
  EXPECT_EQ(steps(cut->run_dir), steps(whole->run_dir));
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(cut->run_dir);
  Result<analysis::RunAnalysis> b = analysis::AnalyseRun(whole->run_dir);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->decision.primary->Label(), b->decision.primary->Label());
  EXPECT_EQ(a->decision.fallback->Label(), b->decision.fallback->Label());
}

TEST_F(AdaptiveRunTest, ASpentBudgetStopsTheRunAndSaysWhatRemainsUncertain) {
  inputs_.spec.adaptive.budget_samples = 4;  // one step of 3 repeats; a second would pass it
  Result<RunOutcome> out = Run("budget");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->completed, 3);
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(out->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->evidence.trajectory && a->evidence.trajectory->stop);
  const evidence::TrajectoryStop& stop = *a->evidence.trajectory->stop;
  EXPECT_EQ(stop.reason, "budget");
  EXPECT_NE(stop.message.find("the budget is spent before the choice settled"), std::string::npos)
      << stop.message;
  // A budget stop leaves the run incomplete: what it did not measure is missing.
  EXPECT_TRUE(a->incomplete());
  EXPECT_TRUE(a->evidence.not_needed.empty());
}

TEST_F(AdaptiveRunTest, AnAdaptiveReplayOfAFullRunStopsEarlyWithItsDecision) {
  Result<RunOutcome> full = RunFull("full");
  ASSERT_TRUE(full.ok()) << full.error().message;
  RunOptions o;
  o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
  o.run_id = "replayed";
  adaptive::Session session(inputs_, cost::Calibration());
  o.next_samples = [&](const evidence::RunPaths& p) { return session.Next(p); };
  Result<std::unique_ptr<SampleEngine>> engine =
      MakeReplayEngine(inputs_.spec, inputs_.plan, full->run_dir);
  ASSERT_TRUE(engine.ok()) << engine.error().message;
  Result<RunOutcome> replayed =
      RunSamples(o, inputs_.spec, inputs_.plan, **engine, [](const RunProgress&) {});
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_LT(replayed->completed, full->completed);
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(full->run_dir);
  Result<analysis::RunAnalysis> b = analysis::AnalyseRun(replayed->run_dir);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->decision.primary && b->decision.primary);
  EXPECT_EQ(b->decision.primary->Label(), a->decision.primary->Label());
  EXPECT_EQ(b->decision.fallback->Label(), a->decision.fallback->Label());
  ASSERT_TRUE(b->evidence.trajectory && b->evidence.trajectory->stop);
  EXPECT_EQ(b->evidence.trajectory->stop->reason, "settled");
}

}  // namespace
}  // namespace ppsearch::run
