// `ppsearch bench` against `ppsearch serve-sim`, both real processes on
// 127.0.0.1: exact prompt lengths (the server's reported prompt tokens), both
// APIs, records, exit codes. Every wait is bounded; TearDown kills the
// server this test started.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>
#include <vector>

#include "cli_fixture.h"
#include "testkit/free_port.h"

namespace ppsearch::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kModel = "data/models/qwen3-235b-a22b";

std::vector<json> ReadJsonl(const std::filesystem::path& path) {
  std::vector<json> lines;
  std::istringstream in(ReadText(path));
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

class BenchE2e : public CliTest {
 protected:
  void TearDown() override {
    if (server_ > 0) {
      ::kill(server_, SIGKILL);
      ::waitpid(server_, nullptr, 0);
    }
    CliTest::TearDown();
  }

  // Starts serve-sim and waits (bounded) for /health to answer 200.
  void StartServer(const std::string& extra_args = "") {
    port_ = FreePort();
    const std::string cmd = "exec " + bin_ + " serve-sim --model-path " + kModel +
                            " --tp-size 8 --time-scale 100 --host 127.0.0.1 --port " +
                            std::to_string(port_) + " " + extra_args + " --log-file " +
                            (dir_ / "server.log").string() + " >" + (dir_ / "server.out").string() +
                            " 2>&1";
    server_ = ::fork();
    if (server_ == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      httplib::Client c("127.0.0.1", port_);
      c.set_connection_timeout(1, 0);
      c.set_read_timeout(2, 0);
      if (auto res = c.Get("/health"); res && res->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "serve-sim did not become ready in 30 s: " << ReadText(dir_ / "server.out");
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  pid_t server_ = -1;
  int port_ = 0;
};

TEST_F(BenchE2e, NativeApiSendsExactPromptLengths) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const auto records = dir_ / "records.jsonl";
  CommandResult r = Run("bench --url " + Url() +
                        " --input-tokens 1000 --output-tokens 4 -c 4 -n 12 --warmup 2 --flush-cache"
                        " --timeout-s 60 --records " +
                        records.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# url: " + Url() + "  api: native (POST /generate)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# 12/12 requests ok, 0 errors, 0 prompt-length mismatches\n"),
            std::string::npos)
      << r.out;
  const std::vector<json> lines = ReadJsonl(records);
  ASSERT_EQ(lines.size(), 12u);
  for (const json& rec : lines) {
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_EQ(rec["input_tokens"], 1000);
    EXPECT_EQ(rec["reported_input_tokens"], 1000);
    EXPECT_EQ(rec["output_tokens"], 4);
    EXPECT_EQ(rec["http_status"], 200);
    EXPECT_GT(rec["ttft_s"].get<double>(), 0);
    EXPECT_LE(rec["ttft_s"].get<double>(), rec["e2e_s"].get<double>());
  }
}

TEST_F(BenchE2e, OpenAiApiOpenLoopWithVaryingLengths) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const auto records = dir_ / "records.jsonl";
  CommandResult r = Run("bench --url " + Url() +
                        " --api openai --input-tokens 600 --range-ratio 0.5 --output-tokens 2"
                        " --request-rate 40 -n 10 --timeout-s 60 --json --records " +
                        records.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["api"], "openai");
  EXPECT_EQ(summary["requests_completed"], 10);
  EXPECT_EQ(summary["prompt_length_mismatches"], 0);
  int64_t total = 0;
  for (const json& rec : ReadJsonl(records)) {
    EXPECT_EQ(rec["reported_input_tokens"], rec["input_tokens"]) << rec.dump();
    EXPECT_GE(rec["input_tokens"].get<int64_t>(), 300);
    EXPECT_LE(rec["input_tokens"].get<int64_t>(), 600);
    EXPECT_EQ(rec["output_tokens"], 2);
    total += rec["input_tokens"].get<int64_t>();
  }
  EXPECT_EQ(summary["total_input_tokens"], total);
}

// One output token per request: no decode was timed, so the summary's TPOT
// and ITL figures are null, not 0 s.
TEST_F(BenchE2e, OneTokenAnswersHaveNullDecodeLatencies) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  CommandResult r = Run("bench --url " + Url() +
                        " --input-tokens 100 --output-tokens 1 -c 2 -n 4 --timeout-s 60 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["tpot_requests"], 0);
  EXPECT_EQ(summary["itl_values"], 0);
  for (const char* group : {"tpot_s", "itl_s"})
    for (const char* q : {"mean", "p50", "p90", "p95", "p99", "max"})
      EXPECT_TRUE(summary[group][q].is_null()) << group << "." << q << ": " << summary[group][q];
  EXPECT_GT(summary["ttft_s"]["p50"].get<double>(), 0);
}

// numpy's default percentile (linear between closest ranks), written out
// here so the check does not lean on the code it checks.
double NumpyPercentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double h = (v.size() - 1) * q / 100;
  const size_t lo = static_cast<size_t>(h);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - lo) * (v[hi] - v[lo]);
}

