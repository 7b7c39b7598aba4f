// End-to-end: an evidence directory written by hand, as the runner writes
// it, and everything `ppsearch report` derives from it.

#include "report/build_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "analysis/analysis_testing.h"
#include "analysis/baseline.h"
#include "decide/steady_state.h"
#include "evidence/calibration_file.h"
#include "evidence/evidence.h"
#include "evidence/results_csv.h"
#include "nvidia_smi/gpu_memory.h"
#include "report/markdown.h"
#include "report/run_dir_testing.h"
#include "util/csv.h"
#include "util/files.h"
#include "util/sha256.h"

namespace ppsearch::report {
namespace {

namespace fs = std::filesystem;
using analysis::testing::EvenRecords;
using analysis::testing::ExampleSpecPath;
using analysis::testing::Layout;
using testing::Has;
using testing::kPp4;
using testing::kPp8;
using testing::Strings;

class BuildReportTest : public testing::RunDirTest {
 protected:
  // metadata/baseline.csv, a CSV of medians with `rows` under its header.
  void WriteBaselineCopy(const std::string& rows) {
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/metadata/baseline.csv",
                                "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median\n" + rows)
                    .ok());
  }
  // The healthy run, its spec importing a baseline CSV moved since, and the
  // copy of it the runner made at start.
  void WriteRunWithBaselineCopy(const std::string& rows) {
    WriteHealthyRun({"baseline.import_csv=\"" + dir_ + "_moved/pp1.csv\""});
    WriteBaselineCopy(rows);
  }
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
  ASSERT_EQ(out->written.size(), 5u);
  for (const char* f : {"results.csv", "summary.csv", "summary.json", "report.md", "report.html"})
    EXPECT_TRUE(fs::exists(dir_ + "/" + f)) << f;

  Result<CsvTable> results = ReadCsv(dir_ + "/results.csv");
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->rows.size(), 4u);
  EXPECT_EQ(results->header.front(), "schema_version");
  EXPECT_EQ(results->rows[0][1], "pp4-tp8-ep4_c8_r1");
  EXPECT_DOUBLE_EQ(Cell(*results, 0, "input_tps"), 12800.00);  // 8 x 16,000 / 10 s
  EXPECT_DOUBLE_EQ(Cell(*results, 0, "ttft_p50_s"), 5.625);    // 4.5 x 10 / 8
  EXPECT_DOUBLE_EQ(Cell(*results, 0, "peak_gpu_mib"), 80300);  // stage 3 of PP4
  EXPECT_EQ(results->rows[0][results->Column("simulated")], "true");
  EXPECT_EQ(results->rows[0][results->Column("verdict")], "ok");
  // One-token requests: the decode columns (after verdict) are empty.
  EXPECT_EQ(results->header[results->header.size() - 6], "itl_p99_s");
  EXPECT_EQ(results->header[results->header.size() - 5], "dp");  // the attention DP size
  EXPECT_EQ(results->rows[0][results->Column("dp")], "1");
  // Then goodput, the instance count, a deployment's pools and whether the
  // sample was synthesized from a CSV of medians, schema 1 growing at the end.
  EXPECT_EQ(results->header[results->header.size() - 4], "goodput_rps");
  EXPECT_EQ(results->header[results->header.size() - 3], "instances");
  EXPECT_EQ(results->rows[0][results->Column("instances")], "1");
  EXPECT_EQ(results->header[results->header.size() - 2], "pools");
  EXPECT_EQ(results->header.back(), "synthesized");
  EXPECT_EQ(results->rows[0][results->Column("synthesized")], "false");
  EXPECT_EQ(results->rows[0][results->Column("pools")], "") << "an aggregated layout";
  EXPECT_EQ(results->rows[0][results->Column("tpot_p50_s")], "");
  EXPECT_EQ(results->rows[0][results->Column("output_tps_per_gpu")], "");
  // The format's own reader reads what the report wrote.
  Result<std::vector<evidence::ResultRow>> rows = evidence::ReadResultsCsv(dir_ + "/results.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].sample, "pp4-tp8-ep4_c8_r1");
  ASSERT_TRUE((*rows)[0].figures.has_value());
  EXPECT_EQ((*rows)[0].figures->input_tps, 12800.00);
  EXPECT_FALSE((*rows)[0].figures->decode);

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
  has("| harmful  | workload | workload.requests | 8   | 40  |");  // once, as a confounder
  EXPECT_EQ(md.find("requests per sample"), std::string::npos) << "not a second time";
  has("**Verdict:** not comparable because of workload.requests (8 vs 40)");
  has("```sh\nppsearch run examples/kimi-k3-pp-search.toml --set x\nppsearch report " + dir_);
  EXPECT_FALSE(out->warnings.empty());  // the comparability warnings go to stderr too

  // Rebuilding from the same evidence gives the same files.
  Result<ReportOutcome> again = BuildReport(dir_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->markdown, md);
}

