// End-to-end: an evidence directory written by hand, as the runner writes
// it, and everything `ppsearch report` derives from it.

#include "report/build_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "analysis/analysis_test_util.h"
#include "evidence/evidence.h"
#include "gpu/gpu_memory.h"
#include "report/markdown.h"
#include "util/csv.h"
#include "util/files.h"

namespace ppsearch::report {
namespace {

namespace fs = std::filesystem;
using analysis::testing::EvenRecords;
using analysis::testing::ExampleSpecPath;
using analysis::testing::Layout;
using analysis::testing::SmallSweepOverrides;

const spec::LayoutSpec kPp4 = Layout(4, 8, 4);
const spec::LayoutSpec kPp8 = Layout(8, 4, 4);

class BuildReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("ppsearch_report_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::remove_all(dir_ + "_old");
    target_ = dir_;
  }
  void TearDown() override {
    if (HasFailure()) return;
    fs::remove_all(dir_);
    fs::remove_all(dir_ + "_old");
  }

  void WriteMetadata(std::vector<std::string> extra_overrides = {}) {
    std::vector<std::string> overrides = SmallSweepOverrides();
    overrides.insert(overrides.end(), extra_overrides.begin(), extra_overrides.end());
    nlohmann::json run = {{"schema", "1"},
                          {"run_id", "test-run"},
                          {"engine", "sim"},
                          {"simulated", true},
                          {"tool_version", "0.1.0"},
                          {"git_sha", "abc"},
                          {"spec_path", ExampleSpecPath()},
                          {"overrides", overrides},
                          {"hosts", {"601", "602", "603", "604"}},
                          {"image", "local/sglang:kimi-k3-sm120-flashinfer-mxfp4-phase5"},
                          {"calibration", nullptr},
                          {"seeds", {{"workload", 20240601}}},
                          {"command_line", "ppsearch run examples/kimi-k3-pp-search.toml --set x"},
                          {"started_at", "2026-01-01T00:00:00Z"}};
    ASSERT_TRUE(WriteFileAtomic(target_ + "/metadata/run.json", run.dump(2)).ok());
    Result<std::string> spec = ReadFile(ExampleSpecPath());
    ASSERT_TRUE(spec.ok());
    ASSERT_TRUE(WriteFileAtomic(target_ + "/metadata/spec.toml", *spec).ok());
  }

  // One sample: 8 requests of 16,000 tokens over `duration_s`; GPU used
  // 80,000 + 100 x stage MiB (stage = global rank / tp on 4 x 8 GPUs).
  void WriteSample(const spec::LayoutSpec& layout, int repeat, double duration_s,
                   const std::string& log_603 = "[2026-01-01 00:00:00] ready\n", int errors = 0,
                   bool completed = true) {
    const evidence::RunPaths paths{target_};
    const evidence::SampleId id{layout, 8, repeat};
    ASSERT_TRUE(evidence::AppendManifest(paths, id, evidence::SampleState::kStarted).ok());
    ASSERT_TRUE(WriteFileAtomic(paths.raw(id),
                                evidence::RecordsToJsonl(EvenRecords(8, 16000, duration_s, errors)))
                    .ok());
    for (int h = 0; h < 4; ++h) {
      const std::string host = std::to_string(601 + h);
      std::vector<gpu::GpuMemory> gpus;
      for (int g = 0; g < 8; ++g) {
        const int stage = (h * 8 + g) / layout.tp;
        gpus.push_back({g, "GPU-" + host + std::to_string(g), "NVIDIA RTX 6000D",
                        80000.0 + 100 * stage, 85651.0});
      }
      ASSERT_TRUE(WriteFileAtomic(paths.gpu(id, host), gpu::FormatGpuMemoryCsv(gpus)).ok());
      ASSERT_TRUE(WriteFileAtomic(paths.service(id, host),
                                  host == "603" ? log_603 : "[2026-01-01 00:00:00] ready\n")
                      .ok());
    }
    if (completed) {
      ASSERT_TRUE(evidence::AppendManifest(paths, id, evidence::SampleState::kCompleted).ok());
    }
  }

