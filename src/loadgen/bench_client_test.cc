// The client against a scripted loopback server: TTFT accuracy, every fault
// as the right status, nothing hanging past its timeout.

#include "loadgen/bench_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "loadgen/captured_streams_testing.h"
#include "loadgen/load_loop.h"
#include "loadgen/scripted_server_testing.h"
#include "workload/workload.h"

namespace ppsearch::loadgen {
namespace {

using workload::RequestStatus;
constexpr int64_t kMs = 1'000'000;

int64_t PromptLength(const ScriptedRequest& req) {
  const auto j = nlohmann::json::parse(req.body, nullptr, false);
  if (j.contains("input_ids")) return static_cast<int64_t>(j["input_ids"].size());
  if (j.contains("prompt")) return static_cast<int64_t>(j["prompt"].size());
  return -1;
}

// A native answer: an empty chunk at once (not a token), the first token
// after `first_token_delay_ns`, the last chunk and [DONE] 5 ms later.
ScriptedResponse NativeAnswer(const ScriptedRequest& req, int64_t first_token_delay_ns,
                              int64_t prompt_delta = 0) {
  const int64_t prompt = PromptLength(req) + prompt_delta;
  ScriptedResponse r;
  r.pieces.push_back({0, NativeChunk(prompt, 0, false), false});
  r.pieces.push_back({first_token_delay_ns, NativeChunk(prompt, 1, false), true});
  r.pieces.push_back({5 * kMs, NativeChunk(prompt, 2, true) + "data: [DONE]\n\n", false});
  return r;
}

BenchOptions Options(const ScriptedServer& server, int requests, int concurrency) {
  BenchOptions o;
  o.url = server.url();
  o.num_requests = requests;
  o.concurrency = concurrency;
  o.input_tokens = 16;
  o.output_tokens = 2;
  o.timeout_s = 5;
  return o;
}

std::unique_ptr<ScriptedServer> StartServer(ScriptedServer::Handler handler) {
  auto server = ScriptedServer::Start(std::move(handler));
  EXPECT_TRUE(server.ok());
  return std::move(server).value();
}

// Largest gap between the server writing a first token and the client
// recording it, over one sample of 8 requests.
int64_t WorstFirstTokenLagNs() {
  auto server = StartServer([](const ScriptedRequest& req) { return NativeAnswer(req, 30 * kMs); });
  Result<BenchResult> result = RunBench(Options(*server, 8, 2));
  EXPECT_TRUE(result.ok()) << result.error().message;
  if (!result.ok()) return INT64_MAX;
  std::vector<int64_t> client;
  for (const auto& r : result->records) {
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_GE(r.ttft_s(), 0.030);
    EXPECT_EQ(r.output_tokens, 2);
    EXPECT_EQ(r.reported_input_tokens, 16);
    client.push_back(result->sample_start_steady_ns + r.first_token_ns);
  }
  EXPECT_EQ(result->metrics.requests_completed, 8);
  EXPECT_EQ(result->prompt_length_mismatches, 0);
  std::vector<int64_t> sent = server->first_token_times_ns();
  EXPECT_EQ(sent.size(), client.size());
  if (sent.size() != client.size()) return INT64_MAX;
  std::sort(client.begin(), client.end());
  std::sort(sent.begin(), sent.end());
  int64_t worst = 0;
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_GE(client[i], sent[i]);  // the record is never earlier than the send
    worst = std::max(worst, client[i] - sent[i]);
  }
  return worst;
}

TEST(BenchClientTest, TtftWithinOneMillisecondOfTheServersFirstTokenSend) {
  // Best of three samples: on a loaded machine the client thread may be
  // descheduled for a few ms; a systematic lag fails all three.
  int64_t best = INT64_MAX;
  for (int attempt = 0; attempt < 3 && best >= 1 * kMs; ++attempt)
    best = std::min(best, WorstFirstTokenLagNs());
  EXPECT_LT(best, 1 * kMs);
}

TEST(BenchClientTest, OpenAiTtftSkipsTheEmptyFirstChunk) {
  auto server = StartServer([](const ScriptedRequest& req) {
    EXPECT_EQ(req.path, "/v1/completions");
    const std::string stream = testdata::kOpenAiCompletion;
    const size_t second = stream.find("data: ", 1);
    ScriptedResponse r;
    r.pieces.push_back({0, stream.substr(0, second), false});
    r.pieces.push_back({20 * kMs, stream.substr(second), true});
    return r;
  });
  BenchOptions o = Options(*server, 3, 1);
  o.api = Api::kOpenAi;
  o.input_tokens = 4;
  Result<BenchResult> result = RunBench(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const std::vector<int64_t> sent = server->first_token_times_ns();
  for (size_t i = 0; i < result->records.size(); ++i) {
    const auto& r = result->records[i];
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.output_tokens, 2);
    EXPECT_EQ(r.reported_input_tokens, 4);
    // The empty chunk went 20 ms before the token: any lag under 10 ms shows
    // the token chunk was the one timed (precision is the test above).
    EXPECT_GE(result->sample_start_steady_ns + r.first_token_ns, sent[i]);
    EXPECT_LT(result->sample_start_steady_ns + r.first_token_ns - sent[i], 10 * kMs);
    EXPECT_GE(r.ttft_s(), 0.020);
  }
}

TEST(BenchClientTest, StreamSplitIntoSingleBytes) {
  auto server = StartServer([](const ScriptedRequest&) {
    ScriptedResponse r;
    for (char c : std::string(testdata::kNativeCumulative))
      r.pieces.push_back({50'000, std::string(1, c), false});
    return r;
  });
  BenchOptions o = Options(*server, 1, 1);
  o.input_tokens = 4;
  o.output_tokens = 3;  // the captured stream's
  Result<BenchResult> result = RunBench(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const auto& r = result->records[0];
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.output_tokens, 3);
  EXPECT_EQ(r.reported_input_tokens, 4);
}

TEST(BenchClientTest, FaultsBecomeTheRightStatus) {
  std::mutex mu;
  int n = 0;
  auto server = StartServer([&](const ScriptedRequest& req) {
    std::lock_guard<std::mutex> lock(mu);
    const int i = n++;
    ScriptedResponse r = NativeAnswer(req, 1 * kMs);
    switch (i) {
      case 1:  // HTTP error
        r = {};
        r.status = 500;
        r.content_type = "application/json";
        r.pieces.push_back({0, R"({"object":"error","message":"boom"})", false});
        break;
      case 2:  // error chunk
        r.pieces = {{0, testdata::kNativeError, false}};
        break;
      case 3:  // connection cut after the first token
        r.pieces.resize(2);
        r.end = ScriptedResponse::End::kReset;
        break;
      case 4:  // hangs after the first token
        r.pieces.resize(2);
        r.end = ScriptedResponse::End::kHang;
        break;
      case 5:  // clean end without [DONE]
        r.pieces.resize(2);
        break;
      default:
        break;
    }
    return r;
  });
  BenchOptions o = Options(*server, 8, 1);
  o.timeout_s = 0.3;
  const int64_t start = SteadyNowNs();
  Result<BenchResult> result = RunBench(o);
  const double wall_s = (SteadyNowNs() - start) * 1e-9;
  ASSERT_TRUE(result.ok()) << result.error().message;
  const auto& rec = result->records;
  ASSERT_EQ(rec.size(), 8u);
  EXPECT_EQ(rec[0].status, RequestStatus::kOk);
  EXPECT_EQ(rec[1].status, RequestStatus::kHttpError);
  EXPECT_EQ(rec[1].http_status, 500);
  EXPECT_EQ(rec[1].error, R"(HTTP 500: {"object":"error","message":"boom"})");
  EXPECT_EQ(rec[2].status, RequestStatus::kStreamError);
  EXPECT_EQ(rec[2].error.substr(0, 30), "server sent an error: The inpu");
  EXPECT_EQ(rec[3].status, RequestStatus::kStreamError);
  EXPECT_EQ(rec[3].error.substr(0, 17), "transfer failed: ");
  EXPECT_EQ(rec[4].status, RequestStatus::kTimeout);
  EXPECT_EQ(rec[4].error, "no complete answer within 300 ms (the first token had arrived)");
  EXPECT_NEAR(rec[4].e2e_s(), 0.3, 0.05);
  EXPECT_EQ(rec[5].status, RequestStatus::kStreamError);
  EXPECT_EQ(rec[5].error, "stream ended before data: [DONE]");
  EXPECT_EQ(rec[6].status, RequestStatus::kOk);
  EXPECT_EQ(rec[7].status, RequestStatus::kOk);
  EXPECT_EQ(result->metrics.requests_completed, 3);
  EXPECT_EQ(result->metrics.request_errors, 5);
  EXPECT_LT(wall_s, 2.0);
}

TEST(BenchClientTest, ServerThatNeverAnswersTimesOutAndTheLoopGoesOn) {
  std::mutex mu;
  int n = 0;
  auto server = StartServer([&](const ScriptedRequest& req) {
    std::lock_guard<std::mutex> lock(mu);
    ScriptedResponse r = NativeAnswer(req, 1 * kMs);
    if (n++ % 2 == 0) {
      r.pieces.clear();
      r.end = ScriptedResponse::End::kHang;
    }
    return r;
  });
  BenchOptions o = Options(*server, 6, 3);
  o.timeout_s = 0.2;
  const int64_t start = SteadyNowNs();
  Result<BenchResult> result = RunBench(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_LT((SteadyNowNs() - start) * 1e-9, 1.5);
  int timeouts = 0;
  for (const auto& r : result->records) {
    if (r.status == RequestStatus::kTimeout) {
      ++timeouts;
      EXPECT_EQ(r.first_token_ns, -1);
      EXPECT_EQ(r.error, "no complete answer within 200 ms (no token arrived)");
    } else {
      EXPECT_TRUE(r.ok()) << r.error;
    }
  }
  EXPECT_EQ(timeouts, 3);
}

// An interrupt must not wait for a server that holds a call open: the
// readiness probe, the version query and the cache flush end as soon as
// their abort check answers, not at their timeout.
TEST(BenchClientTest, ACallTheServerHoldsOpenEndsWhenItsAbortCheckAnswers) {
  std::atomic<int> held{0};
  auto server = StartServer([&](const ScriptedRequest& req) {
    ScriptedResponse r = NativeAnswer(req, 0);
    if (req.path != "/generate") {
      ++held;
      r.pieces.clear();
      r.end = ScriptedResponse::End::kHang;
    }
    return r;
  });
  // Answers once the server holds a call: the call was waiting by then.
  const auto interrupted = [&]() -> std::string { return held > 0 ? "interrupted" : ""; };
  int64_t start = SteadyNowNs();
  Result<SimpleResponse> got =
      Get(server->url() + "/health_generate", 10'000, 2048, "", interrupted);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message, "GET " + server->url() + "/health_generate aborted: interrupted");
  EXPECT_LT((SteadyNowNs() - start) * 1e-9, 2.0) << "the 10 s timeout";

  held = 0;
  BenchOptions o = Options(*server, 2, 1);
  o.timeout_s = 10;
  o.flush_cache = true;
  o.abort_check = interrupted;
  start = SteadyNowNs();
  Result<BenchResult> bench = RunBench(o);
  ASSERT_FALSE(bench.ok());
  EXPECT_EQ(bench.error().message, "POST " + server->url() + "/flush_cache aborted: interrupted");
  EXPECT_LT((SteadyNowNs() - start) * 1e-9, 2.0) << "the 10 s timeout";

  // A check that never answers changes nothing.
  Result<SimpleResponse> plain =
      PostEmpty(server->url() + "/flush_cache", 200, "", [] { return std::string(); });
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message.find("failed: "), std::string::npos) << plain.error().message;
}

TEST(BenchClientTest, PromptLengthMismatchIsFlaggedNotFailed) {
  auto server = StartServer([](const ScriptedRequest& req) { return NativeAnswer(req, 0, -1); });
  Result<BenchResult> result = RunBench(Options(*server, 3, 3));
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->prompt_length_mismatches, 3);
  EXPECT_EQ(result->metrics.requests_completed, 3);
  EXPECT_EQ(result->records[0].error, "note: the server counted 15 prompt tokens, 16 were sent");
}

// 50 tokens where 2 were asked: the record keeps what arrived, and the
// request fails rather than add 25 times its tokens to the throughput.
TEST(BenchClientTest, AnAnswerLongerThanAskedFailsAndCountsNoThroughput) {
  auto server = StartServer([](const ScriptedRequest& req) {
    ScriptedResponse r;
    const int64_t prompt = PromptLength(req);
    r.pieces.push_back({0, NativeChunk(prompt, 1, false), true});
    r.pieces.push_back({kMs, NativeChunk(prompt, 50, true) + "data: [DONE]\n\n", false});
    return r;
  });
  Result<BenchResult> result = RunBench(Options(*server, 3, 3));
  ASSERT_TRUE(result.ok()) << result.error().message;
  for (const auto& r : result->records) {
    EXPECT_EQ(r.status, RequestStatus::kStreamError);
    EXPECT_EQ(r.output_tokens, 50);
    EXPECT_EQ(r.error, "the server sent 50 output tokens where 2 were asked (max_new_tokens)");
  }
  EXPECT_EQ(result->metrics.requests_completed, 0);
  EXPECT_DOUBLE_EQ(result->metrics.output_tps, 0);
}

TEST(BenchClientTest, ServerSeesExactDistinctPromptsWarmupThenFlush) {
  std::mutex mu;
  std::vector<std::string> paths;
  std::set<std::string> bodies;
  auto server = StartServer([&](const ScriptedRequest& req) {
    std::lock_guard<std::mutex> lock(mu);
    paths.push_back(req.method + " " + req.path);
    if (req.path == "/flush_cache") {
      ScriptedResponse r;
      r.content_type = "text/plain";
      r.pieces.push_back({0, "Cache flushed.", false});
      return r;
    }
    EXPECT_EQ(PromptLength(req), 16);
    bodies.insert(req.body);
    return NativeAnswer(req, 0);
  });
  BenchOptions o = Options(*server, 5, 2);
  o.warmup_requests = 2;
  o.flush_cache = true;
  Result<BenchResult> result = RunBench(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->warmup_ok, 2);
  ASSERT_EQ(result->records.size(), 5u);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "POST /generate", "POST /generate", "POST /flush_cache", "POST /generate",
                       "POST /generate", "POST /generate", "POST /generate", "POST /generate"}));
  EXPECT_EQ(bodies.size(), 7u);
}

