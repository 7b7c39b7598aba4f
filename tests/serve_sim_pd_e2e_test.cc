// serve-sim as SGLang's prefill and decode servers and router-sim as its
// router, as processes on loopback: what each refuses, a client that leaves
// through the router, and the two timeouts of the handshake.

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "serve_sim_fixture.h"

namespace ppsearch::testing {
namespace {

constexpr const char* kDeepSeek = "data/models/deepseek-v3/config.json";

class ServeSimPdE2e : public ServeSimE2e {
 protected:
  void SetUp() override {
    ServeSimE2e::SetUp();
    prefill_ = FreePort();
    bootstrap_ = FreePort();
    decode_ = FreePort();
    router_ = FreePort();
  }

  // A PD server of DeepSeek-V3 on one 8 x H200 node.
  void StartServer(const std::string& mode, int port, const std::string& extra = "") {
    Start(std::string("--model-path ") + kDeepSeek + " --tp-size 8 --ep-size 8 --hardware h200" +
              " --time-scale 10 --port " + std::to_string(port) + " --disaggregation-mode " + mode +
              " --disaggregation-bootstrap-port " + std::to_string(bootstrap_) + extra,
          mode);
  }

  void StartRouter() {
    const std::string log = (dir_ / "router.log").string();
    const std::string cmd = "exec " + bin_ + " router-sim --pd-disaggregation --prefill " +
                            "http://127.0.0.1:" + std::to_string(prefill_) + " " +
                            std::to_string(bootstrap_) +
                            " --decode http://127.0.0.1:" + std::to_string(decode_) + " --port " +
                            std::to_string(router_) + " --log-file " + log + " >/dev/null 2>&1";
    const pid_t pid = ::fork();
    if (pid < 0) std::abort();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    children_.push_back(pid);
  }

  void StartAll() {
    StartServer("prefill", prefill_);
    StartServer("decode", decode_);
    StartRouter();
    ASSERT_TRUE(WaitHealthy(prefill_, 20)) << Log("prefill");
    ASSERT_TRUE(WaitHealthy(decode_, 20)) << Log("decode");
    ASSERT_TRUE(WaitHealthy(router_, 20)) << ReadText(dir_ / "router.log");
  }

  // The socket of a streaming /generate sent to `port`, left open (-1 when
  // it cannot connect).
  static int OpenStream(int port, const json& body) {
    const int fd = ConnectLoopback(port, 10);
    if (fd < 0) return fd;
    const std::string text = body.dump();
    const std::string head =
        "POST /generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
        "application/json\r\nContent-Length: " +
        std::to_string(text.size()) + "\r\n\r\n" + text;
    if (::send(fd, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  // A decode server's preallocation counts from /server_info, polled
  // (bounded) until they are `preallocated` and `queued`; the last read.
  json WaitPreallocation(int preallocated, int queued) {
    json state = json::object();
    for (int i = 0; i < 100; ++i) {
      httplib::Client c("127.0.0.1", decode_);
      auto r = c.Get("/server_info");
      if (r) state = json::parse(r->body)["internal_states"][0];
      if (state.value("disaggregation_preallocated", -1) == preallocated &&
          state.value("disaggregation_prealloc_queue", -1) == queued)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return state;
  }

  int prefill_ = 0, bootstrap_ = 0, decode_ = 0, router_ = 0;
};

TEST_F(ServeSimPdE2e, PdServersServeTheRouterNotClientsAndTheRouterServesBoth) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  const json request = {{"text", "hello there"},
                        {"sampling_params", {{"max_new_tokens", 5}, {"ignore_eos", true}}}};
  for (int port : {prefill_, decode_}) {
    auto r = Post(port, "/generate", request);
    ASSERT_TRUE(r) << port;
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find("bootstrap_room is required"), std::string::npos) << r->body;
  }
  auto whole = Post(router_, "/generate", request);
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->status, 200) << whole->body;
  EXPECT_EQ(json::parse(whole->body)["meta_info"]["completion_tokens"], 5);
  json streamed = request;
  streamed["stream"] = true;
  auto stream = Post(router_, "/generate", streamed);
  ASSERT_TRUE(stream);
  ASSERT_EQ(stream->status, 200);
  const std::vector<std::string> events = SseData(stream->body);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_EQ(json::parse(events[events.size() - 2])["meta_info"]["completion_tokens"], 5);
  // Every server flushed through the router: nothing runs.
  httplib::Client c("127.0.0.1", router_);
  auto flushed = c.Post("/flush_cache");
  ASSERT_TRUE(flushed);
  EXPECT_EQ(flushed->status, 200) << flushed->body;
}

TEST_F(ServeSimPdE2e, AClientThatLeavesThroughTheRouterEndsItsRequestOnBothServers) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  // A long stream: at 10x real time, 20,000 tokens take minutes.
  const json body = {{"text", "a long answer please"},
                     {"stream", true},
                     {"sampling_params", {{"max_new_tokens", 20000}, {"ignore_eos", true}}}};
  const int fd = OpenStream(router_, body);
  ASSERT_GE(fd, 0);
  char buf[4096];
  ASSERT_GT(::recv(fd, buf, sizeof(buf), 0), 0) << "the stream began";
  httplib::Client decode("127.0.0.1", decode_);
  auto busy = decode.Post("/flush_cache");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 400) << "the decode server is decoding it";
  ::close(fd);
  // Bounded: the router cancels its request, the decode server aborts it.
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto r = decode.Post("/flush_cache");
    status = r ? r->status : -1;
  }
  EXPECT_EQ(status, 200) << "the decode server still runs the abandoned request";
}

