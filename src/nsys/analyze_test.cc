// `ppsearch nsys`'s analysis on SQLite files written with the export's own
// schema (export_testing.h), with answers worked out by hand.

#include "nsys/analyze.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "nsys/analysis_json.h"
#include "nsys/export_testing.h"
#include "util/files.h"

namespace ppsearch::nsys {
namespace {

using ::testing::HasSubstr;

constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n";
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ppsearch_nsys_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<TestExportWriter> Writer(const std::string& name, bool nvtx = true) {
    auto w = TestExportWriter::Create(dir_ + "/" + name, nvtx);
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

// Two GPUs, one process each, an NVTX "prefill" range per process: GPU 0
// with no overlap, GPU 1 with partial overlap across four streams, and a
// kernel on GPU 0 that straddles the window's end.
TEST_F(ExportTest, KnownAnswersOnTwoGpus) {
  auto w = Writer("two.sqlite");
  w->AddGpu(0, "NVIDIA RTX 6000D");
  w->AddGpu(1, "NVIDIA RTX 6000D");
  w->AddNvtxRange(1000, 2000, "prefill", /*pid=*/1);
  w->AddNvtxRange(1000, 2000, "prefill", /*pid=*/2, /*registered=*/true);
  w->AddNvtxRange(2500, 2600, "decode", 1);
  w->AddKernel(0, 7, 1000, 1400, kGemm, 1);
  w->AddKernel(0, 8, 1500, 1800, kAllReduce, 1);
  w->AddKernel(0, 7, 1900, 2300, kGemm, 1);  // 100 ns inside the window
  w->AddKernel(1, 7, 1000, 1300, kGemm, 2);
  w->AddKernel(1, 9, 1250, 1500, kGemm, 2);
  w->AddKernel(1, 8, 1400, 1700, kAllReduce, 2);
  w->AddKernel(1, 10, 1650, 1900, "ncclKernel_AllGather_RING_LL_Sum_int8_t", 2);
  ASSERT_TRUE(w->Close().ok());

  const ProfileAnalysis a = Analyze("two.sqlite");
  ASSERT_EQ(a.exports.size(), 1u);
  EXPECT_EQ(a.exports[0].kernel_rows, 7);
  EXPECT_EQ(a.exports[0].schema_version, "3.16.1");
  ASSERT_EQ(a.exports[0].gpus.size(), 2u);
  const WindowBreakdown& g0 = a.exports[0].gpus[0].windows.at(0);
  EXPECT_EQ(a.exports[0].gpus[0].gpu_name, "NVIDIA RTX 6000D");
  EXPECT_EQ(a.exports[0].gpus[0].labels.at(0), "prefill");
  EXPECT_EQ(g0.exposed_ns, 300);
  EXPECT_EQ(g0.overlapped_ns, 0);
  EXPECT_EQ(g0.compute_only_ns, 500);
  EXPECT_EQ(g0.idle_ns, 200);
  const WindowBreakdown& g1 = a.exports[0].gpus[1].windows.at(0);
  EXPECT_EQ(g1.exposed_ns, 400);
  EXPECT_EQ(g1.overlapped_ns, 100);
  EXPECT_EQ(g1.compute_only_ns, 400);
  EXPECT_EQ(g1.idle_ns, 100);
  EXPECT_EQ(g1.calls[static_cast<int>(Collective::kAllGather)], 1);
  EXPECT_EQ(a.summary.windows, 2);
  EXPECT_DOUBLE_EQ(a.summary.exposed_share.median, 0.35);
  EXPECT_DOUBLE_EQ(a.summary.calls_per_window[static_cast<int>(Collective::kAllReduce)].median, 1);
}

TEST_F(ExportTest, FullOverlapAndAnEmptyWindow) {
  auto w = Writer("full.sqlite");
  w->AddNvtxRange(0, 1000, "prefill");
  w->AddNvtxRange(5000, 6000, "prefill");  // nothing runs in it
  w->AddKernel(0, 7, 0, 1000, kGemm);
  w->AddKernel(0, 8, 200, 600, kAllReduce);
  ASSERT_TRUE(w->Close().ok());
  const ProfileAnalysis a = Analyze("full.sqlite");
  const auto& windows = a.exports.at(0).gpus.at(0).windows;
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].overlapped_ns, 400);
  EXPECT_EQ(windows[0].compute_only_ns, 600);
  EXPECT_EQ(windows[0].exposed_ns, 0);
  EXPECT_EQ(windows[1].idle_ns, 1000);
  EXPECT_EQ(windows[1].kernels, 0);
  EXPECT_DOUBLE_EQ(a.summary.idle_share.max, 1.0);
}

TEST_F(ExportTest, ForwardWindowsComeFromIdleGaps) {
  auto w = Writer("fwd.sqlite", /*nvtx=*/false);
  for (int pass = 0; pass < 3; ++pass) {
    const int64_t t0 = pass * 10'000'000;  // 10 ms apart, 2 ms passes
    w->AddKernel(0, 7, t0, t0 + 1'000'000, kGemm);
    w->AddKernel(0, 8, t0 + 1'000'000, t0 + 2'000'000, kAllReduce);
  }
  ASSERT_TRUE(w->Close().ok());
  const ProfileAnalysis a = Analyze("fwd.sqlite", "forward");
  EXPECT_EQ(a.summary.windows, 3);
  EXPECT_DOUBLE_EQ(a.summary.exposed_share.median, 0.5);
  EXPECT_DOUBLE_EQ(a.summary.window_ms.median, 2.0);
  EXPECT_EQ(a.summary.exposed_share.spread, 0);
}

TEST_F(ExportTest, NvtxRangesOfAProcessWithoutKernelsApplyToEveryGpu) {
  auto w = Writer("cpu.sqlite");
  w->AddNvtxRange(0, 100, "prefill", /*pid=*/9);
  w->AddKernel(0, 7, 0, 50, kAllReduce, 1);
  w->AddKernel(1, 7, 0, 100, kGemm, 2);
  ASSERT_TRUE(w->Close().ok());
  const ProfileAnalysis a = Analyze("cpu.sqlite");
  EXPECT_EQ(a.summary.windows, 2);
  ASSERT_EQ(a.exports[0].notes.size(), 1u);
  EXPECT_THAT(a.exports[0].notes[0], HasSubstr("apply to every GPU"));
}

TEST_F(ExportTest, BadInputsAreNamed) {
  const std::string text = Path("notes.sqlite");
  ASSERT_TRUE(
      WriteFileAtomic(text, "this is not a database, just a text file of some length\n").ok());
  EXPECT_EQ(ErrorOf(text), text +
                               ": not an SQLite database (expected an Nsight Systems export: "
                               "`nsys export --type sqlite PROFILE.nsys-rep`)");
  EXPECT_EQ(ErrorOf(Path("absent.sqlite")),
            Path("absent.sqlite") +
                ": no such file (expected an Nsight Systems SQLite export, "
                "from `nsys export --type sqlite`)");
  {
    auto w = Writer("nvtx.sqlite");
    w->AddNvtxRange(0, 100, "decode");
    w->AddNvtxRange(200, 300, "sample");
    w->AddKernel(0, 7, 0, 50, kGemm);
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_EQ(ErrorOf(Path("nvtx.sqlite"), "nvtx:^prefill$"),
            Path("nvtx.sqlite") +
                ": no NVTX range matches '^prefill$' (2 ranges, named 'decode', 'sample')");
  {
    auto w = Writer("nonvtx.sqlite", /*nvtx=*/false);
    w->AddKernel(0, 7, 0, 50, kGemm);
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_THAT(ErrorOf(Path("nonvtx.sqlite")),
              HasSubstr("nonvtx.sqlite: no NVTX ranges (table NVTX_EVENTS absent or empty)"));
}

TEST_F(ExportTest, AnSqliteFileWithoutTheKernelTable) {
  const std::string path = Path("empty.sqlite");
  ASSERT_TRUE(WriteFileAtomic(path, "").ok());  // an empty file is an empty database
  EXPECT_EQ(ErrorOf(path), path +
                               ": no table CUPTI_ACTIVITY_KIND_KERNEL: the profile holds no CUDA "
                               "kernel trace (profile with `nsys profile --trace=cuda,nvtx`, then "
                               "`nsys export --type sqlite`)");
}

TEST(WindowChoiceTest, ParsesAndRejects) {
  EXPECT_EQ(ParseWindowChoice("forward", 500)->gap_ns, 500'000);
  EXPECT_EQ(ParseWindowChoice("nvtx:prefill|extend", 1000)->pattern, "prefill|extend");
  EXPECT_EQ(ParseWindowChoice("prefill", 1000).error().message,
            "--window 'prefill': expected 'forward' or 'nvtx:REGEX' (e.g. nvtx:prefill)");
  EXPECT_THAT(ParseWindowChoice("nvtx:(", 1000).error().message,
              HasSubstr("--window 'nvtx:(': not a valid regular expression"));
  EXPECT_EQ(ParseWindowChoice("forward", 0).error().message,
            "--gap-us: expected a positive number of microseconds, got 0");
}

// The written analysis is a profile summary `ppsearch calibrate` reads.
TEST_F(ExportTest, TableNamesTheGpusAndTheMedians) {
  auto w = Writer("t.sqlite");
  w->AddGpu(0, "NVIDIA RTX 6000D");
  w->AddNvtxRange(0, 1000, "prefill");
  w->AddKernel(0, 7, 0, 400, kGemm);
  w->AddKernel(0, 8, 400, 1000, kAllReduce);
  ASSERT_TRUE(w->Close().ok());
  const std::string table = AnalysisTable(Analyze("t.sqlite"));
  EXPECT_THAT(table, HasSubstr("# windows: nvtx:prefill; 1 windows on 1 GPUs"));
  EXPECT_THAT(table, HasSubstr("0 NVIDIA RTX 6000D"));
  EXPECT_THAT(table, HasSubstr("# exposed communication: 60.00% of the window"));
  EXPECT_THAT(table, HasSubstr("AllReduce"));
}

}  // namespace
}  // namespace ppsearch::nsys
