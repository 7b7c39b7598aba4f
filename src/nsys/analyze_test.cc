// `ppsearch nsys`'s analysis on SQLite files written with the export's own
// schema (export_testing.h), with answers worked out by hand.

#include "nsys/analyze.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "nsys/analysis_json.h"
#include "nsys/export_fixture_testing.h"
#include "util/files.h"

namespace ppsearch::nsys {
namespace {

using ::testing::HasSubstr;

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

// Compute kernels are split by class from their names: the window's shares
// per class, their medians over windows and GPUs, the JSON and the table.
TEST_F(ExportTest, ComputeKernelsAreSplitByClass) {
  auto w = Writer("classes.sqlite");
  w->AddGpu(0, "NVIDIA H200");
  w->AddNvtxRange(0, 1000, "prefill", 1);
  w->AddKernel(0, 7, 0, 400, kGemm, 1);
  // The demangled name decides where the short one says nothing ("kernel"),
  // and the short one where the demangled one says nothing.
  w->AddKernel(0, 7, 400, 600, "fused_moe_kernel", 1, "void triton_0<128>()");
  w->AddKernel(0, 7, 600, 700, "kernel", 1, "void flash::FlashAttnFwdSm90<cutlass::bfloat16_t>()");
  w->AddKernel(0, 7, 700, 750, "void flashinfer::norm::FusedAddRMSNormKernel<8u>()", 1);
  w->AddKernel(0, 8, 750, 1000, kAllReduce, 1);
  ASSERT_TRUE(w->Close().ok());
  const ProfileAnalysis a = Analyze("classes.sqlite", "nvtx:prefill");
  const WindowBreakdown& b = a.exports.at(0).gpus.at(0).windows.at(0);
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kGemm)], 400);
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kMoe)], 200);
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kAttention)], 100);
  EXPECT_EQ(b.class_time_ns[static_cast<int>(ComputeClass::kOther)], 50);
  EXPECT_DOUBLE_EQ(a.summary.class_share[static_cast<int>(ComputeClass::kGemm)].median, 0.4);
  EXPECT_EQ(a.summary.total_class_time_ns[static_cast<int>(ComputeClass::kMoe)], 200);
  const nlohmann::ordered_json j = AnalysisJson(a, {});
  EXPECT_DOUBLE_EQ(j["compute_classes"]["attention"]["share"]["median"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["compute_classes"]["other"]["time_ms_total"].get<double>(), 50e-6);
  EXPECT_EQ(j["per_gpu"][0]["per_window"][0]["compute_classes_ns"]["moe"].get<int64_t>(), 200);
  EXPECT_THAT(AnalysisTable(a), HasSubstr("# compute kernels by class, share of the window "
                                          "(median): gemm 40.00%, moe 20.00%, attention 10.00%, "
                                          "other 5.00%"));
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
  auto w = Writer("nokernels.sqlite");
  w->AddSql("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL");
  ASSERT_TRUE(w->Close().ok());
  const std::string path = Path("nokernels.sqlite");
  EXPECT_EQ(ErrorOf(path), path +
                               ": no table CUPTI_ACTIVITY_KIND_KERNEL: the profile holds no CUDA "
                               "kernel trace (profile with `nsys profile --trace=cuda,nvtx`, then "
                               "`nsys export --type sqlite`)");
}

// An export whose kernel table is empty gave "0 windows on 0 GPUs" and an
// exposed share of 0.00%: a figure nothing measured. It is an error.
TEST_F(ExportTest, AnEmptyKernelTableGivesNoFigure) {
  auto w = Writer("empty.sqlite");
  w->AddGpu(0, "NVIDIA H200");
  w->AddNvtxRange(0, 100, "prefill");
  ASSERT_TRUE(w->Close().ok());
  const std::string path = Path("empty.sqlite");
  const std::string expected =
      path +
      ": table CUPTI_ACTIVITY_KIND_KERNEL is empty: the profile caught no CUDA kernel, so there "
      "is no window to measure (profile while the server runs requests, with `nsys profile "
      "--trace=cuda,nvtx`)";
  EXPECT_EQ(ErrorOf(path, "forward"), expected);
  EXPECT_EQ(ErrorOf(path, "nvtx:prefill"), expected);
  const Status check = CheckExportHasKernels(path);
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.error().message, expected);
  EXPECT_EQ(check.error().kind, ErrorKind::kConfig);  // exit code 2, as any bad input
}

