#include "serve_sim/stream_pump.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "serve_sim/engine_testing.h"

namespace ppsearch::serve_sim {
namespace {

using testutil::Config;
using testutil::FakeClock;
using testutil::LinearCost;

// One line per progress report with new tokens; the finish ends the stream.
StreamRenderer LineRenderer() {
  int64_t sent = 0;
  return [sent](const RequestProgress& p) mutable {
    StreamEvents e;
    if (p.output_tokens > sent) e.text = "tokens " + std::to_string(p.output_tokens) + "\n";
    sent = p.output_tokens;
    if (p.finished) {
      e.text += "done\n";
      e.last = true;
    }
    return e;
  };
}

// An engine on a fake clock at x10 (1,000 tokens of prefill take 1 ms
// simulated, 0.1 ms of the clock), run by a real HTTP front on loopback
// as serve-sim runs it: each request to it streams a request of 1,000
// prompt tokens and `tokens` outputs.
class PumpStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine.Start();
    front.SetTicker([this] { return engine.RunDue(); });
    ASSERT_TRUE(front.Listen("127.0.0.1", 0).ok());
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(front.listen_fd(), reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    front.Start();
  }
  void TearDown() override { front.Stop(); }
  void Handle(const std::shared_ptr<HttpCall>& call) {
    handle = engine.Submit(1000, tokens);
    front.Kick();
    if (finish_first) {
      clock.now_ns += 10'000'000;  // everything is done before the stream registers
      engine.RunDue();
    }
    PumpStream(
        front, call, handle, LineRenderer(),
        [this] {
          engine.Abort(*handle);
          ++aborted;
        },
        [this] { ++completed; });
    asked = true;
  }
  // Advances the clock in steps until `done()`, at most `steps` times.
  template <typename Done>
  void AdvanceUntil(Done done, int steps = 500) {
    for (int i = 0; i < steps && !done(); ++i) {
      clock.now_ns += 100'000;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  LinearCost cost{1, 1000, 0};
  FakeClock clock;
  RealtimeEngine engine{Config(1), cost, /*time_scale=*/10.0, clock};
  HttpFront front{[this](const std::shared_ptr<HttpCall>& call) { Handle(call); }, nullptr};
  int port = 0;
  int64_t tokens = 3;
  bool finish_first = false;
  std::shared_ptr<RequestHandle> handle;
  std::atomic<bool> asked{false};
  std::atomic<int> aborted{0}, completed{0};
};

TEST_F(PumpStreamTest, EveryReportIsWrittenInOrderAndTheStreamEndsWithTheFinish) {
  std::thread ticker([&] { AdvanceUntil([&] { return completed > 0; }, 2000); });
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  auto res = c.Get("/");
  ticker.join();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.substr(0, 9), "tokens 1\n");
  EXPECT_EQ(res->body.substr(res->body.size() - 14), "tokens 3\ndone\n");
  EXPECT_EQ(completed, 1);
  EXPECT_EQ(aborted, 0);
}

TEST_F(PumpStreamTest, AClientThatGoesAwayMidStreamAbortsItsRequest) {
  tokens = 1'000'000;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  std::string got;
  char buf[4096];
  AdvanceUntil([&] {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) got.append(buf, static_cast<size_t>(n));
    return got.find("tokens 2") != std::string::npos;
  });
  ASSERT_NE(got.find("tokens 2"), std::string::npos) << got;
  EXPECT_EQ(engine.in_flight(), 1);
  ::close(fd);
  AdvanceUntil([&] { return aborted > 0; });
  EXPECT_EQ(aborted, 1);
  EXPECT_EQ(completed, 0);
  EXPECT_EQ(engine.in_flight(), 0) << "the engine stopped computing it";
  EXPECT_TRUE(handle->Snapshot().finished);
}

TEST_F(PumpStreamTest, ProgressBeforeRegistrationIsWrittenAtOnce) {
  tokens = 2;
  finish_first = true;
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "tokens 2\ndone\n");
  EXPECT_EQ(completed, 1);
}

}  // namespace
}  // namespace ppsearch::serve_sim
