// Reading a measurement (CSV of medians, Nsight summary) with exact messages
// for the common mistakes, and the fit end to end on the shipped baseline.

#include "calibrate/fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch::calibrate {
namespace {

using ::testing::Contains;

const std::string kRoot = PPSEARCH_SOURCE_DIR;
const std::string kBaselineCsv = kRoot + "/data/baseline/pp1-tp32-ep4.csv";
const std::string kBaselineProfile = kRoot + "/data/baseline/pp1-nsys-summary.json";

constexpr const char* kHeader =
    "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median,ttft_p95_s_median\n";

class MeasurementFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "ppsearch_fit_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  // The message LoadMeasurement gives; "" when it loads.
  std::string ErrorFor(const std::string& csv_path, const std::string& profile_path = "") {
    Result<Measurement> m = LoadMeasurement(csv_path, profile_path);
    return m.ok() ? "" : m.error().message;
  }

  std::string dir_;
};

TEST_F(MeasurementFileTest, ReadsTheShippedBaseline) {
  Result<Measurement> m = LoadMeasurement(kBaselineCsv, kBaselineProfile);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->layout.Label(), "PP1/TP32/EP4");
  EXPECT_EQ(m->source, kBaselineCsv);
  ASSERT_EQ(m->points.size(), 2u);
  EXPECT_EQ(m->points[0].concurrency, 8);
  EXPECT_DOUBLE_EQ(m->points[0].input_tps, 3257.96);
  EXPECT_DOUBLE_EQ(m->points[0].ttft_p50_s, 39.19);
  EXPECT_DOUBLE_EQ(m->points[0].ttft_p95_s, 41.62);
  EXPECT_DOUBLE_EQ(m->points[0].peak_gpu_mib, 81355);
  EXPECT_EQ(m->points[1].concurrency, 16);
  EXPECT_DOUBLE_EQ(m->points[1].input_tps, 3260.14);
  ASSERT_TRUE(m->exposed_comm_share.has_value());
  EXPECT_DOUBLE_EQ(*m->exposed_comm_share, 0.5727);
}

TEST_F(MeasurementFileTest, OptionalColumnsAndProfile) {
  const std::string csv = Write("m.csv", "pp,tp,ep,concurrency,input_tps_median\n2,16,4,8,4000\n");
  Result<Measurement> m = LoadMeasurement(csv, "");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->layout.Label(), "PP2/TP16/EP4");
  ASSERT_EQ(m->points.size(), 1u);
  EXPECT_DOUBLE_EQ(m->points[0].ttft_p50_s, 0);
  EXPECT_DOUBLE_EQ(m->points[0].peak_gpu_mib, 0);
  EXPECT_FALSE(m->exposed_comm_share.has_value());
}

TEST_F(MeasurementFileTest, MissingColumn) {
  const std::string csv = Write("m.csv", "pp,tp,concurrency,input_tps_median\n1,32,8,3257.96\n");
  EXPECT_EQ(ErrorFor(csv), csv + ": missing column 'ep'");
}

TEST_F(MeasurementFileTest, MissingThroughputColumn) {
  const std::string csv = Write("m.csv", "pp,tp,ep,concurrency\n1,32,4,8\n");
  EXPECT_EQ(ErrorFor(csv), csv + ": missing column 'input_tps_median'");
}

TEST_F(MeasurementFileTest, TwoLayoutsInOneCsv) {
  const std::string csv = Write("m.csv", std::string(kHeader) +
                                             "1,32,4,8,3257.96,39.19,41.62\n"
                                             "2,16,4,8,4100.00,31.00,33.00\n");
  EXPECT_EQ(ErrorFor(csv), csv +
                               ":3: calibration takes one layout; row has PP2/TP16/EP4 but the "
                               "first row has PP1/TP32/EP4");
}

TEST_F(MeasurementFileTest, NoRows) {
  const std::string csv = Write("m.csv", kHeader);
  EXPECT_EQ(ErrorFor(csv), csv + ": no measured rows");
}

TEST_F(MeasurementFileTest, NonPositiveThroughput) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,0,39.19,41.62\n");
  EXPECT_EQ(ErrorFor(csv), csv + ":2: column 'input_tps_median': expected a positive number");
}

TEST_F(MeasurementFileTest, NonNumberCell) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,n/a,41.62\n");
  EXPECT_EQ(ErrorFor(csv), csv + ":2: column 'ttft_p50_s_median': expected a number, got \"n/a\"");
}

TEST_F(MeasurementFileTest, ProfileSummaryMissingTheKey) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  const std::string profile = Write("p.json", R"({"exposed_nccl_share": 0.57})");
  EXPECT_EQ(ErrorFor(csv, profile),
            profile + ": missing number 'exposed_nccl_share_of_prefill_window_median'");
  const std::string text =
      Write("q.json", R"({"exposed_nccl_share_of_prefill_window_median": "57%"})");
  EXPECT_EQ(ErrorFor(csv, text),
            text + ": missing number 'exposed_nccl_share_of_prefill_window_median'");
}

TEST_F(MeasurementFileTest, ProfileSummaryShareOutOfRange) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  const std::string percent =
      Write("p.json", R"({"exposed_nccl_share_of_prefill_window_median": 57.27})");
  EXPECT_EQ(ErrorFor(csv, percent), percent +
                                        ": key 'exposed_nccl_share_of_prefill_window_median': "
                                        "expected a share in (0, 1), got 57.27");
  const std::string zero = Write("z.json", R"({"exposed_nccl_share_of_prefill_window_median": 0})");
  EXPECT_EQ(ErrorFor(csv, zero), zero +
                                     ": key 'exposed_nccl_share_of_prefill_window_median': "
                                     "expected a share in (0, 1), got 0");
}