  void WriteHealthyRun() {
    WriteMetadata();
    WriteSample(kPp4, 1, 10.0);
    WriteSample(kPp4, 2, 10.2);
    WriteSample(kPp8, 1, 8.0);
    WriteSample(kPp8, 2, 8.1);
  }

  std::string dir_;
  std::string target_;  // the run directory WriteMetadata and WriteSample write
};

double Cell(const CsvTable& t, size_t row, const std::string& col) {
  Result<double> v = CsvNumber(t, row, col);
  EXPECT_TRUE(v.ok()) << col;
  return v.ok() ? *v : -1;
}

TEST_F(BuildReportTest, WritesEveryFileWithTheExpectedNumbers) {
  WriteHealthyRun();
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportOk);
  ASSERT_EQ(out->written.size(), 4u);
  for (const char* f : {"results.csv", "summary.csv", "summary.json", "report.md"})
    EXPECT_TRUE(fs::exists(dir_ + "/" + f)) << f;

  Result<CsvTable> results = ReadCsv(dir_ + "/results.csv");
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->rows.size(), 4u);
  EXPECT_EQ(results->header.front(), "schema_version");
  EXPECT_EQ(results->rows[0][1], "pp4-tp8-ep4_c8_r1");
  EXPECT_DOUBLE_EQ(Cell(*results, 0, "input_tps"), 12800.00);  // 8 x 16,000 / 10 s
  EXPECT_DOUBLE_EQ(Cell(*results, 0, "ttft_p50_s"), 5.625);    // 4.5 x 10 / 8
  EXPECT_DOUBLE_EQ(Cell(*results, 0, "peak_gpu_mib"), 80300);  // stage 3 of PP4
  EXPECT_EQ(results->rows[0].back(), "true");

  Result<CsvTable> summary = ReadCsv(dir_ + "/summary.csv");
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->rows.size(), 2u);
  // PP8: 16,000 and 128,000 / 8.1 = 15,802.47 TPS; median 15,901.23.
  const double pp8_tps = (16000 + 128000 / 8.1) / 2;
  EXPECT_NEAR(Cell(*summary, 1, "input_tps_median"), pp8_tps, 0.006);
  EXPECT_NEAR(Cell(*summary, 1, "input_tps_spread"), (16000 - 128000 / 8.1) / pp8_tps, 1e-6);
  EXPECT_NEAR(Cell(*summary, 1, "input_tps_vs_baseline"), pp8_tps / 3257.96 - 1, 1e-6);
  EXPECT_NEAR(Cell(*summary, 1, "ttft_p50_vs_baseline"), (4.5 + 4.5 * 8.1 / 8) / 2 / 39.19 - 1,
              1e-6);
  EXPECT_DOUBLE_EQ(Cell(*summary, 1, "peak_gpu_mib"), 80700);
  EXPECT_DOUBLE_EQ(Cell(*summary, 1, "headroom_mib"), 85651 - 80700);
  EXPECT_DOUBLE_EQ(Cell(*summary, 1, "valid_repeats"), 2);

  const nlohmann::json& json = out->summary;
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["decision"]["primary"]["label"], "PP8/TP4/EP4");
  EXPECT_EQ(json["decision"]["fallback"]["label"], "PP4/TP8/EP4");
  EXPECT_EQ(json["baseline"]["rows"].size(), 2u);
  EXPECT_EQ(json["memory"][1]["stage_spread_mib"], 700.0);
  EXPECT_EQ(json["memory"][0]["stage_spread_mib"], 300.0);
  ASSERT_EQ(json["checks"]["samples"].size(), 4u);
  EXPECT_EQ(json["checks"]["samples"][0]["nodes"].size(), 4u);
  EXPECT_EQ(json["checks"]["samples"][0]["nodes"][3]["peak_used_mib"], 80300.0);  // 604: stage 3

  const std::string& md = out->markdown;
  auto has = [&md](const std::string& text) {
    EXPECT_NE(md.find(text), std::string::npos) << "missing: " << text << "\n" << md;
  };
  has("# ppsearch report: test-run (simulated)\n");
  has("| 1 / 32 / 4 (imported) |   8 |  3,257.96 |  39.19 s |  41.62 s |         baseline |");
  has("| 8 / 4 / 4             |   8 | 15,901.23 |");
  has("| 1 / 32 / 4 (imported) |              81,355 |        85,651 |         4,296 |     "
      "           - | -                        |");
  has("| 8 / 4 / 4             |              80,700 |        85,651 |         4,951 |     "
      "         700 | host 604 GPU 4 (stage 7) |");
  has("- Every completed sample (4) completed 8/8 requests.");
  has("- No OOM, traceback, NCCL failure, CUDA error, request error or engine failure was found");
  has("- PP8/TP4/EP4 input TPS varies by less than 1.3% at its concurrency point");
  has("- PP8/TP4/EP4 peak per PP stage: stage 0 80,000 MiB,");
  has("- PP1/TP32/EP4 (baseline): each TP group spans 4 nodes (601 602 603 604)");
  has("- PP4/TP8/EP4: each TP group is node-local (601 | 602 | 603 | 604)");
  has("- **Primary: PP8/TP4/EP4**: best input TPS (+");
  has("- **Fallback: PP4/TP8/EP4**: runner-up:");
  has("- warning: baseline CSV " + std::string(PPSEARCH_SOURCE_DIR) +
      "/data/baseline/pp1-tp32-ep4.csv measured 40 requests per sample at C=8, this run sends 8");
  has("```sh\nppsearch run examples/kimi-k3-pp-search.toml --set x\nppsearch report " + dir_);
  EXPECT_FALSE(out->warnings.empty());  // the comparability warnings go to stderr too

  // Rebuilding from the same evidence gives the same files.
  Result<ReportOutcome> again = BuildReport(dir_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->markdown, md);
}