// A layout that ran with a layer split is recommended with it: deploying it
// with SGLang's even split leaves its stages other memory than measured.
TEST_F(BuildReportTest, ALayoutThatRanWithALayerSplitIsRecommendedWithIt) {
  WriteHealthyRun();
  Result<std::string> spec = ReadFile(ExampleSpecPath());
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/metadata/spec.toml",
                              *spec + "\n[engine.pp_layer_partition]\n8 = [12, 12, 12, 12, 12, 11, "
                                      "11, 11]\n")
                  .ok());
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string& md = out->markdown;
  EXPECT_NE(md.find("It ran with the layer split `SGLANG_PP_LAYER_PARTITION=12,12,12,12,12,11,11,"
                    "11` ([engine.pp_layer_partition] 8 = [12, 12, 12, 12, 12, 11, 11, 11]): "
                    "deploy it with the same split"),
            std::string::npos)
      << md;
  // The PP4 fallback ran with SGLang's even split: nothing to say.
  const size_t fallback = md.find("**Fallback: PP4/TP8/EP4**");
  ASSERT_NE(fallback, std::string::npos);
  EXPECT_EQ(md.substr(fallback, md.find('\n', fallback) - fallback).find("layer split"),
            std::string::npos);
}

// Whether a measured point's samples held their steady state is said by the
// rule every prediction is judged by: 8 requests at C=8 are one wave.
TEST_F(BuildReportTest, EachConcurrencyLevelIsJudgedByTheSteadyStateRule) {
  WriteHealthyRun();
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_NE(out->markdown.find("\n\nSteady state: " + decide::SteadyRule() +
                               "; short of it at C=8: 8 requests are 1.0 waves of 8, fewer than "
                               "4.\n\n"),
            std::string::npos)
      << out->markdown;

  WriteMetadata({"workload.requests=32"});
  Result<ReportOutcome> steady = BuildReport(dir_);
  ASSERT_TRUE(steady.ok()) << steady.error().message;
  EXPECT_NE(steady->markdown.find("\n\nSteady state: " + decide::SteadyRule() +
                                  "; every concurrency level holds it.\n\n"),
            std::string::npos)
      << steady->markdown;
}

