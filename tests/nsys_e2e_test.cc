// `ppsearch nsys` as a user runs it: an export written with the real schema,
// the table, --json, the analysis file calibrate reads, and named errors.

#include <gmock/gmock.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "nsys/export_testing.h"

namespace ppsearch::testing {
namespace {

using ::testing::HasSubstr;

class NsysCliTest : public CliTest {
 protected:
  // One GPU, two prefill windows: 60% exposed AllReduce, then 40% compute.
  std::string WriteExport() {
    const std::string path = (dir_ / "profile.sqlite").string();
    auto w = nsys::TestExportWriter::Create(path);
    EXPECT_TRUE(w.ok());
    (*w)->AddGpu(0, "NVIDIA RTX 6000D");
    for (int i = 0; i < 2; ++i) {
      const int64_t t0 = i * 10'000'000;
      (*w)->AddNvtxRange(t0, t0 + 1'000'000, "prefill");
      (*w)->AddKernel(0, 7, t0, t0 + 400'000, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
      (*w)->AddKernel(0, 8, t0 + 400'000, t0 + 1'000'000,
                      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
    }
    EXPECT_TRUE((*w)->Close().ok());
    return path;
  }
};

TEST_F(NsysCliTest, TableAndAnalysisFile) {
  const std::string profile = WriteExport();
  const std::string out = (dir_ / "nsys_analysis.json").string();
  CommandResult r = Run("nsys " + profile + " --window nvtx:prefill --layout 1/32/4 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# windows: nvtx:prefill; 2 windows on 1 GPUs"));
  EXPECT_THAT(r.out, HasSubstr("# exposed communication: 60.00% of the window"));
  const auto j = nlohmann::json::parse(ReadText(out));
  EXPECT_DOUBLE_EQ(j["exposed_nccl_share_of_prefill_window_median"].get<double>(), 0.6);
  EXPECT_EQ(j["allreduce_calls_in_window"], 1.0);
  EXPECT_EQ(j["layout"]["tp"], 32);
}

// The analysis file as calibrate's profile summary: its exposed share is
// fitted to, its compute by class printed beside the fitted prediction.
TEST_F(NsysCliTest, CalibratePrintsTheProfilesComputeByClassBesideThePrediction) {
  const std::string profile = WriteExport();
  const std::string analysis = (dir_ / "nsys_analysis.json").string();
  ASSERT_EQ(
      Run("nsys " + profile + " --window nvtx:prefill --layout 1/32/4 -o " + analysis).exit_code,
      0);
  CommandResult r =
      Run("calibrate examples/kimi-k3-pp-search.toml --measured "
          "data/baseline/pp1-tp32-ep4.csv --profile-summary " +
          analysis + " -o " + (dir_ / "cal.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("PP1/TP32/EP4 exposed communication share: measured 60.00%"));
  EXPECT_THAT(r.out, HasSubstr("PP1/TP32/EP4 compute by class, share of the window (measured / "
                               "predicted): gemm 40.00% / "));
  EXPECT_THAT(r.out, HasSubstr(", moe 0.00% / "));
}

TEST_F(NsysCliTest, JsonGoesToStdout) {
  const std::string profile = WriteExport();
  CommandResult r =
      Run("nsys " + profile + " --json --window forward -o " + (dir_ / "a.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["windows"], 2);
  EXPECT_EQ(j["window"]["mode"], "forward");
}

// An export with its kernel table emptied once "succeeded" with "0 windows
// on 0 GPUs" and an exposed share of 0.00%; a run whose [profile] file named
// it quoted that 0% in its report. Now no figure comes from no kernel: nsys
// fails as on any bad input (2) and writes nothing, and validate (as run,
// before any sample) refuses the spec's file.
TEST_F(NsysCliTest, AnExportWithNoKernelGivesNoFigure) {
  const std::string path = (dir_ / "empty.sqlite").string();
  {
    auto w = nsys::TestExportWriter::Create(path);
    ASSERT_TRUE(w.ok());
    (*w)->AddGpu(0, "NVIDIA RTX 6000D");
    (*w)->AddNvtxRange(0, 1'000'000, "prefill");
    ASSERT_TRUE((*w)->Close().ok());
  }
  const std::string out = (dir_ / "out.json").string();
  CommandResult r = Run("nsys " + path + " -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ": table CUPTI_ACTIVITY_KIND_KERNEL is empty: the profile "
                                      "caught no CUDA kernel, so there is no window to measure"));
  EXPECT_EQ(r.out.find("0.00%"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = Run("validate examples/kimi-k3-pp-search.toml --set profile.file=" + path);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("key 'profile.file': " + path +
                               ": table CUPTI_ACTIVITY_KIND_KERNEL is empty"));
}

// The same export twice counted its GPUs twice ("6 windows on 2 GPUs").
TEST_F(NsysCliTest, AnExportGivenTwiceIsRefused) {
  const std::string profile = WriteExport();
  const std::string out = (dir_ / "out.json").string();
  CommandResult r = Run("nsys " + profile + " " + profile + " -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(profile + ": given twice"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(NsysCliTest, ErrorsNameTheFileTableAndPattern) {
  const std::string text = (dir_ / "notes.txt").string();
  {
    std::ofstream f(text);
    f << "not a database at all, just some words in a text file\n";
  }
  CommandResult r = Run("nsys " + text);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(text + ": not an SQLite database"));
  const std::string profile = WriteExport();
  r = Run("nsys " + profile + " --window nvtx:^decode$ -o " + (dir_ / "x.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(profile + ": no NVTX range matches '^decode$' (2 ranges, named "
                                         "'prefill')"));
  r = Run("nsys " + profile + " --window prefill");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--window 'prefill': expected 'forward' or 'nvtx:REGEX'"));
  r = Run("nsys " + profile + " --window 'nvtx:(prefill'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--window 'nvtx:(prefill': not a valid regular expression (RE2 "
                               "syntax): missing ): (prefill"));
}

// Inputs that once crashed the command: an NVTX text of 50,000 characters
// under a greedy pattern (std::regex recursed per character), and a --layout
// of 50,000 digits or one past int (the same recursion; std::stoi threw).
TEST_F(NsysCliTest, LongTextsAndNumbersAreNoCrash) {
  const std::string path = (dir_ / "long.sqlite").string();
  {
    auto w = nsys::TestExportWriter::Create(path);
    ASSERT_TRUE(w.ok());
    (*w)->AddNvtxRange(0, 1'000'000, "prefill " + std::string(50'000, 'x'));
    (*w)->AddKernel(0, 7, 0, 1'000'000, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
    ASSERT_TRUE((*w)->Close().ok());
  }
  const std::string out = " -o " + (dir_ / "a.json").string();
  CommandResult r = Run("nsys " + path + " --window 'nvtx:^prefill.*$'" + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# exposed communication: 100.00% of the window"));
  r = Run("nsys " + path + " --layout " + std::string(50'000, '1') + "/1/1" + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(": expected PP/TP/EP"));
  r = Run("nsys " + path + " --layout 99999999999/32/4" + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--layout 99999999999/32/4: expected PP/TP/EP"));
}

// An export's texts are bytes, not always UTF-8 (a fuzzed NVTX pattern and
// GPU name once made the analysis JSON throw halfway through): they reach
// the table and the analysis file, the invalid bytes as U+FFFD.
TEST_F(NsysCliTest, TextsThatAreNotUtf8AreNoCrash) {
  const std::string path = (dir_ / "bytes.sqlite").string();
  {
    auto w = nsys::TestExportWriter::Create(path);
    ASSERT_TRUE(w.ok());
    (*w)->AddGpu(0, "NVIDIA \xff\xfe GPU");
    (*w)->AddNvtxRange(0, 1'000'000, "prefill \xc3\x28");
    (*w)->AddKernel(0, 7, 0, 1'000'000, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL\xff");
    ASSERT_TRUE((*w)->Close().ok());
  }
  const std::string out = (dir_ / "a.json").string();
  CommandResult r = Run("nsys " + path + " --window 'nvtx:^prefill' --json -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NE(j.dump().find("\xef\xbf\xbd"), std::string::npos) << "no U+FFFD in " << r.out;
  EXPECT_EQ(nlohmann::json::parse(ReadText(out)), j);
}

// A broken cell fails with its table, row and column; a reversed row is
// skipped and counted in the table's notes.
TEST_F(NsysCliTest, DamagedRowsAreNamedOrCounted) {
  const std::string path = (dir_ / "damaged.sqlite").string();
  auto write = [&path](const std::string& sql) {
    auto w = nsys::TestExportWriter::Create(path);
    ASSERT_TRUE(w.ok());
    (*w)->AddKernel(0, 7, 0, 1'000, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
    (*w)->AddSql(sql);
    ASSERT_TRUE((*w)->Close().ok());
  };
  const std::string columns =
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL; "
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET ";
  write(columns + "start = -9223372036854775808, end = 9223372036854775807 WHERE rowid = 2");
  const std::string out = " -o " + (dir_ / "a.json").string();
  CommandResult r = Run("nsys " + path + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(path + ": CUPTI_ACTIVITY_KIND_KERNEL row 2: column 'start' is "
                                      "-9223372036854775808, expected a timestamp within"));
  write(columns + "start = 900, end = 100 WHERE rowid = 2");
  r = Run("nsys " + path + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# note: " + path +
                               ": CUPTI_ACTIVITY_KIND_KERNEL: 1 row skipped (end before start); "
                               "the first is row 2 (start 900, end 100)"));
}

}  // namespace
}  // namespace ppsearch::testing