// An earlier PP1 run with pp-max-micro-batch-size = 1 and no summary.csv:
// re-analysed from its evidence, imported as the baseline, and the flag
// named as a confounder.
TEST_F(BuildReportTest, ImportedRunIsReanalysedAndItsConfoundersWarned) {
  const std::string old = dir_ + "_old";
  target_ = old;
  WriteMetadata({"sweep.pp=[1]", "engine.args.pp-max-micro-batch-size=1"});
  WriteSample(Layout(1, 32, 4), 1, 40.0);  // 3,200 TPS
  WriteSample(Layout(1, 32, 4), 2, 40.4);  // 3,168.32 TPS
  target_ = dir_;
  WriteMetadata({"baseline.import_csv=\"\"", "baseline.import_run=\"" + old + "\""});
  WriteSample(kPp4, 1, 10.0);
  WriteSample(kPp4, 2, 10.2);
  WriteSample(kPp8, 1, 8.0);
  WriteSample(kPp8, 2, 8.1);
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportOk);
  const nlohmann::json& rows = out->summary["baseline"]["rows"];
  ASSERT_EQ(rows.size(), 1u);
  const double base_tps = (3200 + 128000 / 40.4) / 2;
  EXPECT_NEAR(rows[0]["input_tps_median"].get<double>(), base_tps, 1e-6);
  EXPECT_TRUE(rows[0]["imported"].get<bool>());
  const double pp8_tps = (16000 + 128000 / 8.1) / 2;
  EXPECT_NEAR(out->summary["points"][1]["input_tps_vs_baseline"].get<double>(),
              pp8_tps / base_tps - 1, 1e-9);
  const std::string warning = "baseline run " + old +
                              " differs in engine arg 'pp-max-micro-batch-size': '1' there, "
                              "'unset' here";
  EXPECT_NE(std::find(out->warnings.begin(), out->warnings.end(), warning), out->warnings.end());
  EXPECT_NE(out->markdown.find("- warning: " + warning), std::string::npos) << out->markdown;
  EXPECT_NE(out->markdown.find("| 1 / 32 / 4 (imported) |   8 |  3,184.16 |"), std::string::npos)
      << out->markdown;
}

