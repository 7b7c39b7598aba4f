#include "server/stream_pump.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "server/engine_testing.h"

namespace ppsearch::server {
namespace {

using testutil::Config;
using testutil::FakeClock;
using testutil::LinearCost;

// A sink that records what was written and by which thread.
struct RecordingSink {
  std::mutex mu;
  std::vector<std::pair<std::thread::id, std::string>> writes;
  bool writable = true;
  bool accept_writes = true;
  httplib::DataSink sink;

  RecordingSink() {
    sink.write = [this](const char* d, size_t n) {
      std::lock_guard lock(mu);
      writes.emplace_back(std::this_thread::get_id(), std::string(d, n));
      return accept_writes;
    };
    sink.is_writable = [this] { return writable; };
  }
};

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

// An engine on a fake clock at x10: 1,000 tokens of prefill take 1 ms
// simulated, 0.1 ms of the clock.
class PumpStreamTest : public ::testing::Test {
 protected:
  void SetUp() override { engine.Start(); }
  void TearDown() override { engine.Stop(); }
  // Advances the clock in steps until `done()`, at most `steps` times.
  template <typename Done>
  void AdvanceUntil(Done done, int steps = 200) {
    for (int i = 0; i < steps && !done(); ++i) {
      clock.now_ns += 100'000;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  LinearCost cost{1, 1000, 0};
  FakeClock clock;
  RealtimeEngine engine{Config(1), cost, /*time_scale=*/10.0, clock};
  RecordingSink out;
  std::atomic<bool> stopping{false};
};

TEST_F(PumpStreamTest, EventsAreWrittenByTheThreadThatReleasesTheTokens) {
  auto h = engine.Submit(1000, 3);
  bool complete = false;
  std::thread::id handler_id;
  std::atomic<bool> registered{false};
  StreamRenderer render = [&registered, inner = LineRenderer()](const RequestProgress& p) mutable {
    registered = true;  // SetObserver reports the progress at once
    return inner(p);
  };
  std::thread handler([&] {
    handler_id = std::this_thread::get_id();
    complete = PumpStream(*h, out.sink, render, stopping);
  });
  for (int i = 0; i < 1000 && !registered; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(registered);
  AdvanceUntil([&] { return h->Snapshot().finished; });
  handler.join();
  ASSERT_TRUE(complete);
  std::string text;
  for (const auto& [id, t] : out.writes) {
    EXPECT_NE(id, handler_id) << "written by the handler's thread: " << t;
    text += t;
  }
  EXPECT_EQ(text.substr(0, 9), "tokens 1\n");
  EXPECT_EQ(text.substr(text.size() - 5), "done\n");
}

TEST_F(PumpStreamTest, AFailedWriteEndsTheStream) {
  out.accept_writes = false;  // the client went away
  auto h = engine.Submit(1000, 50);
  bool complete = true;
  std::thread handler([&] { complete = PumpStream(*h, out.sink, LineRenderer(), stopping); });
  AdvanceUntil([&] {
    std::lock_guard lock(out.mu);
    return !out.writes.empty();
  });
  handler.join();  // returns without waiting for the other 49 tokens
  EXPECT_FALSE(complete);
  std::lock_guard lock(out.mu);
  EXPECT_EQ(out.writes.size(), 1u) << "nothing is written after a failed write";
}

TEST_F(PumpStreamTest, AClientThatClosesWhileNoTokenIsDueIsNoticed) {
  out.writable = false;
  auto h = engine.Submit(1000, 3);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(PumpStream(*h, out.sink, LineRenderer(), stopping));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(PumpStreamTest, ShutdownEndsAWaitingStream) {
  auto h = engine.Submit(1000, 3);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stopping = true;
  });
  EXPECT_FALSE(PumpStream(*h, out.sink, LineRenderer(), stopping));
  stopper.join();
  EXPECT_TRUE(out.writes.empty());
}

// Tokens released before the stream is registered are written at once.
TEST_F(PumpStreamTest, ProgressBeforeRegistrationIsWrittenAtOnce) {
  auto h = engine.Submit(1000, 2);
  clock.now_ns += 10'000'000;  // everything is done
  for (int i = 0; i < 500 && !h->Snapshot().finished; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(h->Snapshot().finished);
  EXPECT_TRUE(PumpStream(*h, out.sink, LineRenderer(), stopping));
  ASSERT_EQ(out.writes.size(), 1u);
  EXPECT_EQ(out.writes[0].second, "tokens 2\ndone\n");
}

}  // namespace
}  // namespace ppsearch::server
