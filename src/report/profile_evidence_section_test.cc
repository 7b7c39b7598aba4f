#include "report/profile_evidence_section.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "util/files.h"

namespace ppsearch::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ProfileEvidenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ppsearch_prof_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/" + rel, text).ok());
  }
  std::string dir_;
};

TEST_F(ProfileEvidenceTest, NoProfilesNoLines) {
  auto lines = ProfileEvidenceLines(dir_);
  ASSERT_TRUE(lines.ok());
  EXPECT_TRUE(lines->empty());
}

TEST_F(ProfileEvidenceTest, QuotesTheAnalysisBesideThePrediction) {
  Write("profile/pp1-tp32-ep4_c8_r1/file.json",
        R"({"exposed_nccl_share_of_prefill_window_median": 0.5727, "windows": 40, "gpus": 32,
            "exposed_share": {"median": 0.5727, "spread": 0.031},
            "overlapped_share": {"median": 0.001}, "compute_only_share": {"median": 0.40},
            "idle_share": {"median": 0.0263}, "allreduce_calls_in_window": 557,
            "compute_communication_overlap": "effectively none"})");
  Write("profile/pp1-tp32-ep4_c8_r1/predicted.json",
        R"({"layout": "PP1/TP32/EP4", "concurrency": 8, "exposed_comm_share": 0.551,
            "bubble_share": 0.0, "allreduce_per_forward": 187, "stages": []})");
  Write("profile/pp2-tp16-ep4_c8_r1/601.json", R"({"error": "nsys export: no report"})");
  auto lines = ProfileEvidenceLines(dir_);
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0],
            "`pp1-tp32-ep4_c8_r1` (the export the spec names): exposed communication 57.27% of "
            "the window (median over 40 windows on 32 GPUs, spread 3.10%), overlapped 0.10%, "
            "compute only 40.00%, idle 2.63%; 557 AllReduce calls per window; compute/"
            "communication overlap effectively none; the simulator predicts for PP1/TP32/EP4 at "
            "C=8: exposed communication 55.10%, pipeline bubble 0.00%, 187 all-reduces per "
            "forward");
  EXPECT_EQ((*lines)[1], "`pp2-tp16-ep4_c8_r1` (node 601): no analysis: nsys export: no report");
}

// Files that state the compute by class (`ppsearch nsys`'s analysis, the
// run's prediction) show it on each side, in the same classes.
TEST_F(ProfileEvidenceTest, TheComputeByClassIsQuotedOnBothSides) {
  Write("profile/pp1-tp32-ep4_c8_r1/file.json",
        R"({"exposed_nccl_share_of_prefill_window_median": 0.5727, "windows": 40, "gpus": 32,
            "exposed_share": {"median": 0.5727, "spread": 0.031},
            "overlapped_share": {"median": 0.001}, "compute_only_share": {"median": 0.40},
            "idle_share": {"median": 0.0263}, "allreduce_calls_in_window": 557,
            "compute_communication_overlap": "effectively none",
            "compute_classes": {"gemm": {"share": {"median": 0.21}},
                                "moe": {"share": {"median": 0.1}},
                                "attention": {"share": {"median": 0.04}},
                                "other": {"share": {"median": 0.05}}}})");
  Write("profile/pp1-tp32-ep4_c8_r1/predicted.json",
        R"({"layout": "PP1/TP32/EP4", "concurrency": 8, "exposed_comm_share": 0.551,
            "bubble_share": 0.0, "allreduce_per_forward": 187, "stages": [],
            "compute_classes": {"gemm": 0.24, "moe": 0.126, "attention": 0.038,
                                "other": 0.067}})");
  auto lines = ProfileEvidenceLines(dir_);
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_THAT((*lines)[0], HasSubstr("compute/communication overlap effectively none; compute by "
                                     "class gemm 21.00%, moe 10.00%, attention 4.00%, other "
                                     "5.00%; the simulator predicts"));
  EXPECT_THAT((*lines)[0], HasSubstr("187 all-reduces per forward; compute by class gemm 24.00%, "
                                     "moe 12.60%, attention 3.80%, other 6.70%"));
}

TEST_F(ProfileEvidenceTest, AFileOfAnotherShapeIsNamed) {
  Write("profile/pp1-tp32-ep4_c8_r1/file.json", R"({"share": 0.5})");
  auto lines = ProfileEvidenceLines(dir_);
  ASSERT_FALSE(lines.ok());
  EXPECT_THAT(lines.error().message,
              HasSubstr("profile/pp1-tp32-ep4_c8_r1/file.json: key "
                        "'exposed_nccl_share_of_prefill_window_median' must be a number (the JSON "
                        "`ppsearch nsys` writes), got nothing"));
}

// An analysis of no window (a file.json an earlier version wrote for an
// export with no kernel) quotes no 0% that nothing measured.
TEST_F(ProfileEvidenceTest, AnAnalysisOfNoWindowQuotesNoFigure) {
  Write("profile/pp1-tp32-ep4_c8_r1/file.json",
        R"({"exposed_nccl_share_of_prefill_window_median": 0.0, "windows": 0, "gpus": 0,
            "exposed_share": {"median": 0.0, "spread": 0.0},
            "overlapped_share": {"median": 0.0}, "compute_only_share": {"median": 0.0},
            "idle_share": {"median": 0.0}, "allreduce_calls_in_window": 0,
            "compute_communication_overlap": "effectively none"})");
  auto lines = ProfileEvidenceLines(dir_);
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  EXPECT_THAT(*lines, ElementsAre("`pp1-tp32-ep4_c8_r1` (the export the spec names): no "
                                  "analysis: the profile held no window (no kernel in it), so it "
                                  "gives no figure"));
}

// A figure missing from an analysis or a prediction is an error naming it,
// never a 0 in the report.
TEST_F(ProfileEvidenceTest, AMissingFigureIsNamedNeverReadAsZero) {
  Write("profile/pp1-tp32-ep4_c8_r1/file.json",
        R"({"exposed_nccl_share_of_prefill_window_median": 0.5727, "windows": 40, "gpus": 32,
            "exposed_share": {"median": 0.5727, "spread": 0.031},
            "overlapped_share": {"median": 0.001}, "compute_only_share": {"median": 0.40},
            "idle_share": {"median": 0.0263},
            "compute_communication_overlap": "effectively none"})");
  auto lines = ProfileEvidenceLines(dir_);
  ASSERT_FALSE(lines.ok());
  EXPECT_THAT(lines.error().message,
              HasSubstr("file.json: key 'allreduce_calls_in_window' must be a number"));
  Write("profile/pp1-tp32-ep4_c8_r1/file.json", R"({"error": "nsys export: no report"})");
  Write("profile/pp1-tp32-ep4_c8_r1/predicted.json",
        R"({"layout": "PP1/TP32/EP4", "concurrency": 8, "exposed_comm_share": 0.551,
            "allreduce_per_forward": 187, "stages": []})");
  lines = ProfileEvidenceLines(dir_);
  ASSERT_FALSE(lines.ok());
  EXPECT_THAT(lines.error().message,
              HasSubstr("predicted.json: key 'bubble_share' must be a number"));
}

}  // namespace
}  // namespace ppsearch::report