// 256 output tokens: every request's chunk timing is in its record, and the
// summary's TPOT and ITL percentiles are the ones the records give by hand
// (TPOT = (end - first token) / 255; a chunk gap over k tokens is k ITL
// values of gap / k).
TEST_F(BenchE2e, DecodeTimingOfEveryRequestIsInTheRecordsAndGivesTheSummary) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const auto records = dir_ / "records.jsonl";
  CommandResult r = Run("bench --url " + Url() +
                        " --input-tokens 500 --output-tokens 256 -c 4 -n 8 --timeout-s 60 --json"
                        " --records " +
                        records.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json summary = json::parse(r.out);
  const std::vector<json> lines = ReadJsonl(records);
  ASSERT_EQ(lines.size(), 8u);
  std::vector<double> tpot, itl;
  for (const json& rec : lines) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    ASSERT_EQ(rec["output_tokens"], 256);
    ASSERT_TRUE(rec.contains("chunk_gaps_us")) << rec.dump();
    const auto gaps = rec["chunk_gaps_us"].get<std::vector<int64_t>>();
    const auto tokens = rec.contains("chunk_tokens")
                            ? rec["chunk_tokens"].get<std::vector<int64_t>>()
                            : std::vector<int64_t>(gaps.size(), 1);
    ASSERT_EQ(tokens.size(), gaps.size());
    int64_t after_first = 0;
    for (size_t i = 0; i < gaps.size(); ++i) {
      after_first += tokens[i];
      for (int64_t k = 0; k < tokens[i]; ++k) itl.push_back(gaps[i] * 1e-6 / tokens[i]);
    }
    // The first chunk carried at least one token, the others the rest.
    EXPECT_GE(after_first, 1);
    EXPECT_LE(after_first, 255);
    // The gaps add up to the last token chunk, which is no later than the end.
    const int64_t span_us = std::accumulate(gaps.begin(), gaps.end(), int64_t{0});
    EXPECT_LE(span_us * 1000, rec["end_ns"].get<int64_t>() - rec["first_token_ns"].get<int64_t>());
    tpot.push_back((rec["end_ns"].get<int64_t>() - rec["first_token_ns"].get<int64_t>()) * 1e-9 /
                   255);
  }
  EXPECT_EQ(summary["tpot_requests"], 8);
  EXPECT_EQ(summary["itl_values"], itl.size());
  for (const char* q : {"p50", "p90", "p95", "p99"}) {
    const double pct = std::stod(std::string(q).substr(1));
    EXPECT_NEAR(summary["tpot_s"][q].get<double>(), NumpyPercentile(tpot, pct), 1e-12) << q;
    EXPECT_NEAR(summary["itl_s"][q].get<double>(), NumpyPercentile(itl, pct), 1e-12) << q;
  }
  EXPECT_NEAR(summary["itl_s"]["mean"].get<double>(),
              std::accumulate(itl.begin(), itl.end(), 0.0) / itl.size(), 1e-12);
  EXPECT_GT(summary["tpot_s"]["p50"].get<double>(), 0);
}