TEST_F(MeasurementFileTest, ProfileSummaryNotJson) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  const std::string profile = Write("p.json", "share = 0.57\n");
  EXPECT_EQ(ErrorFor(csv, profile).rfind(profile + ": not valid JSON: ", 0), 0u)
      << ErrorFor(csv, profile);
}

TEST_F(MeasurementFileTest, MissingFiles) {
  EXPECT_NE(ErrorFor(dir_ + "/absent.csv").find(dir_ + "/absent.csv"), std::string::npos);
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  EXPECT_NE(ErrorFor(csv, dir_ + "/absent.json").find(dir_ + "/absent.json"), std::string::npos);
}

// The shipped example spec, its model and hardware, and the measured layout.
struct Baseline {
  spec::Spec spec;
  model::ModelDesc model;
  hardware::HardwareProfile hw;
};

Baseline LoadBaseline() {
  Baseline b;
  Result<spec::Spec> spec = spec::LoadSpec(kRoot + "/examples/kimi-k3-pp-search.toml");
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  if (!spec.ok()) return b;
  b.spec = *spec;
  Result<model::ModelDesc> model = model::LoadModel(b.spec.engine.model_config);
  EXPECT_TRUE(model.ok()) << model.error().message;
  if (model.ok()) b.model = *model;
  Result<hardware::HardwareProfile> hw = hardware::LoadHardwareProfile(b.spec.cluster.hardware);
  EXPECT_TRUE(hw.ok()) << hw.error().message;
  if (hw.ok()) b.hw = *hw;
  return b;
}

spec::LayoutSpec Pp1Tp32Ep4() {
  spec::LayoutSpec l;
  l.pp = 1;
  l.tp = 32;
  l.ep = 4;
  return l;
}

TEST(FitCalibration, ShippedBaselineIsReproduced) {
  const Baseline b = LoadBaseline();
  ASSERT_FALSE(b.model.layers.empty());
  const plan::LayoutPlan plan = plan::PlanLayout(Pp1Tp32Ep4(), b.spec, b.model, b.hw);
  ASSERT_TRUE(plan.valid);
  Result<Measurement> m = LoadMeasurement(kBaselineCsv, kBaselineProfile);
  ASSERT_TRUE(m.ok()) << m.error().message;

  Result<FitResult> fit = FitCalibration(*m, plan, b.spec, b.model, b.hw);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  ASSERT_EQ(fit->residuals.size(), 2u);
  for (const PointResidual& r : fit->residuals) {
    SCOPED_TRACE(testing::Message() << "concurrency " << r.concurrency);
    EXPECT_LT(std::abs(r.predicted_tps / r.measured_tps - 1), 0.02)
        << r.predicted_tps << " vs " << r.measured_tps;
    ASSERT_GT(r.measured_ttft_p50_s, 0);
    EXPECT_LT(std::abs(r.predicted_ttft_p50_s / r.measured_ttft_p50_s - 1), 0.05)
        << r.predicted_ttft_p50_s << " vs " << r.measured_ttft_p50_s;
  }
  EXPECT_EQ(fit->residuals[0].concurrency, 8);
  EXPECT_EQ(fit->residuals[1].concurrency, 16);
  ASSERT_TRUE(fit->measured_exposed_share.has_value());
  EXPECT_DOUBLE_EQ(*fit->measured_exposed_share, 0.5727);
  EXPECT_NEAR(fit->predicted_exposed_share, 0.5727, 0.01);
  EXPECT_THAT(fit->fitted, Contains("compute_scale"));
  EXPECT_EQ(fit->fitted.front(), "compute_scale");
  EXPECT_EQ(fit->calibration.source, "fitted to " + kBaselineCsv);
  EXPECT_GT(fit->calibration.compute_scale, 0.02);
  EXPECT_LT(fit->calibration.compute_scale, 4.0);
}

TEST(FitCalibration, WithoutAProfileOnlyComputeScaleIsFitted) {
  const Baseline b = LoadBaseline();
  ASSERT_FALSE(b.model.layers.empty());
  const plan::LayoutPlan plan = plan::PlanLayout(Pp1Tp32Ep4(), b.spec, b.model, b.hw);
  Result<Measurement> m = LoadMeasurement(kBaselineCsv, "");
  ASSERT_TRUE(m.ok()) << m.error().message;
  Result<FitResult> fit = FitCalibration(*m, plan, b.spec, b.model, b.hw);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_EQ(fit->fitted, std::vector<std::string>{"compute_scale"});
  EXPECT_FALSE(fit->measured_exposed_share.has_value());
  EXPECT_DOUBLE_EQ(fit->calibration.intra_bw_scale, 1.0);
  EXPECT_DOUBLE_EQ(fit->calibration.inter_gbps_per_gpu, 0);
  EXPECT_THAT(fit->kept, Contains("inter_gbps_per_gpu and intra_bw_scale: no profile summary "
                                  "(exposed communication share) to separate communication "
                                  "from compute"));
  for (const PointResidual& r : fit->residuals)
    EXPECT_LT(std::abs(r.predicted_tps / r.measured_tps - 1), 0.02) << r.concurrency;
}

TEST(FitCalibration, InvalidPlanIsAnError) {
  Measurement m;
  m.layout = Pp1Tp32Ep4();
  m.points.push_back({8, 3000, 0, 0, 0});
  plan::LayoutPlan plan;
  plan.layout = m.layout;
  plan.valid = false;
  Result<FitResult> fit =
      FitCalibration(m, plan, spec::Spec(), model::ModelDesc(), hardware::HardwareProfile());
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.error().message, "measured layout PP1/TP32/EP4 is not valid for this spec");
}

}  // namespace
}  // namespace ppsearch::calibrate
