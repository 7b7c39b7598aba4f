#include "adaptive_eval/scenarios.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ppsearch_source_dir.h"
#include "testkit/example_search.h"

namespace ppsearch::adaptive_eval {
namespace {

namespace fs = std::filesystem;

class ScenariosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_scenarios_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    options_.work_dir = dir_.string();
    options_.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  ScenarioOptions options_;
};

// The documented evaluation in small: a few seeded scenarios of the example
// with hidden per-layout factors up to +-20%.
TEST_F(ScenariosTest, TheAdaptiveRunReachesTheFullSweepsDecisionForLessThanHalfItsGpuHours) {
  options_.scenarios = 3;
  options_.seed = 7;
  Result<Evaluation> ev = Evaluate(testkit::Example(), cost::Calibration(), options_);
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  ASSERT_EQ(ev->results.size(), 3u);
  EXPECT_EQ(ev->agree, 3);
  EXPECT_LE(ev->median_fraction, 0.5);
  for (const ScenarioResult& s : ev->results) {
    EXPECT_TRUE(s.agrees) << s.index << ": full " << s.full_primary << "/" << s.full_fallback
                          << ", adaptive " << s.adaptive_primary << "/" << s.adaptive_fallback;
    EXPECT_FALSE(s.full_primary.empty());
    EXPECT_LT(s.adaptive_samples, s.full_samples);
    EXPECT_EQ(s.stop_reason, "settled");
    // Every layout got its own hidden factor, within the bound.
    ASSERT_EQ(s.hidden.size(), 4u);
    for (const auto& [label, f] : s.hidden) {
      EXPECT_GE(f, 0.8) << label;
      EXPECT_LE(f, 1.2) << label;
    }
  }
}

TEST_F(ScenariosTest, TheSameSeedGivesTheSameScenarios) {
  options_.scenarios = 1;
  options_.seed = 11;
  Result<Evaluation> a = Evaluate(testkit::Example(), cost::Calibration(), options_);
  ASSERT_TRUE(a.ok()) << a.error().message;
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  Result<Evaluation> b = Evaluate(testkit::Example(), cost::Calibration(), options_);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(a->results[0].hidden, b->results[0].hidden);
  EXPECT_EQ(a->results[0].adaptive_samples, b->results[0].adaptive_samples);
  EXPECT_DOUBLE_EQ(a->results[0].adaptive_gpu_hours, b->results[0].adaptive_gpu_hours);
}

}  // namespace
}  // namespace ppsearch::adaptive_eval