TEST(BenchClientTest, OpenLoopSendsAtPlannedArrivals) {
  auto server = StartServer([](const ScriptedRequest& req) { return NativeAnswer(req, 0); });
  BenchOptions o = Options(*server, 10, 0);
  o.request_rate = 50;
  Result<BenchResult> result = RunBench(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  workload::WorkloadParams params;
  params.num_requests = 10;
  params.input_tokens = 16;
  params.request_rate = 50;
  params.seed = o.prompt.seed;
  const auto plan = workload::PlanRequests(params);
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_TRUE(result->records[i].ok());
    // Never early; late only by scheduling (a loaded 2-core CI box).
    EXPECT_GE(result->records[i].send_ns, plan[i].arrival_ns) << "request " << i;
    EXPECT_LT(result->records[i].send_ns, plan[i].arrival_ns + 20 * kMs) << "request " << i;
  }
}

TEST(BenchClientTest, ServerErrors) {
  // Nothing listens on the port of a stopped server.
  std::string url;
  {
    auto server = StartServer([](const ScriptedRequest& req) { return NativeAnswer(req, 0); });
    url = server->url();
  }
  BenchOptions o;
  o.url = url;
  Result<BenchResult> unreachable = RunBench(o);
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.error().message.substr(0, 18 + url.size()), "cannot connect to " + url);

  auto server = StartServer([](const ScriptedRequest& req) {
    ScriptedResponse r;
    r.status = req.path == "/flush_cache" ? 400 : 503;
    r.content_type = "text/plain";
    r.pieces.push_back({0, "busy", false});
    return r;
  });
  o.url = server->url();
  o.flush_cache = true;
  Result<BenchResult> flush = RunBench(o);
  ASSERT_FALSE(flush.ok());
  EXPECT_EQ(flush.error().message,
            "POST " + server->url() +
                "/flush_cache answered HTTP 400: busy (SGLang flushes only when no "
                "request is running)");
  o.warmup_requests = 2;
  Result<BenchResult> warmup = RunBench(o);
  ASSERT_FALSE(warmup.ok());
  EXPECT_EQ(warmup.error().message,
            "all 2 warm-up requests failed; the first: http_error: HTTP 503: busy");
}

