// The calibration file: round trip, defaults, and the exact messages of the
// common mistakes.

#include "cost/calibration.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "util/files.h"

namespace ppsearch::cost {
namespace {

class CalibrationFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ppsearch_calibration_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& text) {
    std::string path = dir_ + "/calibration.json";
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  std::string dir_;
};

TEST_F(CalibrationFileTest, SaveThenLoadRoundTrips) {
  Calibration c;
  c.compute_scale = 0.4375;
  c.inter_gbps_per_gpu = 1.25;
  c.intra_bw_scale = 0.8;
  c.host_overhead_us = 1750;
  const std::string path = dir_ + "/out/calibration.json";
  ASSERT_TRUE(SaveCalibration(c, path, R"({"fit": {"layout": "PP1/TP32/EP4"}})").ok());
  Result<Calibration> loaded = LoadCalibration(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_DOUBLE_EQ(loaded->compute_scale, 0.4375);
  EXPECT_DOUBLE_EQ(loaded->inter_gbps_per_gpu, 1.25);
  EXPECT_DOUBLE_EQ(loaded->intra_bw_scale, 0.8);
  EXPECT_DOUBLE_EQ(loaded->host_overhead_us, 1750);
  EXPECT_EQ(loaded->source, path);
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("\"schema\": \"ppsearch.calibration/1\""), std::string::npos) << *text;
  EXPECT_NE(text->find("\"layout\": \"PP1/TP32/EP4\""), std::string::npos) << *text;
}

TEST_F(CalibrationFileTest, MissingKeysKeepTheirDefaults) {
  Result<Calibration> c = LoadCalibration(Write(R"({"parameters": {"compute_scale": 0.5}})"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->compute_scale, 0.5);
  EXPECT_DOUBLE_EQ(c->inter_gbps_per_gpu, 0);
  EXPECT_DOUBLE_EQ(c->intra_bw_scale, 1);
  EXPECT_DOUBLE_EQ(c->host_overhead_us, 2000);
}

TEST_F(CalibrationFileTest, MissingParametersObject) {
  const std::string path = Write(R"({"compute_scale": 0.5})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, path +
                                   ": expected a calibration file with a 'parameters' object "
                                   "(written by 'ppsearch calibrate')");
}

TEST_F(CalibrationFileTest, NegativeValue) {
  const std::string path = Write(R"({"parameters": {"intra_bw_scale": -0.5}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            path + ": key 'intra_bw_scale': expected a positive number, got -0.5");
}

TEST_F(CalibrationFileTest, ZeroComputeScaleIsAnErrorZeroNicKeepsTheProfile) {
  const std::string path = Write(R"({"parameters": {"compute_scale": 0}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, path + ": key 'compute_scale': expected a positive number, got 0");
  Result<Calibration> zero_nic =
      LoadCalibration(Write(R"({"parameters": {"inter_gbps_per_gpu": 0}})"));
  ASSERT_TRUE(zero_nic.ok()) << zero_nic.error().message;
  EXPECT_DOUBLE_EQ(zero_nic->inter_gbps_per_gpu, 0);
}

TEST_F(CalibrationFileTest, NonNumberValue) {
  const std::string path = Write(R"({"parameters": {"host_overhead_us": "fast"}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, path + ": key 'host_overhead_us': expected a number, got string");
}

TEST_F(CalibrationFileTest, NotJson) {
  const std::string path = Write("compute_scale = 0.5\n");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message.rfind(path + ": not valid JSON: ", 0), 0u) << c.error().message;
}

TEST_F(CalibrationFileTest, MissingFile) {
  Result<Calibration> c = LoadCalibration(dir_ + "/absent.json");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(dir_ + "/absent.json"), std::string::npos) << c.error().message;
}

TEST_F(CalibrationFileTest, UnknownKeyIsAnErrorWithDidYouMean) {
  const std::string path = Write(R"({"parameters": {"compute_scal": 0.5}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            path +
                ": unknown key 'parameters.compute_scal' (did you mean 'compute_scale'?); known: "
                "compute_scale, inter_gbps_per_gpu, intra_bw_scale, host_overhead_us");
}

TEST_F(CalibrationFileTest, ADirectoryIsSaidToBeOne) {
  Result<Calibration> c = LoadCalibration(dir_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "cannot read " + dir_ + ": is a directory, expected a file");
}

}  // namespace
}  // namespace ppsearch::cost
