#include "analysis/sample.h"

#include <gtest/gtest.h>

#include "analysis/analysis_testing.h"

namespace ppsearch::analysis {
namespace {

using testing::EvenRecords;
using testing::Layout;

// TTFTs 1..8 s over 8 s, 8 x 16,000 tokens: numpy gives mean 4.5,
// p50 4.5 (h = 3.5), p95 7.65 (h = 6.65), p99 7.93 (h = 6.93).
TEST(AnalyseSample, StatisticsMatchHandComputedValues) {
  SampleInputs in;
  in.id = {Layout(8, 4, 4), 8, 1};
  in.records = EvenRecords(8, 16000, 8.0);
  in.requests_expected = 8;
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_EQ(s.name, "pp8-tp4-ep4_c8_r1");
  EXPECT_EQ(s.metrics.requests_completed, 8);
  EXPECT_EQ(s.requests_total(), 8);
  EXPECT_DOUBLE_EQ(s.metrics.input_tps, 16000.0);
  EXPECT_NEAR(s.metrics.ttft_s.mean, 4.5, 1e-9);
  EXPECT_NEAR(s.metrics.ttft_s.p50, 4.5, 1e-9);
  EXPECT_NEAR(s.metrics.ttft_s.p95, 7.65, 1e-9);
  EXPECT_NEAR(s.metrics.ttft_s.p99, 7.93, 1e-9);
  EXPECT_NEAR(s.metrics.e2e_s.p50, 4.5, 1e-9);
  EXPECT_TRUE(s.all_requests_ok());
  EXPECT_TRUE(s.valid());
}

// One failed request: 7 ok requests over the same 8 s window (the failed
// one ended last), so 7 x 16,000 / 8 = 14,000 tokens/s and TTFT p50 = 4 s.
TEST(AnalyseSample, RequestErrorsAreCountedAndInvalidateTheSample) {
  SampleInputs in;
  in.id = {Layout(8, 4, 4), 8, 1};
  in.records = EvenRecords(8, 16000, 8.0, /*errors=*/1);
  in.requests_expected = 8;
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_EQ(s.metrics.requests_completed, 7);
  EXPECT_EQ(s.metrics.request_errors, 1);
  EXPECT_DOUBLE_EQ(s.metrics.input_tps, 14000.0);
  EXPECT_NEAR(s.metrics.ttft_s.p50, 4.0, 1e-9);
  EXPECT_FALSE(s.all_requests_ok());
  EXPECT_FALSE(s.valid());
}

TEST(AnalyseSample, FewerRecordsThanTheSpecAsksForIsAShortSample) {
  SampleInputs in;
  in.id = {Layout(8, 4, 4), 8, 1};
  in.records = EvenRecords(6, 16000, 6.0);
  in.requests_expected = 8;
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_EQ(s.metrics.requests_completed, 6);
  EXPECT_EQ(s.requests_total(), 8);
  EXPECT_FALSE(s.all_requests_ok());
}

TEST(AnalyseSample, PromptLengthMismatchesAreCounted) {
  SampleInputs in;
  in.id = {Layout(8, 4, 4), 8, 1};
  in.records = EvenRecords(8, 16000, 8.0);
  in.records[2].reported_input_tokens = 15999;
  in.records[3].reported_input_tokens = -1;  // unknown: not a mismatch
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_EQ(s.prompt_length_mismatches, 1);
}

// Two snapshots in one node's CSV: each GPU keeps its highest reading.
TEST(AnalyseSample, PeakGpuMemoryIsTheMaxOverSnapshotsAndHeadroomTheWorstRank) {
  SampleInputs in;
  in.id = {Layout(8, 4, 4), 8, 1};
  Result<std::vector<nvidia_smi::GpuMemory>> first = nvidia_smi::ParseGpuMemoryCsv(
      "0, GPU-a, NVIDIA RTX 6000D, 70000, 85651\n"
      "1, GPU-b, NVIDIA RTX 6000D, 80000, 85651\n"
      "0, GPU-a, NVIDIA RTX 6000D, 81355, 85651\n"
      "1, GPU-b, NVIDIA RTX 6000D, 79000, 85651\n");
  ASSERT_TRUE(first.ok());
  in.gpu.push_back({"601", 0, *first});
  in.logs.push_back({"service/x/601.log", "ok\nNCCL WARN Net : Connection closed\n"});
  SampleAnalysis s = AnalyseSample(in);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(s.gpus[0].used_mib, 81355);
  EXPECT_DOUBLE_EQ(s.gpus[1].used_mib, 80000);
  EXPECT_DOUBLE_EQ(*s.peak_gpu_mib, 81355);
  EXPECT_DOUBLE_EQ(*s.gpu_total_mib, 85651);
  EXPECT_DOUBLE_EQ(*s.headroom_mib, 4296);
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0].host, "601");
  EXPECT_DOUBLE_EQ(s.nodes[0].used_mib, 81355);
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].Where(), "service/x/601.log:2");
}