TEST_F(BenchE2e, FailedRequestsExitOne) {
  ASSERT_NO_FATAL_FAILURE(StartServer("--fault-http500 0.5"));
  const auto records = dir_ / "records.jsonl";
  CommandResult r =
      Run("bench --url " + Url() + " --input-tokens 100 -c 2 -n 10 --timeout-s 60 --records " +
          records.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  int http_errors = 0;
  for (const json& rec : ReadJsonl(records)) {
    if (rec["status"] == "http_error") {
      ++http_errors;
      EXPECT_EQ(rec["http_status"], 500);
    }
  }
  EXPECT_GT(http_errors, 0);
  EXPECT_NE(r.out.find("/10 requests ok, " + std::to_string(http_errors) + " errors"),
            std::string::npos)
      << r.out;
}

TEST_F(BenchE2e, HungRequestTimesOutAndTheSampleGoesOn) {
  ASSERT_NO_FATAL_FAILURE(StartServer("--fault-hang-after 1"));
  const auto records = dir_ / "records.jsonl";
  const auto start = Clock::now();
  CommandResult r =
      Run("bench --url " + Url() + " --input-tokens 100 -c 2 -n 6 --timeout-s 1 --records " +
          records.string());
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 10);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::vector<json> lines = ReadJsonl(records);
  ASSERT_EQ(lines.size(), 6u);
  int timeouts = 0, ok = 0;
  for (const json& rec : lines) {
    timeouts += rec["status"] == "timeout" ? 1 : 0;
    ok += rec["status"] == "ok" ? 1 : 0;
  }
  EXPECT_EQ(timeouts, 1) << r.out;
  EXPECT_EQ(ok, 5) << r.out;
  // Which client request the server saw second depends on the race of the first two sends.
  EXPECT_NE(r.out.find("# errors: 1 timeout; first: request "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": no complete answer within 1000 ms (no token arrived)\n"),
            std::string::npos)
      << r.out;
}

TEST_F(BenchE2e, ArgumentAndConnectionErrors) {
  CommandResult bad_url = Run("bench --url 127.0.0.1:30000");
  EXPECT_EQ(bad_url.exit_code, 2);
  EXPECT_EQ(bad_url.err,
            "error: --url must start with http:// or https://, e.g. http://127.0.0.1:30000 (got "
            "'127.0.0.1:30000')\n");
  CommandResult bad_api = Run("bench --url http://127.0.0.1:1 --api grpc");
  EXPECT_EQ(bad_api.exit_code, 2);
  EXPECT_EQ(
      bad_api.err,
      "error: --api must be 'native' (POST /generate) or 'openai' (POST /v1/completions), got "
      "'grpc'\n");
  CommandResult not_a_number = Run("bench --url http://127.0.0.1:1 --input-tokens many");
  EXPECT_EQ(not_a_number.exit_code, 2);
  // A negative token id is refused for what it is: [-5, 32000) is not empty.
  CommandResult negative_id = Run("bench --url http://127.0.0.1:1 --min-token-id -5");
  EXPECT_EQ(negative_id.exit_code, 2);
  EXPECT_EQ(negative_id.err, "error: --min-token-id must be a token id, 0 or more (got -5)\n");
  const std::string url = "http://127.0.0.1:" + std::to_string(FreePort());
  CommandResult unreachable = Run("bench --url " + url);
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_EQ(unreachable.err.rfind("error: cannot connect to " + url + ": ", 0), 0u)
      << unreachable.err;
  // The URL's password is in no message.
  const std::string port = std::to_string(FreePort());
  CommandResult with_password = Run("bench --url http://u:secretpw@127.0.0.1:" + port);
  EXPECT_EQ(with_password.exit_code, 1);
  EXPECT_EQ(with_password.err.rfind(
                "error: cannot connect to http://<redacted>@127.0.0.1:" + port + ": ", 0),
            0u)
      << with_password.err;
  // A URL libcurl cannot use is a bad argument (exit 2), found before any
  // request, its password hidden too.
  for (const char* bad :
       {"http://127.0.0.1:99999", "http://", "'http://u:secretpw@127.0.0.1:1/ x'"}) {
    CommandResult malformed = Run(std::string("bench --url ") + bad);
    EXPECT_EQ(malformed.exit_code, 2) << bad;
    EXPECT_EQ(malformed.err.rfind("error: --url '", 0), 0u) << malformed.err;
    EXPECT_NE(malformed.err.find("' is not a URL: "), std::string::npos) << malformed.err;
    EXPECT_EQ(malformed.err.find("secretpw"), std::string::npos) << malformed.err;
  }
}

}  // namespace
}  // namespace ppsearch::testing