TEST_F(BuildReportTest, MissingSampleMakesTheSweepIncompleteAndFindingsAreNamed) {
  WriteMetadata();
  WriteSample(kPp4, 1, 10.0);
  WriteSample(kPp4, 2, 10.2, "ok\n", 0, /*completed=*/false);
  WriteSample(kPp8, 1, 8.0);
  WriteSample(kPp8, 2, 8.1,
              "[2026-01-01 00:00:00] ready\ntorch.OutOfMemoryError: CUDA out of memory.\n");
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportIncomplete);
  EXPECT_FALSE(out->decision.any_qualifies());
  const std::string& md = out->markdown;
  EXPECT_NE(md.find("1 of 4 samples of the sweep did not complete: pp4-tp8-ep4_c8_r2 (started)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- PP8/TP4/EP4: CUDA out of memory in service/pp8-tp4-ep4_c8_r2/603.log:2"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**None qualifies**"), std::string::npos);
}

// A run narrowed to PP8 (spec.resolved.json) is complete without PP4.
TEST_F(BuildReportTest, TheResolvedSweepIsTheSweepTheRunRan) {
  WriteMetadata();
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/metadata/spec.resolved.json",
                              R"({"sweep": {"layouts": [{"pp": 8, "tp": 4, "ep": 4}],
                                  "concurrency": [8], "repeats": 2}})")
                  .ok());
  WriteSample(kPp8, 1, 8.0);
  WriteSample(kPp8, 2, 8.1);
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportOk);
  EXPECT_EQ(*out->decision.primary, kPp8);
  EXPECT_EQ(out->decision.verdicts.size(), 1u);
}

TEST_F(BuildReportTest, NoneQualifiesWhenEveryLayoutIsExcluded) {
  WriteMetadata();
  WriteSample(kPp4, 1, 10.0);
  WriteSample(kPp4, 2, 10.2, "ok\n", /*errors=*/3);
  WriteSample(kPp8, 1, 8.0, "NCCL error: remote process exited\n");
  WriteSample(kPp8, 2, 8.1);
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportNoneQualifies);
  EXPECT_NE(
      out->markdown.find(
          "- PP4/TP8/EP4: sample pp4-tp8-ep4_c8_r2 completed 5/8 requests (3 request errors)"),
      std::string::npos);
  EXPECT_NE(
      out->markdown.find("- PP8/TP4/EP4: NCCL failure in service/pp8-tp4-ep4_c8_r1/603.log:1"),
      std::string::npos);
}

TEST_F(BuildReportTest, MissingRunDirectoryOrMetadataIsAnErrorNamingThePath) {
  Result<ReportOutcome> none = BuildReport(dir_);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            dir_ +
                ": no such run directory (expected results/<RUN_ID>/ with metadata/run.json, "
                "metadata/spec.toml and manifest.jsonl)");
  fs::create_directories(dir_);
  Result<ReportOutcome> empty = BuildReport(dir_);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message,
            dir_ + ": not a ppsearch run directory: metadata/run.json is missing");
}

TEST_F(BuildReportTest, AnInvalidSpecIsReportedWithItsFile) {
  WriteMetadata({"workload.requests=\"many\""});
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find(dir_ + "/metadata/spec.toml (as " + ExampleSpecPath() + "): "),
            std::string::npos)
      << out.error().message;
}

TEST(LessThanPercent, RoundsUpToATenthOfAPercent) {
  EXPECT_EQ(LessThanPercent(0.0063), "0.7%");
  EXPECT_EQ(LessThanPercent(0.007), "0.8%");
  EXPECT_EQ(LessThanPercent(0.0), "0.1%");
  EXPECT_EQ(LessThanPercent(0.0124), "1.3%");
}

}  // namespace
}  // namespace ppsearch::report