SampleInputs HealthyInputs() {
  SampleInputs in;
  in.id = {Layout(8, 4, 4), 8, 1};
  in.records = EvenRecords(8, 16000, 8.0);
  in.requests_expected = 8;
  in.output_tokens_asked = 1;
  in.logs.push_back({"service/x/601.log", "ready\n"});
  return in;
}

TEST(SampleVerdict, OkWhenEveryRequestIsOkAndNoLogFinding) {
  SampleAnalysis s = AnalyseSample(HealthyInputs());
  EXPECT_STREQ(evidence::VerdictName(SampleVerdict(s)), "ok");
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "ok");
  EXPECT_EQ(s.detail, "every request ok, no log finding");
  EXPECT_TRUE(s.valid());
}

TEST(SampleVerdict, AnEngineVerdictOtherThanOkStands) {
  for (const char* verdict :
       {"engine_failed_to_start", "engine_died", "timeout", "preflight_failed"}) {
    SampleInputs in = HealthyInputs();
    in.engine_verdict = evidence::ParseVerdict(verdict);
    in.engine_detail = "node 603: no /health after 600 s";
    SampleAnalysis s = AnalyseSample(in);
    EXPECT_STREQ(evidence::VerdictName(s.verdict), verdict);
    EXPECT_EQ(s.detail, "node 603: no /health after 600 s");
    EXPECT_FALSE(s.valid());
  }
  SampleInputs in = HealthyInputs();
  in.engine_verdict = evidence::ParseVerdict("ok");
  EXPECT_STREQ(evidence::VerdictName(AnalyseSample(in).verdict), "ok");
  in.engine_verdict = evidence::ParseVerdict("log_findings");  // the evidence decides the rest
  EXPECT_STREQ(evidence::VerdictName(AnalyseSample(in).verdict), "ok");
}

TEST(SampleVerdict, FailedRequestsBeatLogFindings) {
  SampleInputs in = HealthyInputs();
  in.records = EvenRecords(8, 16000, 8.0, /*errors=*/3);
  in.logs.push_back({"service/x/603.log", "ok\ntorch.OutOfMemoryError: CUDA out of memory\n"});
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "requests_failed");
  EXPECT_EQ(s.detail, "5 of 8 requests completed (3 request errors)");
}

TEST(SampleVerdict, LogFindingsWhenRequestsAreFine) {
  SampleInputs in = HealthyInputs();
  in.logs.push_back({"service/x/603.log", "ok\ntorch.OutOfMemoryError: CUDA out of memory\n"});
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "log_findings");
  EXPECT_EQ(s.detail, "CUDA out of memory in service/x/603.log:2");
  EXPECT_FALSE(s.valid());
}

