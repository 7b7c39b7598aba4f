// serve-sim as SGLang's clients see it: a port in use, TTFT under load on
// reused connections (listen backlog, TCP_NODELAY, keep-alive), the request
// shapes SGLang's bench_serving sends (sglang, sglang-oai, sglang-oai-chat),
// prefill-only and one-token requests, /flush_cache without a body, the
// model endpoints. Loopback only; every wait bounded.

#include <algorithm>

#include "loadgen/bench_client.h"
#include "serve_sim_fixture.h"
#include "stats/stats.h"

namespace ppsearch::testing {
namespace {

class ServeSimApiE2e : public ServeSimE2e {
 protected:
  int StartReady(const std::string& extra = " --time-scale 100") {
    const int port = FreePort();
    Start(Common(port) + extra);
    EXPECT_TRUE(WaitHealthy(port, 20)) << Log();
    return port;
  }
};

TEST_F(ServeSimApiE2e, APortInUseExitsOneNamingHostAndPort) {
  const int port = StartReady();
  pid_t second = Start(Common(port), "second");
  std::optional<int> code = WaitExit(second, 20);
  ASSERT_TRUE(code.has_value()) << "a second server kept running on the same port";
  EXPECT_EQ(*code, 1);
  EXPECT_NE(
      ReadText(dir_ / "second.out").find("cannot listen on 127.0.0.1:" + std::to_string(port)),
      std::string::npos)
      << ReadText(dir_ / "second.out");
  EXPECT_EQ(Status(port, "/health"), 200);
}

// p99 of the client's TTFT over a closed loop of `concurrency`, 4 requests
// per connection. At --time-scale 1e5 the simulated TTFT is far below 1 ms,
// so the TTFT is the HTTP path's: a dropped SYN (backlog 5) costs 1 s, a
// delayed ACK behind Nagle 40 ms.
double P99TtftS(int port, int concurrency) {
  loadgen::BenchOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port);
  o.concurrency = concurrency;
  o.num_requests = concurrency * 4;
  o.input_tokens = 16;
  o.output_tokens = 4;
  o.timeout_s = 30;
  auto r = loadgen::RunBench(o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return 1e9;
  std::vector<double> ttft;
  for (const auto& rec : r->records) {
    EXPECT_TRUE(rec.ok()) << rec.error;
    if (rec.ok()) ttft.push_back(rec.ttft_s());
  }
  std::sort(ttft.begin(), ttft.end());
  return ttft.empty() ? 1e9 : ttft[static_cast<size_t>(0.99 * (ttft.size() - 1))];
}

TEST_F(ServeSimApiE2e, TtftUnderLoadHasNoConnectOrNagleStalls) {
  const int port = StartReady(" --time-scale 100000");
  // A Nagle or delayed-ACK stall costs 40 ms a request; on an idle machine the
  // limits sit below it. A busy machine delays every answer: the limits scale
  // with its load per core, so they catch the stall wherever it can be told
  // from the load and never fail for the load alone.
  const double load = LoadFactor();
  EXPECT_LT(P99TtftS(port, 8), 0.030 * load);
  EXPECT_LT(P99TtftS(port, 256), 0.300 * load);
  // Keep-alive is not capped at 5 requests: 4 x 256 requests did not reconnect into a
  // full backlog (a reconnect storm shows up in the TTFT above).
}

TEST_F(ServeSimApiE2e, BenchServingSglangNativeShape) {
  const int port = StartReady();
  // bench_serving --backend sglang (--tokenize-prompt): input_ids, greedy, ignore_eos.
  auto res =
      Post(port, "/generate",
           {{"input_ids", {101, 102, 103, 104}},
            {"sampling_params", {{"max_new_tokens", 3}, {"temperature", 0}, {"ignore_eos", true}}},
            {"stream", true}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  auto events = SseData(res->body);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.back(), "[DONE]");
  json last = json::parse(events[events.size() - 2]);
  EXPECT_EQ(last["meta_info"]["completion_tokens"], 3);
  EXPECT_EQ(last["text"], " tok tok tok");
}

TEST_F(ServeSimApiE2e, BenchServingSglangOaiShape) {
  const int port = StartReady();
  // bench_serving --backend sglang-oai: /v1/completions with a token-id prompt.
  auto res = Post(port, "/v1/completions",
                  {{"model", "data/models/qwen3-235b-a22b"},
                   {"prompt", {11, 12, 13}},
                   {"temperature", 0},
                   {"max_tokens", 3},
                   {"stream", true},
                   {"stream_options", {{"include_usage", true}}},
                   {"ignore_eos", true}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  auto events = SseData(res->body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    json c = json::parse(events[i]);
    EXPECT_EQ(c["object"], "text_completion");
    ASSERT_TRUE(c.contains("usage"));
    EXPECT_TRUE(c["usage"].is_null()) << "non-final chunks carry usage: null";
    text += c["choices"][0]["text"].get<std::string>();
    EXPECT_EQ(c["choices"][0]["finish_reason"].is_null(), i + 3 < events.size());
  }
  EXPECT_EQ(text, " tok tok tok");
  json usage = json::parse(events[events.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
}

TEST_F(ServeSimApiE2e, BenchServingSglangOaiChatShape) {
  const int port = StartReady();
  // bench_serving --backend sglang-oai-chat: one user message, max_completion_tokens.
  auto res = Post(port, "/v1/chat/completions",
                  {{"model", "data/models/qwen3-235b-a22b"},
                   {"messages", {{{"role", "user"}, {"content", "the cat sat here"}}}},
                   {"temperature", 0},
                   {"max_completion_tokens", 2},
                   {"stream", true},
                   {"stream_options", {{"include_usage", true}}},
                   {"ignore_eos", true}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto events = SseData(res->body);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.back(), "[DONE]");
  json first = json::parse(events[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(first["choices"][0]["delta"]["content"], "");
  EXPECT_TRUE(first["usage"].is_null());
  std::string content;
  for (size_t i = 1; i + 3 < events.size(); ++i) {
    json c = json::parse(events[i]);
    EXPECT_TRUE(c["usage"].is_null());
    EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null()) << events[i];
    content += c["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(content, " tok tok");
  // The finish reason comes in a chunk of its own, with an empty delta.
  json finish = json::parse(events[events.size() - 3]);
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(finish["choices"][0]["delta"]["content"].is_null()) << events[events.size() - 3];
  EXPECT_TRUE(finish["choices"][0]["delta"]["role"].is_null());
  json usage = json::parse(events[events.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 2);

  auto plain = Post(port, "/v1/chat/completions",
                    {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 3}});
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200);
  json pj = json::parse(plain->body);
  EXPECT_EQ(pj["object"], "chat.completion");
  EXPECT_EQ(pj["choices"][0]["message"]["content"], " tok tok tok");
  EXPECT_EQ(pj["usage"]["completion_tokens"], 3);
}

TEST_F(ServeSimApiE2e, RefusalsAndLogPrefixesAreSglangs) {
  const int port = StartReady(" --time-scale 100 --ep-size 8");
  httplib::Client c("127.0.0.1", port);
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  const int64_t context_len = json::parse(models->body)["data"][0]["max_model_len"];
  const std::string too_long =
      "Requested token count exceeds the model's maximum context length of " +
      std::to_string(context_len) + " tokens. You requested a total of " +
      std::to_string(context_len + 2) + " tokens: 3 tokens from the input messages and " +
      std::to_string(context_len - 1) +
      " tokens for the completion. Please reduce the number of tokens in the input messages or "
      "the completion to fit within the limit.";
  // The OpenAI routes answer a flat ErrorResponse.
  auto comp =
      Post(port, "/v1/completions", {{"prompt", {1, 2, 3}}, {"max_tokens", context_len - 1}});
  ASSERT_TRUE(comp);
  EXPECT_EQ(comp->status, 400);
  EXPECT_EQ(json::parse(comp->body), json({{"object", "error"},
                                           {"message", too_long},
                                           {"type", "BadRequestError"},
                                           {"param", nullptr},
                                           {"code", 400}}));
  auto negative = Post(port, "/v1/completions", {{"prompt", {1, -2, 3}}, {"max_tokens", 2}});
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->status, 400);
  EXPECT_EQ(json::parse(negative->body)["message"],
            "prompt must hold token ids of 0 or more; prompt[1] is -2");
  auto gen =
      Post(port, "/generate",
           {{"input_ids", {1, 2, 3}}, {"sampling_params", {{"max_new_tokens", context_len - 1}}}});
  ASSERT_TRUE(gen);
  EXPECT_EQ(gen->status, 400);
  EXPECT_EQ(json::parse(gen->body)["error"]["message"], too_long);
  auto gen_negative = Post(port, "/generate", {{"input_ids", {-1}}});
  ASSERT_TRUE(gen_negative);
  EXPECT_EQ(gen_negative->status, 400);
  // A request that fits is served, and its batch lines carry the EP rank.
  auto ok = Post(port, "/generate",
                 {{"input_ids", {1, 2, 3}}, {"sampling_params", {{"max_new_tokens", 2}}}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  const std::string log = Log();
  EXPECT_NE(log.find(" TP0 EP0] Load weight end."), std::string::npos) << log;
  EXPECT_NE(log.find(" TP0 EP0] Prefill batch"), std::string::npos) << log;
}

// A client that disconnects mid-stream: SGLang aborts its request, so the
// engine is idle again at once (/flush_cache answers 200 only then).
TEST_F(ServeSimApiE2e, AClientThatDisconnectsAbortsItsRequest) {
  const int port = StartReady(" --time-scale 1");
  const int fd = ConnectLoopback(port, 5);
  ASSERT_GE(fd, 0);
  const std::string body = json({{"input_ids", {1, 2, 3}},
                                 {"sampling_params", {{"max_new_tokens", 20000}}},
                                 {"stream", true}})
                               .dump();
  const std::string req =
      "POST /generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  std::string got;
  char buf[4096];
  // Read until the first token's chunk: the request is decoding.
  while (got.find("\"completion_tokens\":") == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0) << "no first token within 5 s: " << got;
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(Status(port, "/flush_cache"), 400) << "the request is running";
  ::close(fd);
  // 20,000 tokens take minutes at --time-scale 1; the abort ends it at once.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (Clock::now() < deadline && (status = Status(port, "/flush_cache")) != 200)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(status, 200) << Log();
}

// A client that sends its headers slowly holds one worker, not the server,
// and is cut once it is silent for the read timeout.
TEST_F(ServeSimApiE2e, ASlowClientIsCutAndOthersAreServed) {
  const int port = StartReady();
  const int fd = ConnectLoopback(port, 6);
  ASSERT_GE(fd, 0);
  const auto started = Clock::now();
  ASSERT_EQ(::send(fd, "G", 1, 0), 1);
  // Others are answered while it stalls.
  for (int i = 0; i < 3; ++i) {
    const auto asked = Clock::now();
    EXPECT_EQ(Status(port, "/health"), 200);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - asked).count(), 1.0);
  }
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
  const double cut_s = std::chrono::duration<double>(Clock::now() - started).count();
  ::close(fd);
  EXPECT_LE(n, 0) << "the server answered a request it never received";
  EXPECT_LT(cut_s, 4.0) << "the slow client was held for " << cut_s << " s";
}

// --api-key as SGLang's middleware applies it: /health* open, every other
// route 401 without the bearer token. bench sends it from OPENAI_API_KEY, as
// SGLang's bench_serving does, with every request and the cache flush.
TEST_F(ServeSimApiE2e, AnApiKeyGuardsEveryRouteButHealthAndBenchSendsIt) {
  const std::string key = "sk-" + std::to_string(::getpid());
  const int port = StartReady(" --time-scale 100 --api-key " + key);
  EXPECT_EQ(Status(port, "/health_generate"), 200);
  auto refused = Post(port, "/generate", {{"input_ids", {1, 2, 3}}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(json::parse(refused->body), json({{"error", "Unauthorized"}}));
  EXPECT_EQ(Status(port, "/server_info"), 401);
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth(key.c_str());
  auto allowed = c.Post("/generate", json({{"input_ids", {1, 2, 3}}}).dump(), "application/json");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200) << allowed->body;

  const std::string bench = bin_ + " bench --url http://127.0.0.1:" + std::to_string(port) +
                            " -n 4 -c 2 --input-tokens 16 --flush-cache";
  CommandResult with_key = RunCommand("OPENAI_API_KEY=" + key + " " + bench);
  EXPECT_EQ(with_key.exit_code, 0) << with_key.out << with_key.err;
  CommandResult without = RunCommand("env -u OPENAI_API_KEY " + bench);
  EXPECT_NE(without.exit_code, 0) << without.out;
}

TEST_F(ServeSimApiE2e, MaxNewTokensZeroIsPrefillOnly) {
  const int port = StartReady();
  auto res = Post(
      port, "/generate",
      {{"input_ids", {1, 2, 3}}, {"sampling_params", {{"max_new_tokens", 0}}}, {"stream", true}});
  ASSERT_TRUE(res);
  auto events = SseData(res->body);
  ASSERT_EQ(events.size(), 2u) << res->body;
  json only = json::parse(events[0]);
  EXPECT_EQ(only["meta_info"]["completion_tokens"], 0);
  EXPECT_TRUE(only["output_ids"].empty());
  EXPECT_EQ(only["text"], "");
  EXPECT_EQ(only["meta_info"]["finish_reason"], json({{"type", "length"}, {"length", 0}}));
  auto plain = Post(port, "/v1/completions", {{"prompt", {1, 2}}, {"max_tokens", 0}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(json::parse(plain->body)["usage"]["completion_tokens"], 0);
}

TEST_F(ServeSimApiE2e, OneTokenRequestsGetOneChunk) {
  const int port = StartReady(" --time-scale 1");
  for (int i = 0; i < 3; ++i) {
    auto gen = Post(
        port, "/generate",
        {{"input_ids", {1, 2, 3}}, {"sampling_params", {{"max_new_tokens", 1}}}, {"stream", true}});
    ASSERT_TRUE(gen);
    auto events = SseData(gen->body);
    ASSERT_EQ(events.size(), 2u) << gen->body;
    EXPECT_EQ(json::parse(events[0])["meta_info"]["completion_tokens"], 1);
    auto comp =
        Post(port, "/v1/completions", {{"prompt", {1, 2, 3}}, {"max_tokens", 1}, {"stream", true}});
    ASSERT_TRUE(comp);
    auto cev = SseData(comp->body);
    ASSERT_EQ(cev.size(), 2u) << comp->body;
    EXPECT_EQ(json::parse(cev[0])["choices"][0]["finish_reason"], "length");
  }
}

TEST_F(ServeSimApiE2e, FlushCacheWithoutContentLengthAnswers) {
  const int port = StartReady();
  const int fd = ConnectLoopback(port, 3);
  ASSERT_GE(fd, 0);
  const std::string req = "POST /flush_cache HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  char buf[512] = {};
  const ssize_t n = ::recv(fd, buf, sizeof(buf) - 1, 0);
  ::close(fd);
  ASSERT_GT(n, 0) << "no answer within 3 s";
  EXPECT_EQ(std::string(buf).rfind("HTTP/1.1 200", 0), 0u) << buf;
}

TEST_F(ServeSimApiE2e, ModelEndpointsAndDeprecatedAliases) {
  const int port = StartReady();
  httplib::Client c("127.0.0.1", port);
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  ASSERT_EQ(models->status, 200);
  json m = json::parse(models->body);
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0]["id"], kModel);
  EXPECT_EQ(m["data"][0]["object"], "model");
  for (const char* path : {"/model_info", "/get_model_info"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(json::parse(r->body)["model_path"], kModel);
  }
  for (const char* path : {"/server_info", "/get_server_info"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(json::parse(r->body)["tp_size"], 8) << path;
  }
  EXPECT_NE(Log().find("Endpoint '/get_model_info' is deprecated"), std::string::npos);
}

TEST_F(ServeSimApiE2e, Http500FractionMustBeAFraction) {
  for (const char* bad : {"nan", "-0.5", "1.5"}) {
    CommandResult r = Run("serve-sim " + Common(FreePort()) + " --fault-http500 " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--fault-http500 must be a fraction in [0, 1]"), std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace ppsearch::testing