// The report names the calibration a simulated run used, as the calibration
// file's reader reads it from run.json: every parameter, in the parameter
// table's order; one it cannot read is said to be so, not called uncalibrated.
TEST_F(BuildReportTest, TheCalibrationASimulatedRunUsedIsReadByItsOwnReader) {
  WriteHealthyRun();
  const std::string run_json = dir_ + "/metadata/run.json";
  const auto with_calibration = [&](const nlohmann::json& calibration) {
    Result<std::string> text = ReadFile(run_json);
    ASSERT_TRUE(text.ok());
    nlohmann::json run = nlohmann::json::parse(*text);
    run["calibration"] = calibration;
    ASSERT_TRUE(WriteFileAtomic(run_json, run.dump(2)).ok());
  };
  nlohmann::json parameters = nlohmann::json::object();
  for (const cost::ParamInfo& p : cost::AllParams()) parameters[std::string(p.name)] = p.nominal;
  parameters["memory_bw_eff"] = 0.75;
  parameters["dense_gemm_eff"] = 0.8125;
  with_calibration({{"schema", evidence::kCalibrationSchema}, {"parameters", parameters}});
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_NE(out->markdown.find(" Calibration: dense_gemm_eff = 0.8125, fp8_gemm_eff = 0.85, "
                               "moe_gemm_eff = 0.85, attention_eff = 0.85, "
                               "linear_attention_eff = 0.85, memory_bw_eff = 0.75, "),
            std::string::npos)
      << out->markdown;
  with_calibration(
      {{"schema", "ppsearch.calibration/1"}, {"parameters", {{"compute_scale", 1.4}}}});
  out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_NE(out->markdown.find(" Calibration not readable: run.json's calibration: schema "
                               "\"ppsearch.calibration/1\", expected schema"),
            std::string::npos)
      << out->markdown;
  EXPECT_EQ(out->markdown.find("Uncalibrated"), std::string::npos);
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
  // The confounder check of `ppsearch compare`: this run (A) against the import (B).
  const std::string verdict = "not comparable because of pp-max-micro-batch-size (unset vs 1)";
  const std::string warning = "baseline " + old + ": " + verdict;
  EXPECT_NE(std::find(out->warnings.begin(), out->warnings.end(), warning), out->warnings.end());
  EXPECT_NE(out->markdown.find("**Verdict:** " + verdict + "\n"), std::string::npos)
      << out->markdown;
  EXPECT_NE(out->markdown.find("| harmful | server flag | pp-max-micro-batch-size | unset | 1 "),
            std::string::npos)
      << out->markdown;
  const nlohmann::json& check = out->summary["checks"]["baseline_confounders"];
  EXPECT_FALSE(check["comparable"].get<bool>());
  EXPECT_EQ(check["verdict"], verdict);
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
  // A sample that did not end has no verdict, however whole its records
  // look: it is missing, not "ok".
  EXPECT_NE(md.find("- Verdicts: 2 ok, 1 log_findings.\n"), std::string::npos) << md;
  const nlohmann::json& started = out->summary["checks"]["samples"][1];
  ASSERT_EQ(started["sample"], "pp4-tp8-ep4_c8_r2");
  EXPECT_TRUE(started["verdict"].is_null()) << started.dump();
  EXPECT_EQ(started["detail"], "did not end (manifest: started): no verdict");
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

// PP8's repeats spread by 11.76%: over the limit in a closed loop; in an
// open loop each repeat's arrivals set that, so it is shown, not judged.
TEST_F(BuildReportTest, TheRepeatSpreadOfAnOpenLoopIsShownNotJudged) {
  WriteMetadata({"workload.request_rate=0.5"});
  WriteSample(kPp4, 1, 10.0);
  WriteSample(kPp4, 2, 10.2);
  WriteSample(kPp8, 1, 8.0);
  WriteSample(kPp8, 2, 9.0);
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportOk);
  const std::string& md = out->markdown;
  EXPECT_NE(md.find("max_repeat_spread 5.00% (not judged in an open loop)"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- max_repeat_spread is not judged: each repeat of an open loop draws its own "
                    "Poisson arrivals, which set how much its figures vary."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- PP8/TP4/EP4 input TPS varies by less than 11.8% at its concurrency point"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("varies by more than the"), std::string::npos) << md;
  EXPECT_NE(md.find("**Fallback: PP"), std::string::npos) << md;
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
  EXPECT_NE(out.error().message.find(dir_ + "/metadata/spec.toml (the run's copy of " +
                                     ExampleSpecPath() + "): "),
            std::string::npos)
      << out.error().message;
  // A mistake in the copy is at the copy's line, not the original's: the
  // original may have changed or moved since the run.
  WriteMetadata();
  std::string copy = ReadFile(dir_ + "/metadata/spec.toml").value();
  copy.replace(copy.find("input_tokens = 16000"), 20, "input_tokens = -1");
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/metadata/spec.toml", copy).ok());
  Result<ReportOutcome> bad = BuildReport(dir_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("): " + dir_ + "/metadata/spec.toml:"), std::string::npos)
      << bad.error().message;
}

// Bytes that are not UTF-8 in a server log and in a raw record: the report
// is written (invalid bytes replaced), and the finding keeps its file:line.
TEST_F(BuildReportTest, InvalidUtf8InTheEvidenceIsReplacedNotFatal) {
  WriteMetadata();
  WriteSample(kPp4, 1, 10.0);
  WriteSample(kPp4, 2, 10.2);
  WriteSample(kPp8, 1, 8.0, "ready\nNCCL error: bad \xff\xfe bytes\n");
  WriteSample(kPp8, 2, 8.1);
  const evidence::RunPaths paths{dir_};
  const evidence::SampleId pp4_r2{kPp4, 8, 2};
  ASSERT_TRUE(AppendLine(paths.service(pp4_r2, "601"), "\xff\xfe").ok());
  Result<std::string> raw = ReadFile(paths.raw(pp4_r2));
  ASSERT_TRUE(raw.ok());
  std::string broken = *raw;
  broken.replace(broken.find("\"error\":\"\""), 10, "\"error\":\"\xff\"");
  ASSERT_TRUE(WriteFileAtomic(paths.raw(pp4_r2), broken).ok());

  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportNoneQualifies);
  Result<std::string> json_text = ReadFile(dir_ + "/summary.json");
  ASSERT_TRUE(json_text.ok());
  const nlohmann::json json = nlohmann::json::parse(*json_text);  // valid UTF-8 again
  const nlohmann::json& finding = json["checks"]["log_findings"][0];
  EXPECT_EQ(finding["file"], "service/pp8-tp4-ep4_c8_r1/603.log");
  EXPECT_EQ(finding["line"], 2);
  EXPECT_EQ(finding["text"], "NCCL error: bad \xef\xbf\xbd\xef\xbf\xbd bytes");
  const std::string problem = json["checks"]["samples"][1]["problems"][0];
  EXPECT_EQ(problem.rfind("raw/pp4-tp8-ep4_c8_r2.jsonl:1: not valid JSON: ", 0), 0u) << problem;
}

// Every host of cluster.hosts leaves a log and a snapshot per sample; one
// missing or truncated is a named problem and makes the sample not valid.
TEST_F(BuildReportTest, MissingOrTruncatedNodeEvidenceIsAProblem) {
  WriteHealthyRun();
  const evidence::RunPaths paths{dir_};
  fs::remove(paths.service({kPp8, 8, 1}, "602"));
  fs::remove(paths.gpu({kPp8, 8, 2}, "604"));
  Result<std::string> csv = ReadFile(paths.gpu({kPp4, 8, 1}, "601"));
  ASSERT_TRUE(csv.ok());
  ASSERT_TRUE(WriteFileAtomic(paths.gpu({kPp4, 8, 1}, "601"), csv->substr(0, 120)).ok());

  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, kReportNoneQualifies);
  const nlohmann::json& samples = out->summary["checks"]["samples"];
  EXPECT_EQ(Strings(samples[2]["problems"]),
            std::vector<std::string>{"service/pp8-tp4-ep4_c8_r1/602.log is missing: node 602's "
                                     "failures could not be audited"});
  EXPECT_FALSE(samples[2]["valid"].get<bool>());
  EXPECT_EQ(Strings(samples[3]["problems"]),
            std::vector<std::string>{"gpu/pp8-tp4-ep4_c8_r2/604.csv is missing: node 604's "
                                     "memory is not in the headroom check"});
  ASSERT_EQ(samples[0]["problems"].size(), 1u);
  const std::string truncated = samples[0]["problems"][0];
  EXPECT_EQ(truncated.rfind("gpu/pp4-tp8-ep4_c8_r1/601.csv", 0), 0u) << truncated;
  const std::string& md = out->markdown;
  EXPECT_NE(md.find("- Evidence problem in pp8-tp4-ep4_c8_r1: service/pp8-tp4-ep4_c8_r1/602.log "
                    "is missing: node 602's failures could not be audited.\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("every node's log scanned"), std::string::npos) << md;
  EXPECT_NE(md.find("but 1 node log of completed samples is missing"), std::string::npos) << md;
}

TEST_F(BuildReportTest, ManifestDamageIsNamedByLineAndForeignSamplesAreLeftOut) {
  WriteHealthyRun();
  const evidence::RunPaths paths{dir_};
  ASSERT_TRUE(AppendLine(paths.manifest(), "{not json").ok());  // line 9
  ASSERT_TRUE(AppendLine(paths.manifest(),                      // line 10
                         R"({"sample": "pp8-tp4-ep4_c8_r1", "state": "complete"})")
                  .ok());
  ASSERT_TRUE(AppendLine(paths.manifest(),  // line 11
                         R"({"sample": "pp2-tp16-ep4_c8_r1", "state": "completed"})")
                  .ok());
  ASSERT_TRUE(AppendLine(paths.manifest(), R"({"sample": "pp4-tp8-ep4_c8_r2", "st)").ok());
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(Strings(out->summary["checks"]["evidence_problems"]),
            (std::vector<std::string>{
                "manifest.jsonl:9: not valid JSON; the line was skipped",
                "manifest.jsonl:10: sample pp8-tp4-ep4_c8_r1: unknown state 'complete' (did you "
                "mean 'completed'?); expected one of started, completed, failed, interrupted; "
                "the line was skipped",
                "manifest.jsonl:11: sample pp2-tp16-ep4_c8_r1 is not in the sweep of "
                "metadata/spec.toml (4 samples); it was left out of the results"}));
  EXPECT_TRUE(Has(out->warnings,
                  "manifest.jsonl:12: the last line is torn (a crash mid-write?) and was skipped"));
  Result<CsvTable> results = ReadCsv(dir_ + "/results.csv");
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->rows.size(), 4u);
  EXPECT_NE(out->markdown.find("- Evidence problem: manifest.jsonl:9: not valid JSON; the line "
                               "was skipped.\n"),
            std::string::npos)
      << out->markdown;
}

TEST_F(BuildReportTest, AnEmptyRawFileIsAProblemNotZeroCompletedRequests) {
  WriteHealthyRun();
  ASSERT_TRUE(WriteFileAtomic(evidence::RunPaths{dir_}.raw({kPp8, 8, 2}), "").ok());
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  const nlohmann::json& sample = out->summary["checks"]["samples"][3];
  EXPECT_EQ(Strings(sample["problems"]),
            std::vector<std::string>{
                "raw/pp8-tp4-ep4_c8_r2.jsonl is empty: the sample has no request record"});
  EXPECT_EQ(sample["verdict"], "requests_failed");
  EXPECT_EQ(sample["detail"], "0 of 8 requests completed (8 without a record)");
}

// The runner's verdict on the manifest stands; the evidence decides the rest.
TEST_F(BuildReportTest, VerdictsAppearInEveryOutput) {
  WriteMetadata();
  WriteSample(kPp4, 1, 10.0);
  WriteSample(kPp4, 2, 10.2, "ready\n", /*errors=*/2);
  WriteSample(kPp8, 1, 8.0);
  WriteSample(kPp8, 2, 8.1, "ready\n", 0, /*completed=*/false);
  ASSERT_TRUE(
      evidence::AppendManifest(
          evidence::RunPaths{dir_}, {kPp8, 8, 2}, evidence::SampleState::kFailed,
          {{"verdict", "engine_died"}, {"detail", "node 603 exited with code 1 after 12 s"}})
          .ok());
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  Result<CsvTable> results = ReadCsv(dir_ + "/results.csv");
  ASSERT_TRUE(results.ok());
  const int verdict = results->Column("verdict");
  ASSERT_GE(verdict, 0);
  ASSERT_EQ(results->rows.size(), 3u);
  EXPECT_EQ(results->rows[0][verdict], "ok");
  EXPECT_EQ(results->rows[1][verdict], "requests_failed");
  const nlohmann::json& samples = out->summary["checks"]["samples"];
  EXPECT_EQ(samples[3]["verdict"], "engine_died");
  EXPECT_EQ(samples[3]["detail"], "node 603 exited with code 1 after 12 s");
  EXPECT_EQ(samples[1]["detail"], "6 of 8 requests completed (2 request errors)");
  const std::string& md = out->markdown;
  EXPECT_NE(md.find("- Verdicts: 2 ok, 1 engine_died, 1 requests_failed.\n"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- pp4-tp8-ep4_c8_r2: requests_failed: 6 of 8 requests completed (2 request "
                    "errors).\n"),
            std::string::npos);
  EXPECT_NE(md.find("- pp8-tp4-ep4_c8_r2: engine_died: node 603 exited with code 1 after 12 s.\n"),
            std::string::npos);
  EXPECT_NE(md.find("- PP8/TP4/EP4: sample pp8-tp4-ep4_c8_r2 failed (manifest): engine_died: node "
                    "603 exited with code 1 after 12 s"),
            std::string::npos)
      << md;
}

// A PP1 baseline neither swept nor imported: said plainly, not silent dashes.
TEST_F(BuildReportTest, ABaselineWithNoRowsIsSaidPlainly) {
  WriteMetadata({"baseline.import_csv=\"\""});
  WriteSample(kPp4, 1, 10.0);
  WriteSample(kPp4, 2, 10.2);
  WriteSample(kPp8, 1, 8.0);
  WriteSample(kPp8, 2, 8.1);
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string note =
      "the baseline PP1/TP32/EP4 has no rows: it is not in this run's sweep and no baseline is "
      "imported (set baseline.import_csv or baseline.import_run, or sweep it); every delta is "
      "'-'";
  EXPECT_EQ(out->summary["baseline"]["note"], note);
  EXPECT_EQ(out->summary["baseline"]["rows"].size(), 0u);
  EXPECT_TRUE(Has(out->warnings, note));
  EXPECT_NE(out->markdown.find("**No baseline rows**: " + note + "."), std::string::npos)
      << out->markdown;
}

// A baseline swept in this run whose repeats at a concurrency completed no
// request gives no medians there: the deltas are '-', said plainly, not
// silent.
TEST_F(BuildReportTest, ABaselineWithoutMediansIsSaidPlainly) {
  WriteMetadata({"baseline.import_csv=\"\"", "baseline.layout={pp=4,tp=8,ep=4}"});
  WriteSample(kPp4, 1, 10.0, "[2026-01-01 00:00:00] ready\n", /*errors=*/8);
  WriteSample(kPp4, 2, 10.2, "[2026-01-01 00:00:00] ready\n", /*errors=*/8);
  WriteSample(kPp8, 1, 8.0);
  WriteSample(kPp8, 2, 8.1);
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->summary["baseline"]["rows"].size(), 1u);
  const std::string note =
      "the baseline PP4/TP8/EP4 gives no medians where no repeat of it completed a request at "
      "C=8; the deltas there are '-'";
  EXPECT_TRUE(Has(out->warnings, note)) << ::testing::PrintToString(out->warnings);
  EXPECT_NE(out->markdown.find("warning: " + note), std::string::npos) << out->markdown;
  EXPECT_TRUE(out->summary["points"][1]["input_tps_vs_baseline"].is_null());
}

// The copy the runner made at run start wins over the spec's path, which may
// have moved since.
TEST_F(BuildReportTest, TheBaselineCopyInMetadataIsPreferred) {
  WriteRunWithBaselineCopy("1,32,4,8,4000,30\n");
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  const nlohmann::json& baseline = out->summary["baseline"];
  ASSERT_EQ(baseline["rows"].size(), 1u);
  EXPECT_EQ(baseline["rows"][0]["input_tps_median"], 4000.0);
  EXPECT_EQ(baseline["file"], dir_ + "/metadata/baseline.csv");
  EXPECT_EQ(baseline["note"], "baseline rows read from metadata/baseline.csv, the copy of " + dir_ +
                                  "_moved/pp1.csv made at run start");
  EXPECT_NE(out->markdown.find("Baseline rows read from metadata/baseline.csv"), std::string::npos);
}

// run.json holds the copy's hash: a copy edited since is not imported (its
// rows would change every delta), and the report says so.
TEST_F(BuildReportTest, ABaselineCopyEditedSinceTheRunStartedIsNotImported) {
  WriteRunWithBaselineCopy("1,32,4,8,4000,30\n");
  const std::string copy = dir_ + "/metadata/baseline.csv";
  const std::string run_json = dir_ + "/metadata/run.json";
  nlohmann::json run = nlohmann::json::parse(*ReadFile(run_json));
  run["baseline_sha256"] = *Sha256File(copy);
  ASSERT_TRUE(WriteFileAtomic(run_json, run.dump(2)).ok());
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->summary["baseline"]["rows"].size(), 1u) << "the copy as it was made";
  WriteBaselineCopy("1,32,4,8,2000,30\n");
  out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->summary["baseline"]["rows"].empty()) << out->summary["baseline"].dump();
  EXPECT_NE(out->markdown.find("baseline CSV not imported: metadata/baseline.csv is not what the "
                               "run copied at start (SHA-256 "),
            std::string::npos)
      << out->markdown;
  EXPECT_TRUE(out->summary["points"][0]["input_tps_vs_baseline"].is_null());
  // Nor is the spec's source read in its place once the copy is gone.
  ASSERT_TRUE(fs::remove(copy));
  out = BuildReport(dir_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->summary["baseline"]["rows"].empty()) << out->summary["baseline"].dump();
  EXPECT_NE(out->markdown.find("(metadata/baseline.csv, the run's copy, is missing) is not what "
                               "the run copied at start"),
            std::string::npos)
      << out->markdown;
}