// Chunks 20 ms (1 token), 30 ms (3 tokens) and 10 ms (1 token, the finish)
// after the first token: the record holds each gap and, as not every chunk
// carried one token, the counts.
TEST(BenchClientTest, RecordsEveryTokenChunksGapAndTokens) {
  auto server = StartServer([](const ScriptedRequest& req) {
    const int64_t prompt = PromptLength(req);
    ScriptedResponse r;
    r.pieces.push_back({0, NativeChunk(prompt, 1, false), true});
    r.pieces.push_back({20 * kMs, NativeChunk(prompt, 2, false), false});
    r.pieces.push_back({30 * kMs, NativeChunk(prompt, 5, false), false});
    r.pieces.push_back({10 * kMs, NativeChunk(prompt, 6, true) + "data: [DONE]\n\n", false});
    return r;
  });
  BenchOptions o = Options(*server, 2, 2);
  o.output_tokens = 6;
  Result<BenchResult> result = RunBench(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const std::vector<int64_t> planned_us = {20'000, 30'000, 10'000};
  for (const auto& r : result->records) {
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.output_tokens, 6);
    EXPECT_EQ(r.chunk_tokens, (std::vector<int64_t>{1, 3, 1}));
    ASSERT_EQ(r.chunk_gaps_us.size(), 3u);
    int64_t sum_us = 0;
    for (size_t i = 0; i < 3; ++i) {
      // Off only by scheduling (a late first token shortens what follows).
      sum_us += r.chunk_gaps_us[i];
      EXPECT_GE(sum_us + 10'000,
                std::accumulate(planned_us.begin(), planned_us.begin() + i + 1, int64_t{0}))
          << i;
      EXPECT_LT(r.chunk_gaps_us[i], planned_us[i] + 15'000) << i;
    }
    EXPECT_LE(sum_us * 1000, r.end_ns - r.first_token_ns);
  }
  EXPECT_EQ(result->metrics.itl_values, 2 * 5);
  EXPECT_EQ(result->metrics.tpot_requests, 2);
}

// Uniform output lengths reach the server as each request's
// max_new_tokens, the plan's for the seed.
TEST(BenchClientTest, SendsThePlannedOutputLengthOfEachRequest) {
  std::mutex mu;
  std::multiset<int64_t> asked;
  auto server = StartServer([&](const ScriptedRequest& req) {
    const auto j = nlohmann::json::parse(req.body, nullptr, false);
    {
      std::lock_guard<std::mutex> lock(mu);
      asked.insert(j["sampling_params"]["max_new_tokens"].get<int64_t>());
    }
    return NativeAnswer(req, 0);
  });
  BenchOptions o = Options(*server, 12, 4);
  o.output_tokens = 40;
  o.output_range_ratio = 0.25;
  ASSERT_TRUE(RunBench(o).ok());
  std::multiset<int64_t> planned;
  for (const auto& p : workload::PlanRequests(WorkloadOf(o, o.num_requests)))
    planned.insert(p.output_tokens);
  EXPECT_EQ(asked, planned);
  EXPECT_GT(planned.size(), 1u);
  EXPECT_NE(*planned.begin(), *planned.rbegin());
}

TEST(BenchClientTest, ValidationMessages) {
  BenchOptions o;
  o.url = "127.0.0.1:30000";
  EXPECT_EQ(ValidateBenchOptions(o).error().message,
            "--url must start with http:// or https://, e.g. http://127.0.0.1:30000 (got "
            "'127.0.0.1:30000')");
  o.url = "http://h:1";
  o.concurrency = 0;
  EXPECT_EQ(ValidateBenchOptions(o).error().message, "--concurrency must be at least 1 (got 0)");
  o.request_rate = 10;
  EXPECT_TRUE(ValidateBenchOptions(o).ok());
  o.request_rate = 1e-300;  // every arrival past the clock's range
  EXPECT_EQ(ValidateBenchOptions(o).error().message,
            "--request-rate must be 0 (closed loop) or a finite number of requests/s of at least "
            "0.001 (one every 1000 s) (got 1e-300)");
  o.request_rate = 0.001;
  EXPECT_TRUE(ValidateBenchOptions(o).ok());
  o.warmup_requests = 2'000'000'000;  // refused before anything is planned
  EXPECT_EQ(ValidateBenchOptions(o).error().message,
            "--warmup must be between 0 and 10000000 (got 2000000000)");
  o.warmup_requests = 0;
  o.prompt.vocab_size = 10;
  EXPECT_EQ(ValidateBenchOptions(o).error().message,
            "--vocab-size must be above --min-token-id: token ids are drawn from [--min-token-id, "
            "--vocab-size) = [1000, 10), which is empty");
  // A negative bound is refused as what it is, not as an empty range.
  o.prompt.vocab_size = 32000;
  o.prompt.min_token_id = -5;
  EXPECT_EQ(ValidateBenchOptions(o).error().message,
            "--min-token-id must be a token id, 0 or more (got -5)");
  o.prompt.min_token_id = 0;
  o.prompt.shared_prefix_tokens = -1;
  EXPECT_EQ(ValidateBenchOptions(o).error().message,
            "--shared-prefix-tokens must be between 0 and --input-tokens (1024) (got -1)");
  o.prompt.shared_prefix_tokens = 0;
  o.output_tokens = 0;
  EXPECT_EQ(ValidateBenchOptions(o).error().message, "--output-tokens must be at least 1 (got 0)");
  o.output_tokens = 1;
  o.range_ratio = 0;
  EXPECT_EQ(ValidateBenchOptions(o).error().message, "--range-ratio must be in (0, 1] (got 0)");
}

// Two servers, one holding its answers for 2 s: least-outstanding sends it
// one request and the rest to the other; round-robin alternates whatever
// they hold. Every record names the server that served it.
TEST(BenchClient, SeveralServersShareTheSampleByTheRoutingPolicy) {
  auto fast = StartServer([](const ScriptedRequest& req) { return NativeAnswer(req, kMs); });
  auto slow = StartServer([](const ScriptedRequest& req) { return NativeAnswer(req, 2000 * kMs); });
  BenchOptions o = Options(*fast, 10, 2);
  o.more_urls = {slow->url()};
  Result<BenchResult> least = RunBench(o);
  ASSERT_TRUE(least.ok()) << least.error().message;
  int on_slow = 0;
  for (const auto& r : least->records) {
    EXPECT_TRUE(r.ok()) << r.error;
    on_slow += r.instance == 1 ? 1 : 0;
  }
  EXPECT_EQ(on_slow, 1);
  EXPECT_EQ(slow->requests_served(), 1);
  EXPECT_EQ(fast->requests_served(), 9);

  o.routing = Routing::kRoundRobin;
  o.num_requests = 4;
  Result<BenchResult> turns = RunBench(o);
  ASSERT_TRUE(turns.ok()) << turns.error().message;
  std::vector<int> instances;
  for (const auto& r : turns->records) instances.push_back(r.instance);
  EXPECT_EQ(instances, (std::vector<int>{0, 1, 0, 1}));
}

}  // namespace
}  // namespace ppsearch::loadgen