// Kernels, but every one skipped (it ends before it starts): still no window.
TEST_F(ExportTest, KernelsThatFormNoWindowGiveNoFigure) {
  auto w = Writer("reversed.sqlite", /*nvtx=*/false);
  w->AddKernel(0, 7, 500, 400, kGemm);
  ASSERT_TRUE(w->Close().ok());
  const std::string path = Path("reversed.sqlite");
  EXPECT_TRUE(CheckExportHasKernels(path).ok());
  EXPECT_EQ(ErrorOf(path, "forward"),
            path +
                ": no window (forward (gap 1000 us)) on any GPU, so there is no figure to give "
                "(every kernel row was skipped or spans no time)");
}

// One export is one node's GPUs: the same file twice counted them twice.
TEST_F(ExportTest, AnExportGivenTwiceIsRefused) {
  auto w = Writer("node.sqlite", /*nvtx=*/false);
  w->AddKernel(0, 7, 0, 100, kGemm);
  ASSERT_TRUE(w->Close().ok());
  const std::string path = Path("node.sqlite");
  const auto choice = ParseWindowChoice("forward", 1000);
  auto a = AnalyzeProfiles({path, path}, *choice);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message,
            path +
                ": given twice: each export is one node's GPUs, and the same file twice would "
                "count its GPUs and windows twice");
  std::filesystem::create_directory(Path("sub"));
  const std::string other = Path("sub/../node.sqlite");
  a = AnalyzeProfiles({path, other}, *choice);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.error().message, HasSubstr(other + ": given twice (also as " + path + ")"));
  EXPECT_TRUE(AnalyzeProfiles({path}, *choice).ok());
}

TEST(WindowChoiceTest, ParsesAndRejects) {
  EXPECT_EQ(ParseWindowChoice("forward", 500)->gap_ns, 500'000);
  EXPECT_EQ(ParseWindowChoice("nvtx:prefill|extend", 1000)->pattern, "prefill|extend");
  EXPECT_EQ(ParseWindowChoice("prefill", 1000).error().message,
            "--window 'prefill': expected 'forward' or 'nvtx:REGEX' (e.g. nvtx:prefill)");
  EXPECT_EQ(ParseWindowChoice("nvtx:(", 1000).error().message,
            "--window 'nvtx:(': not a valid regular expression (RE2 syntax): missing ): (");
  // RE2 has no backreferences or lookaround, which ECMAScript regexes have.
  EXPECT_EQ(ParseWindowChoice("nvtx:(a)\\1", 1000).error().message,
            "--window 'nvtx:(a)\\1': not a valid regular expression (RE2 syntax): invalid escape "
            "sequence: \\1");
  EXPECT_EQ(ParseWindowChoice("forward", 0).error().message,
            "--gap-us: expected 1 to 3600000000 microseconds (an hour), got 0");
  // A gap of more than an hour would overflow as nanoseconds added to a timestamp.
  EXPECT_EQ(ParseWindowChoice("forward", INT64_MAX / 100).error().message,
            "--gap-us: expected 1 to 3600000000 microseconds (an hour), got 92233720368547758");
  EXPECT_EQ(ParseWindowChoice("forward", kMaxGapUs)->gap_ns, kMaxGapUs * 1000);
}

// std::regex backtracked: (a+)+$ on 30 a's and a b took about a minute, and
// prefill.* on a text of 50,000 characters overflowed the stack. RE2 takes
// linear time and no recursion.
TEST_F(ExportTest, PatternsTakeLinearTimeOnLongTexts) {
  auto w = Writer("long.sqlite");
  const std::string long_text = "prefill " + std::string(50'000, 'a');
  w->AddNvtxRange(0, 100, long_text);
  w->AddNvtxRange(200, 300, std::string(30, 'a') + "b");
  w->AddKernel(0, 7, 0, 300, kGemm);
  ASSERT_TRUE(w->Close().ok());
  const auto t0 = std::chrono::steady_clock::now();
  const ProfileAnalysis greedy = Analyze("long.sqlite", "nvtx:^prefill.*$");
  ASSERT_EQ(greedy.summary.windows, 1);
  EXPECT_EQ(greedy.exports[0].gpus[0].labels[0], long_text);
  const ProfileAnalysis nested = Analyze("long.sqlite", "nvtx:(a+)+$");
  EXPECT_EQ(nested.summary.windows, 1);  // the long text ends in a's; "...ab" does not
  EXPECT_EQ(nested.exports[0].gpus[0].windows[0].window.start_ns, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(ExportTest, NamesInAMessageAreCutShort) {
  auto w = Writer("names.sqlite");
  w->AddNvtxRange(0, 100, std::string(50'000, 'x'));
  w->AddKernel(0, 7, 0, 100, kGemm);
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(ErrorOf(Path("names.sqlite")),
            Path("names.sqlite") + ": no NVTX range matches 'prefill' (1 ranges, named '" +
                std::string(60, 'x') + "...')");
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