TEST_F(BuildReportTest, CopyBaselineIntoCopiesTheImportIntoMetadata) {
  spec::Spec spec = analysis::testing::SmallSweepSpec();
  const Result<std::optional<std::string>> copied = analysis::CopyBaselineInto(spec, dir_);
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ(*ReadFile(dir_ + "/metadata/baseline.csv"), *ReadFile(spec.baseline.import_csv));
  EXPECT_EQ(copied->value(), *Sha256File(spec.baseline.import_csv));
  spec.baseline.import_csv = dir_ + "/none.csv";
  Result<std::string> none = ReadFile(dir_ + "/none.csv");
  const Result<std::optional<std::string>> s = analysis::CopyBaselineInto(spec, dir_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "baseline not copied into " + dir_ + "/metadata/baseline.csv: " + none.error().message);
}

TEST_F(BuildReportTest, ATypeMismatchInRunJsonIsAnErrorNamingTheFile) {
  WriteHealthyRun();
  Result<std::string> text = ReadFile(dir_ + "/metadata/run.json");
  ASSERT_TRUE(text.ok());
  nlohmann::json run = nlohmann::json::parse(*text);
  run["run_id"] = 7;
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/metadata/run.json", run.dump()).ok());
  Result<ReportOutcome> out = BuildReport(dir_);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message,
            dir_ + "/metadata/run.json: key 'run_id': expected a string, got number 7");
}

TEST(LessThanPercent, RoundsUpToATenthOfAPercent) {
  EXPECT_EQ(LessThanPercent(0.0063), "0.7%");
  EXPECT_EQ(LessThanPercent(0.007), "0.8%");
  EXPECT_EQ(LessThanPercent(0.0), "0.1%");
  EXPECT_EQ(LessThanPercent(0.0124), "1.3%");
}

}  // namespace
}  // namespace ppsearch::report
