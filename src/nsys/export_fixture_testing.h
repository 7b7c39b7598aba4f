#pragma once
// A gtest fixture for tests that write exports (export_testing.h) into a
// scratch directory and analyse them.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "nsys/analyze.h"
#include "nsys/export_testing.h"

namespace ppsearch::nsys {

inline constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n";
inline constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ppsearch_nsys_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<TestExportWriter> Writer(
      const std::string& name, bool nvtx = true,
      TestExportWriter::Constraints constraints = TestExportWriter::Constraints::kAsNsys) {
    auto w = TestExportWriter::Create(dir_ + "/" + name, nvtx, constraints);
    EXPECT_TRUE(w.ok()) << w.error().message;
    return std::move(w).value();
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  ProfileAnalysis Analyze(const std::string& name, const std::string& window = "nvtx:prefill") {
    auto choice = ParseWindowChoice(window, 1000);
    EXPECT_TRUE(choice.ok()) << choice.error().message;
    auto a = AnalyzeProfiles({Path(name)}, *choice);
    EXPECT_TRUE(a.ok()) << a.error().message;
    return a.ok() ? *a : ProfileAnalysis{};
  }
  std::string ErrorOf(const std::string& path, const std::string& window = "nvtx:prefill") {
    auto a = AnalyzeProfiles({path}, *ParseWindowChoice(window, 1000));
    return a.ok() ? "" : a.error().message;
  }

  std::string dir_;
};

}  // namespace ppsearch::nsys
