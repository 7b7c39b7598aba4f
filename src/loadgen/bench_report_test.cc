#include "loadgen/bench_report.h"

#include <gtest/gtest.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evidence/evidence.h"

namespace ppsearch::loadgen {
namespace {

using workload::RequestRecord;
using workload::RequestStatus;

BenchResult TwoRequests() {
  BenchResult r;
  RequestRecord ok;
  ok.id = 0;
  ok.send_ns = 0;
  ok.first_token_ns = 200'000'000;
  ok.end_ns = 250'000'000;
  ok.input_tokens = 1000;
  ok.reported_input_tokens = 1000;
  ok.output_tokens = 1;
  ok.http_status = 200;
  RequestRecord bad;
  bad.id = 1;
  bad.send_ns = 10'000'000;
  bad.end_ns = 500'000'000;
  bad.input_tokens = 1000;
  bad.status = RequestStatus::kTimeout;
  bad.error = "no complete answer within 490 ms (no token arrived)";
  r.records = {ok, bad};
  r.metrics = stats::ComputeSampleMetrics(r.records);
  return r;
}

TEST(BenchReportTest, TextHasMetadataTwoHeadersOneRowAndAVerdict) {
  BenchOptions o;
  o.url = "http://127.0.0.1:30000";
  o.num_requests = 2;
  o.concurrency = 2;
  o.input_tokens = 1000;
  const std::string text = RenderBenchText(o, TwoRequests());
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 10u) << text;
  EXPECT_EQ(lines[0], "# ppsearch bench");
  EXPECT_EQ(lines[1], "# url: http://127.0.0.1:30000  api: native (POST /generate)");
  EXPECT_EQ(lines[2],
            "# closed loop, concurrency 2; 2 requests; warm-up 0 (0 ok); cache flush: no");
  EXPECT_EQ(lines[5].substr(0, 24), "# requests   ok   errors");
  EXPECT_EQ(lines[6].substr(0, 35), "#" + std::string(31, ' ') + "(s)") << lines[6];
  EXPECT_EQ(lines[7].substr(0, 24), "         2    1        1") << lines[7];
  EXPECT_NE(lines[7].find("  200.00  "), std::string::npos) << lines[7];  // TTFT 200 ms
  EXPECT_EQ(
      lines[8],
      "# errors: 1 timeout; first: request 1: no complete answer within 490 ms (no token arrived)");
  EXPECT_EQ(lines[9], "# 1/2 requests ok, 1 errors, 0 prompt-length mismatches");
}

TEST(BenchReportTest, SummaryAndRecords) {
  BenchOptions o;
  o.url = "http://h:1";
  const BenchResult r = TwoRequests();
  const evidence::BenchClientSummary c = BenchClientSummaryOf(o, r);
  EXPECT_EQ(c.url, "http://h:1");
  EXPECT_EQ(c.requests_completed, 1);
  EXPECT_EQ(c.request_errors, 1);
  EXPECT_DOUBLE_EQ(c.ttft_s.p50, 0.2);
  EXPECT_EQ(c.routing, "") << "one server: no routing";
  const std::string jsonl = evidence::RecordsToJsonl(r.records);
  const size_t newline = jsonl.find('\n');
  const auto first = nlohmann::json::parse(jsonl.substr(0, newline));
  EXPECT_EQ(first["status"], "ok");
  EXPECT_DOUBLE_EQ(first["ttft_s"].get<double>(), 0.2);
  const auto second = nlohmann::json::parse(jsonl.substr(newline + 1));
  EXPECT_EQ(second["status"], "timeout");
  EXPECT_TRUE(second["ttft_s"].is_null());
  EXPECT_EQ(second["first_token_ns"], -1);
}

// Every request failed: no latency was measured, and the outputs say so
// rather than report an instant answer.
TEST(BenchReportTest, ASampleWithoutACompletedRequestHasNoLatencies) {
  BenchOptions o;
  o.url = "http://h:1";
  o.num_requests = 1;
  o.concurrency = 1;
  BenchResult r = TwoRequests();
  r.records.erase(r.records.begin());
  r.metrics = stats::ComputeSampleMetrics(r.records);
  const nlohmann::json j = BenchSummaryJson(o, r);
  for (const char* key : {"ttft_s", "e2e_s"})
    for (const char* figure : {"mean", "p50", "p99", "max"})
      EXPECT_TRUE(j[key][figure].is_null()) << key << "." << figure << ": " << j[key][figure];
  const std::string text = RenderBenchText(o, r);
  const size_t row = text.find("\n         1    0        1");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  std::istringstream cells(line);
  std::vector<std::string> fields{std::istream_iterator<std::string>(cells), {}};
  ASSERT_EQ(fields.size(), 14u) << line;
  for (size_t i = 7; i < fields.size(); ++i) EXPECT_EQ(fields[i], "-") << i << ": " << line;
}

// Every answer was one token long: no TPOT or ITL was measured, and the
// summary says none (null) rather than 0 s.
TEST(BenchReportTest, OneTokenAnswersHaveNoDecodeLatencies) {
  BenchOptions o;
  o.url = "http://h:1";
  const BenchResult r = TwoRequests();
  ASSERT_EQ(r.metrics.tpot_requests, 0);
  ASSERT_EQ(r.metrics.itl_values, 0);
  const evidence::BenchClientSummary c = BenchClientSummaryOf(o, r);
  EXPECT_FALSE(c.tpot_s);
  EXPECT_FALSE(c.itl_s);
  const nlohmann::json j = BenchSummaryJson(o, r);
  for (const char* key : {"tpot_s", "itl_s"})
    for (const char* figure : {"mean", "p50", "p90", "p95", "p99", "max"})
      EXPECT_TRUE(j[key][figure].is_null()) << key << "." << figure << ": " << j[key][figure];
}

// Three tokens read in one chunk with the first: a TPOT, but no ITL value,
// which the text table shows as '-', not 0 ms.
TEST(BenchReportTest, AnAnswerReadWithItsFirstTokenHasNoItl) {
  BenchOptions o;
  o.url = "http://h:1";
  BenchResult r = TwoRequests();
  r.records[0].output_tokens = 3;
  r.metrics = stats::ComputeSampleMetrics(r.records);
  ASSERT_EQ(r.metrics.tpot_requests, 1);
  ASSERT_EQ(r.metrics.itl_values, 0);
  const std::string text = RenderBenchText(o, r);
  EXPECT_NE(text.find("itl_p50"), std::string::npos) << text;
  const std::string row = text.substr(text.find("\n", text.find("(ms)")) + 1);
  EXPECT_NE(row.find(" -"), std::string::npos) << text;
  EXPECT_EQ(row.find(" 0.0 "), std::string::npos) << text;
}

TEST(BenchReportTest, CredentialsInTheUrlAreNotShown) {
  BenchOptions o;
  o.url = "http://alice:s3cret@h:1/";
  o.more_urls = {"https://bob@h:2", "http://h:3/x@y"};
  o.num_requests = 2;
  o.concurrency = 2;
  const BenchResult r = TwoRequests();
  const std::string json = BenchSummaryJson(o, r).dump();
  const std::string text = RenderBenchText(o, r);
  for (const std::string& out : {json, text}) {
    EXPECT_EQ(out.find("s3cret"), std::string::npos) << out;
    EXPECT_EQ(out.find("alice"), std::string::npos) << out;
    EXPECT_EQ(out.find("bob"), std::string::npos) << out;
  }
  EXPECT_EQ(BenchClientSummaryOf(o, r).url, "http://<redacted>@h:1/");
  const nlohmann::json j = BenchSummaryJson(o, r);
  EXPECT_EQ(j["instances"][1]["url"], "https://<redacted>@h:2");
  EXPECT_EQ(j["instances"][2]["url"], "http://h:3/x@y");  // an @ in the path is no user
}

}  // namespace
}  // namespace ppsearch::loadgen