// The decode server preallocates before it shakes hands, as SGLang's
// DecodePreallocQueue: with --max-running-requests 1 it holds 1 + 2 extra
// slots (handle_pd_disaggregation's default), and a fourth request waits
// in its queue, its prefill not begun.
TEST_F(ServeSimPdE2e, TheDecodeServerPreallocatesBeforeItsPrefillMayBegin) {
  StartServer("prefill", prefill_);
  StartServer("decode", decode_, " --max-running-requests 1");
  StartRouter();
  ASSERT_TRUE(WaitHealthy(prefill_, 20)) << Log("prefill");
  ASSERT_TRUE(WaitHealthy(decode_, 20)) << Log("decode");
  ASSERT_TRUE(WaitHealthy(router_, 20));
  const json body = {{"text", "a long answer please"},
                     {"stream", true},
                     {"sampling_params", {{"max_new_tokens", 20000}, {"ignore_eos", true}}}};
  std::vector<int> clients;
  for (int i = 0; i < 5; ++i) {
    clients.push_back(OpenStream(router_, body));
    ASSERT_GE(clients.back(), 0);
  }
  json state = WaitPreallocation(3, 2);
  EXPECT_EQ(state["disaggregation_preallocated"], 3) << state.dump();
  EXPECT_EQ(state["disaggregation_prealloc_queue"], 2) << state.dump();
  for (int fd : clients) ::close(fd);
  // Their clients gone, every slot and the queue empty again.
  state = WaitPreallocation(0, 0);
  EXPECT_EQ(state["disaggregation_preallocated"], 0) << state.dump();
  EXPECT_EQ(state["disaggregation_prealloc_queue"], 0) << state.dump();
}

TEST_F(ServeSimPdE2e, AHandshakeThatNeverComesAndAKvThatNeverComesFailInSglangsWords) {
  ::setenv("SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT", "1", 1);
  StartServer("prefill", prefill_);
  ::unsetenv("SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT");
  StartServer("decode", decode_);
  ASSERT_TRUE(WaitHealthy(prefill_, 20)) << Log("prefill");
  ASSERT_TRUE(WaitHealthy(decode_, 20)) << Log("decode");
  json request = {{"text", "hello"},
                  {"bootstrap_host", "127.0.0.1"},
                  {"bootstrap_port", bootstrap_},
                  {"bootstrap_room", 42},
                  {"rid", "r42"},
                  {"sampling_params", {{"max_new_tokens", 3}}}};
  // No decode server shakes hands for room 42: the prefill gives up after 1 s.
  const auto t0 = Clock::now();
  auto prefill = Post(prefill_, "/generate", request);
  ASSERT_TRUE(prefill);
  EXPECT_EQ(prefill->status, 500);
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - t0).count(), 0.9);
  EXPECT_NE(Log("prefill").find("Prefill bootstrap failed for request rank=0 req.rid='r42' "
                                "req.bootstrap_room=42"),
            std::string::npos)
      << Log("prefill");
  // A decode server told to fetch from a port where nothing listens.
  request["bootstrap_port"] = FreePort();
  auto decode = Post(decode_, "/generate", request);
  ASSERT_TRUE(decode);
  EXPECT_EQ(decode->status, 500);
  EXPECT_NE(Log("decode").find("Decode transfer failed for request rank=0 req.rid='r42'"),
            std::string::npos)
      << Log("decode");
}

// router-sim's --help lists the router's flags it reads, and a flag it does
// not play is refused naming it (exit 2) before anything listens.
TEST_F(ServeSimPdE2e, RouterSimHelpListsItsOptions) {
  CommandResult help = Run("router-sim --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* option :
       {"--pd-disaggregation", "--prefill URL [BOOTSTRAP_PORT]", "--decode URL", "--policy",
        "--prefill-policy", "--decode-policy", "--worker-startup-timeout-secs", "--host",
        "--port PORT=30000", "--log-file"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
  CommandResult unknown =
      Run("router-sim --pd-disaggregation --prefill http://127.0.0.1:1 --decode "
          "http://127.0.0.1:2 --mini-lb");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.rfind("error: router-sim: unknown argument '--mini-lb'", 0), 0u)
      << unknown.err;
}

}  // namespace
}  // namespace ppsearch::testing