// The validity gate: ok requests that measured something else.
TEST(SampleVerdict, TheValidityGateFailsTheSample) {
  SampleInputs empty = HealthyInputs();
  empty.records[0].output_tokens = 0;
  empty.records[1].output_tokens = 0;
  SampleAnalysis s = AnalyseSample(empty);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "requests_failed");
  EXPECT_EQ(s.detail, "2 ok requests returned no generated token (asked for 1)");
  empty.output_tokens_asked = 0;  // the workload asked for none: nothing to check
  EXPECT_STREQ(evidence::VerdictName(AnalyseSample(empty).verdict), "ok");

  SampleInputs mismatch = HealthyInputs();
  mismatch.records[2].reported_input_tokens = 15999;
  s = AnalyseSample(mismatch);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "requests_failed");
  EXPECT_EQ(s.detail, "1 request had a server-reported prompt length different from the one sent");

  SampleInputs short_window = HealthyInputs();
  short_window.min_window_s = 10;
  s = AnalyseSample(short_window);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "requests_failed");
  EXPECT_EQ(s.detail, "the measured window of 8.000 s is shorter than the 10 s minimum");
  short_window.min_window_s = 8;
  EXPECT_STREQ(evidence::VerdictName(AnalyseSample(short_window).verdict), "ok");
}

TEST(SampleVerdict, MissingRecordsAreFailedRequests) {
  SampleInputs in = HealthyInputs();
  in.records.clear();
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "requests_failed");
  EXPECT_EQ(s.detail, "0 of 8 requests completed (8 without a record)");
}

TEST(SampleVerdict, EvidenceProblemsInvalidateAnOkSample) {
  SampleInputs in = HealthyInputs();
  in.problems.push_back("gpu/x/602.csv is missing");
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "ok");
  EXPECT_FALSE(s.valid());
}

// The runner's verdict comes from the records in memory, through the same
// checks the report applies to the file: a doubled file is not 16 requests.
TEST(SampleVerdict, ImpossibleRecordsAreInvalidEvidenceAndMeasureNothing) {
  SampleInputs in = HealthyInputs();
  in.deadline_s = 100;
  const std::vector<workload::RequestRecord> again = in.records;
  in.records.insert(in.records.end(), again.begin(), again.end());
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "invalid_evidence");
  EXPECT_EQ(s.detail,
            "the evidence cannot be true (duplicate_request_id, more_records_than_requests, "
            "more_in_flight_than_concurrency); its numbers are left out");
  ASSERT_EQ(s.invalid_evidence.size(), 3u);
  EXPECT_EQ(s.invalid_evidence[0].file, "raw/pp8-tp4-ep4_c8_r1.jsonl");
  EXPECT_EQ(s.problems.size(), 3u);
  EXPECT_FALSE(s.trustworthy());
  EXPECT_FALSE(s.valid());
  EXPECT_EQ(s.metrics.requests_completed, 0);  // not the 16 of the doubled file
  EXPECT_DOUBLE_EQ(s.metrics.input_tps, 0);
}

TEST(SampleVerdict, ATimePastTheDeadlineIsInvalidEvidenceAndAFailedSampleIsNotHeldToIt) {
  SampleInputs in = HealthyInputs();
  in.deadline_s = 5;  // the records end at up to 8 s
  EXPECT_STREQ(evidence::VerdictName(AnalyseSample(in).verdict), "invalid_evidence");
  in.state = evidence::SampleState::kFailed;
  in.engine_verdict = evidence::Verdict::kEngineDied;
  SampleAnalysis failed = AnalyseSample(in);
  EXPECT_STREQ(evidence::VerdictName(failed.verdict), "engine_died");
  EXPECT_TRUE(failed.problems.empty());
  EXPECT_DOUBLE_EQ(failed.metrics.input_tps, 0);  // its impossible numbers are not computed
}

TEST(SampleVerdict, ImpossibleGpuMemoryIsNoPeak) {
  SampleInputs in = HealthyInputs();
  in.gpu.push_back({"601", 0, {{0, "GPU-0", "NVIDIA RTX 6000D", 1e308, 85651.0, "575"}}});
  SampleAnalysis s = AnalyseSample(in);
  EXPECT_STREQ(evidence::VerdictName(s.verdict), "invalid_evidence");
  ASSERT_EQ(s.invalid_evidence.size(), 1u);
  EXPECT_EQ(s.invalid_evidence[0].Text().substr(0, 41),
            "gpu/pp8-tp4-ep4_c8_r1/601.csv: gpu_memory");
  EXPECT_FALSE(s.peak_gpu_mib.has_value());
}

}  // namespace
}  // namespace ppsearch::analysis
