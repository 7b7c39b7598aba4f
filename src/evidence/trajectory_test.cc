#include "evidence/trajectory.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/files.h"

namespace ppsearch::evidence {
namespace {

namespace fs = std::filesystem;

class TrajectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ppsearch_trajectory_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "metadata");
  }
  void TearDown() override { fs::remove_all(root_); }
  RunPaths Paths() const { return RunPaths{root_.string()}; }
  fs::path root_;
};

TEST_F(TrajectoryTest, StepsAndTheStopRoundTrip) {
  TrajectoryStep step;
  step.step = 1;
  step.layout = "pp8-tp4-ep4";
  step.label = "PP8/TP4/EP4";
  step.concurrency = 8;
  step.samples = {"pp8-tp4-ep4_c8_r1"};
  step.reason = "why";
  step.p_wrong_before = 0.25;
  step.cost_gpu_hours = 1.5;
  step.server_start = true;
  step.calibration = {{"moe_gemm_eff", 0.8}};
  step.calibrated_on = {"PP4/TP8/EP4"};
  step.p_best = {{"PP8/TP4/EP4", 0.75}};
  ASSERT_TRUE(AppendTrajectoryStep(Paths(), step).ok());
  TrajectoryStop stop;
  stop.reason = "settled";
  stop.samples_spent = 3;
  stop.uncertain = {"PP2/TP16/EP4 (2.0% to be in the top two)"};
  stop.budget_detail = "the next step would pass budget_samples = 4";
  stop.calibration = {{"moe_gemm_eff", 0.82}};
  stop.calibrated_on = {"PP4/TP8/EP4", "PP8/TP4/EP4"};
  ASSERT_TRUE(AppendTrajectoryStop(Paths(), stop).ok());
  Result<Trajectory> t = ReadTrajectory(Paths());
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->steps.size(), 1u);
  EXPECT_EQ(t->steps[0].label, "PP8/TP4/EP4");
  EXPECT_EQ(t->steps[0].concurrency, 8);
  EXPECT_DOUBLE_EQ(t->steps[0].p_wrong_before, 0.25);
  EXPECT_TRUE(t->steps[0].server_start);
  EXPECT_EQ(t->steps[0].calibration["moe_gemm_eff"], 0.8);
  EXPECT_EQ(t->steps[0].p_best, step.p_best);
  ASSERT_TRUE(t->stop.has_value());
  EXPECT_EQ(t->stop->reason, "settled");
  EXPECT_EQ(t->stop->uncertain, stop.uncertain);
  EXPECT_EQ(t->stop->budget_detail, stop.budget_detail);
  EXPECT_EQ(t->stop->calibration["moe_gemm_eff"], 0.82);
  EXPECT_EQ(t->stop->calibrated_on, stop.calibrated_on);
}

TEST_F(TrajectoryTest, NoFileIsAnEmptyTrajectoryAndATornLastLineIsIgnored) {
  Result<Trajectory> none = ReadTrajectory(Paths());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->steps.empty());
  EXPECT_FALSE(none->stop.has_value());
  ASSERT_TRUE(WriteFileAtomic(Paths().trajectory_jsonl(),
                              "{\"event\":\"step\",\"step\":1}\n{\"event\":\"st")
                  .ok());
  Result<Trajectory> torn = ReadTrajectory(Paths());
  ASSERT_TRUE(torn.ok()) << torn.error().message;
  EXPECT_EQ(torn->steps.size(), 1u);
}

// A kill mid-write leaves a last line without its newline; the next line
// appended (the resumed run's step) must not join it.
TEST_F(TrajectoryTest, ATornLastLineIsCutBeforeTheNextLineIsAppended) {
  ASSERT_TRUE(WriteFileAtomic(Paths().trajectory_jsonl(),
                              "{\"event\":\"step\",\"step\":1}\n{\"event\":\"step\",\"st")
                  .ok());
  TrajectoryStep step;
  step.step = 2;
  step.label = "PP4/TP8/EP4";
  ASSERT_TRUE(AppendTrajectoryStep(Paths(), step).ok());
  Result<Trajectory> t = ReadTrajectory(Paths());
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->steps.size(), 2u);
  EXPECT_EQ(t->steps[1].label, "PP4/TP8/EP4");
}

TEST_F(TrajectoryTest, AWrongValueNamesTheLineAndTheKey) {
  ASSERT_TRUE(WriteFileAtomic(Paths().trajectory_jsonl(),
                              "{\"event\":\"step\",\"step\":1}\n"
                              "{\"event\":\"step\",\"step\":2,\"concurrency\":\"eight\"}\n")
                  .ok());
  Result<Trajectory> t = ReadTrajectory(Paths());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("adaptive.jsonl:2: key 'concurrency' must be an integer"),
            std::string::npos)
      << t.error().message;
  ASSERT_TRUE(WriteFileAtomic(Paths().trajectory_jsonl(), "{\"event\":\"leap\"}\n").ok());
  Result<Trajectory> e = ReadTrajectory(Paths());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("adaptive.jsonl:1: key 'event' must be"), std::string::npos);
  ASSERT_TRUE(
      WriteFileAtomic(Paths().trajectory_jsonl(), "{\"event\":\"stop\",\"calibration\":[0.8]}\n")
          .ok());
  Result<Trajectory> c = ReadTrajectory(Paths());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(
                "adaptive.jsonl:1: key 'calibration' must be an object (parameter name -> value)"),
            std::string::npos)
      << c.error().message;
}

// A run writes at most one step per point of its sweep and nothing after
// its stop line: a file that goes on is refused at the first line past
// that, before the rest is read (200,000 empty steps cost nothing).
TEST_F(TrajectoryTest, StepsPastTheSweepsPointsAndLinesAfterTheStopAreRefusedWhereTheyStart) {
  std::string many;
  for (int i = 0; i < 200000; ++i) many += "{\"event\":\"step\"}\n";
  ASSERT_TRUE(WriteFileAtomic(Paths().trajectory_jsonl(), many).ok());
  Result<Trajectory> t = ReadTrajectory(Paths(), 6);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            Paths().trajectory_jsonl() +
                ":7: step 7 is one more than the sweep has points (6); a run measures each point "
                "once");
  ASSERT_TRUE(WriteFileAtomic(Paths().trajectory_jsonl(),
                              "{\"event\":\"step\",\"step\":1}\n"
                              "{\"event\":\"stop\",\"reason\":\"settled\"}\n"
                              "\n"
                              "{\"event\":\"step\",\"step\":2}\n")
                  .ok());
  Result<Trajectory> after = ReadTrajectory(Paths(), 6);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().message,
            Paths().trajectory_jsonl() +
                ":4: a line after the stop line; a run writes nothing after it stops");
}

}  // namespace
}  // namespace ppsearch::evidence
