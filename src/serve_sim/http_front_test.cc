#include "serve_sim/http_front.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace ppsearch::serve_sim {
namespace {

using Steady = std::chrono::steady_clock;

double SecondsSince(Steady::time_point t0) {
  return std::chrono::duration<double>(Steady::now() - t0).count();
}

// A front on an ephemeral loopback port (the kernel picks it).
struct Served {
  explicit Served(HttpFront::Handler handler, HttpFrontOptions options = {},
                  std::function<double()> ticker = nullptr)
      : front(std::move(handler), nullptr, options) {
    if (ticker) front.SetTicker(std::move(ticker));
    Status st = front.Listen("127.0.0.1", 0);
    EXPECT_TRUE(st.ok()) << st.error().message;
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(front.listen_fd(), reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    front.Start();
  }
  HttpFront front;
  int port = 0;
};

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Seconds until the server closes `fd` (recv sees the end), or -1 past `limit_s`.
double SecondsUntilClosed(int fd, double limit_s) {
  const auto t0 = Steady::now();
  char buf[4096];
  while (SecondsSince(t0) < limit_s) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return SecondsSince(t0);
  }
  return -1;
}

void SendAll(int fd, const std::string& s) {
  ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

TEST(HttpFront, AnswersWithTheRequestItWasGiven) {
  Served s([](const std::shared_ptr<HttpCall>& call) {
    const HttpRequest& q = call->request();
    call->Reply(201, "text/plain",
                q.method + " " + q.path + " " + q.body + " " + q.Header("x-TOKEN") + " " +
                    (q.HasHeader("Absent") ? "yes" : "no") + " " + q.remote_ip);
  });
  httplib::Client c("127.0.0.1", s.port);
  httplib::Headers headers = {{"X-Token", "abc"}};
  auto res = c.Post("/generate?x=1", headers, "body!", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain");
  EXPECT_EQ(res->body, "POST /generate body! abc no 127.0.0.1");
}

// Another thread (as FailAll's) posts each chunk; the loop writes them in order, and
// a stream whose next chunk is further away than the read timeout is not
// cut (evhttp reads a streaming connection to see it close, with the read
// timeout still set: the first version cut every stream silent for 5 s).
TEST(HttpFront, PostedChunksAreStreamedInOrderAcrossAGapLongerThanTheReadTimeout) {
  HttpFrontOptions options;
  options.read_timeout_s = 0.3;
  options.write_timeout_s = 0.3;
  std::shared_ptr<HttpCall> streaming;
  std::atomic<bool> started{false};
  Served s(
      [&](const std::shared_ptr<HttpCall>& call) {
        call->StartStream("text/event-stream");
        streaming = call;
        started = true;
      },
      options);
  std::thread engine([&] {
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < 100; ++i)
      s.front.Post([&, i] { streaming->Write(std::to_string(i) + ","); });
    std::this_thread::sleep_for(std::chrono::milliseconds(800));  // > both timeouts
    s.front.Post([&] {
      streaming->Write("end");
      streaming->EndStream();
    });
  });
  httplib::Client c("127.0.0.1", s.port);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/stream");
  engine.join();
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  std::string want;
  for (int i = 0; i < 100; ++i) want += std::to_string(i) + ",";
  EXPECT_EQ(res->body, want + "end");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
}

TEST(HttpFront, AClientThatHangsUpBeforeItsAnswerIsHeardAtOnce) {
  std::atomic<bool> closed{false};
  std::atomic<bool> asked{false};
  Served s([&](const std::shared_ptr<HttpCall>& call) {
    call->OnClose([&] { closed = true; });
    asked = true;  // never answered
  });
  const int fd = Connect(s.port);
  ASSERT_GE(fd, 0);
  SendAll(fd, "POST /generate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
  for (int i = 0; i < 500 && !asked; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(asked);
  const auto t0 = Steady::now();
  ::close(fd);
  while (!closed && SecondsSince(t0) < 5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(closed);
  EXPECT_LT(SecondsSince(t0), 1.0) << "the hang-up scan runs every 0.2 s";
}

// A stream's head waits for its first chunk, but its client's hang-up is
// heard at once all the same, not at the next hang-up scan (set far off
// here), and the head never went out.
TEST(HttpFront, AStreamWaitingForItsFirstChunkHearsItsClientHangUpAtOnce) {
  std::atomic<bool> closed{false};
  std::atomic<bool> started{false};
  HttpFrontOptions options;
  options.hang_up_scan_s = 30;
  Served s(
      [&](const std::shared_ptr<HttpCall>& call) {
        call->OnClose([&] { closed = true; });
        call->StartStream("text/event-stream");
        started = true;  // no chunk ever
      },
      options);
  const int fd = Connect(s.port);
  ASSERT_GE(fd, 0);
  SendAll(fd, "POST /generate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
  for (int i = 0; i < 500 && !started; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(started);
  char c = 0;
  EXPECT_EQ(::recv(fd, &c, 1, MSG_DONTWAIT), -1) << "no head before the first chunk";
  const auto t0 = Steady::now();
  ::close(fd);
  while (!closed && SecondsSince(t0) < 5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(closed);
  EXPECT_LT(SecondsSince(t0), 1.0);
}

// Every block libevent holds, counted through its replaceable allocator
// (event_set_mem_functions): what a front leaves behind once it is gone.
// Blocks allocated before the count began (another test's, in a process
// that ran one first) are freed as usual and never counted.
class LibeventBlocks {
 public:
  static void Count() {
    static std::once_flag once;
    std::call_once(once, [] { event_set_mem_functions(&Malloc, &Realloc, &Free); });
  }
  static size_t Live() {
    std::lock_guard lock(mu_);
    return live_.size();
  }

 private:
  static void* Malloc(size_t n) {
    void* p = std::malloc(n);
    std::lock_guard lock(mu_);
    if (p) live_.insert(p);
    return p;
  }
  static void* Realloc(void* old, size_t n) {
    std::lock_guard lock(mu_);
    const bool counted = old == nullptr || live_.erase(old) > 0;
    void* p = std::realloc(old, n);
    if (p && counted) live_.insert(p);
    if (!p && old && counted) live_.insert(old);  // realloc failed: old stays
    return p;
  }
  static void Free(void* p) {
    {
      std::lock_guard lock(mu_);
      live_.erase(p);
    }
    std::free(p);
  }
  static inline std::mutex mu_;
  static inline std::unordered_set<void*> live_;
};

// Blocks libevent still holds after a front served `streams` streams whose
// clients hang up once the head and a chunk have arrived (heard through the
// read event: the hang-up scan is set far off).
size_t BlocksLeftAfterAbandonedStreams(int streams) {
  std::atomic<int> closed{0};
  {
    HttpFrontOptions options;
    options.hang_up_scan_s = 30;
    Served s(
        [&](const std::shared_ptr<HttpCall>& call) {
          call->OnClose([&] { ++closed; });
          call->StartStream("text/event-stream");
          call->Write("data: 1\n\n");
        },
        options);
    for (int i = 0; i < streams; ++i) {
      const int fd = Connect(s.port);
      EXPECT_GE(fd, 0);
      if (fd < 0) break;
      SendAll(fd, "POST /generate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
      std::string got;
      char buf[4096];
      const auto t0 = Steady::now();
      while (got.find("data: 1") == std::string::npos && SecondsSince(t0) < 5) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
      }
      EXPECT_NE(got.find("data: 1"), std::string::npos) << got;
      ::close(fd);
      const auto t1 = Steady::now();
      while (closed < i + 1 && SecondsSince(t1) < 5)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      EXPECT_EQ(closed, i + 1) << "stream " << i << "'s hang-up was not heard";
    }
  }
  return LibeventBlocks::Live();
}

// evhttp unlinks a request whose client hangs up mid-stream and leaves it
// to the code answering it; a front that dropped it would grow by a
// request's blocks (about 1 KB) per abandoned stream.
TEST(HttpFront, AStreamItsClientAbandonsLeavesNothingBehind) {
  LibeventBlocks::Count();
  // One front first: what libevent keeps for the process (not per front).
  const size_t after_one = BlocksLeftAfterAbandonedStreams(1);
  const size_t after_many = BlocksLeftAfterAbandonedStreams(24);
  EXPECT_EQ(after_many, after_one)
      << "blocks left per abandoned stream: " << (static_cast<double>(after_many) - after_one) / 24;
}

TEST(HttpFront, ASilentConnectionIsCutAfterTheReadTimeoutAndAnIdleOneAfterTheWriteTimeout) {
  HttpFrontOptions options;
  options.read_timeout_s = 0.4;
  options.write_timeout_s = 1.2;
  Served s([](const std::shared_ptr<HttpCall>& call) { call->Reply(200, "", ""); }, options);
  const int silent = Connect(s.port);
  ASSERT_GE(silent, 0);
  SendAll(silent, "G");
  const double silent_s = SecondsUntilClosed(silent, 5);
  ::close(silent);
  EXPECT_GT(silent_s, 0.3);
  EXPECT_LT(silent_s, 1.0);

  const int idle = Connect(s.port);
  ASSERT_GE(idle, 0);
  SendAll(idle, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  const double idle_s = SecondsUntilClosed(idle, 5);  // reads the answer, then the close
  ::close(idle);
  EXPECT_GT(idle_s, 1.0) << "a kept-alive connection idles as long as the write timeout";
  EXPECT_LT(idle_s, 2.5);
}

// The ticker runs at once after a Kick and then when it asks; one that is
// always due (an engine busy at a high --time-scale) shares the loop with
// the connections instead of starving them (ahead of them, no request was
// ever read).
TEST(HttpFront, ATickerRunsWhenItAsksAndABusyOneDoesNotStarveConnections) {
  std::atomic<int> ticks{0};
  std::atomic<double> next_s{0.05};
  Served s([](const std::shared_ptr<HttpCall>& call) { call->Reply(200, "", "ok"); }, {},
           [&] {
             ++ticks;
             return next_s.load();
           });
  EXPECT_EQ(ticks, 0) << "not before a Kick";
  s.front.Post([&] { s.front.Kick(); });
  const auto t0 = Steady::now();
  while (ticks < 5 && SecondsSince(t0) < 5)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(ticks, 5);
  EXPECT_GT(SecondsSince(t0), 0.15) << "every 0.05 s, not at once";

  next_s = 0;  // always due
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  httplib::Client c("127.0.0.1", s.port);
  c.set_read_timeout(3, 0);
  for (int i = 0; i < 3; ++i) {
    const auto asked = Steady::now();
    auto res = c.Get("/health");
    ASSERT_TRUE(res) << "no answer while the ticker is busy";
    EXPECT_EQ(res->body, "ok");
    EXPECT_LT(SecondsSince(asked), 1.0);
  }
  const int before = ticks;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GT(ticks, before + 10) << "the busy ticker runs on";
  next_s = -1;  // idle: the loop can stop
}

TEST(HttpFront, StopClosesOpenCallsAndLaterPostsNeverRun) {
  std::atomic<int> closed{0};
  std::atomic<bool> asked{false};
  auto s = std::make_unique<Served>([&](const std::shared_ptr<HttpCall>& call) {
    call->StartStream("text/event-stream");
    call->OnClose([&] { ++closed; });
    asked = true;
  });
  const int fd = Connect(s->port);
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  for (int i = 0; i < 500 && !asked; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(asked);
  s->front.Stop();
  EXPECT_EQ(closed, 1);
  bool ran = false;
  s->front.Post([&] { ran = true; });
  s.reset();
  EXPECT_FALSE(ran);
  EXPECT_GE(SecondsUntilClosed(fd, 2), 0) << "the client sees its connection closed";
  ::close(fd);
}

TEST(HttpFront, APortInUseIsRefusedNamingTheAddress) {
  Served first([](const std::shared_ptr<HttpCall>& call) { call->Reply(200, "", ""); });
  HttpFront second([](const std::shared_ptr<HttpCall>&) {}, nullptr);
  Status st = second.Listen("127.0.0.1", first.port);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("127.0.0.1:" + std::to_string(first.port)), std::string::npos)
      << st.error().message;
  EXPECT_NE(st.error().message.find("in use"), std::string::npos) << st.error().message;
  Status bad = second.Listen("no-such-host.invalid", 80);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no-such-host.invalid:80"), std::string::npos);
}

}  // namespace
}  // namespace ppsearch::serve_sim

namespace ppsearch::serve_sim {
namespace {

// The loop's outgoing side: a fetch of another front's stream arrives
// chunk by chunk, in order, then done; a timer runs once when due.
TEST(HttpFront, AFetchHearsAStreamChunkByChunkAndATimerRunsWhenDue) {
  Served upstream([](const std::shared_ptr<HttpCall>& call) {
    call->StartStream("text/event-stream");
    call->Write("data: 1\n\n");
    call->Write("data: 2\n\n");
    call->EndStream();
  });
  std::mutex mu;
  std::vector<std::string> heard;
  FetchReply head, done;
  std::atomic<bool> finished{false};
  std::atomic<double> timer_after_s{-1};
  Served client([](const std::shared_ptr<HttpCall>& call) { call->Reply(404, "", ""); });
  const auto t0 = Steady::now();
  client.front.Post([&] {
    client.front.After(0.05, [&] { timer_after_s = SecondsSince(t0); });
    FetchRequest request;
    request.host = "127.0.0.1";
    request.port = upstream.port;
    request.path = "/stream";
    FetchCallbacks cb;
    cb.head = [&](const FetchReply& r) { head = r; };
    cb.chunk = [&](std::string_view c) {
      std::lock_guard lock(mu);
      heard.emplace_back(c);
    };
    cb.done = [&](const FetchReply& r) {
      done = r;
      finished = true;
    };
    client.front.Send(std::move(request), std::move(cb));
  });
  for (int i = 0; i < 200 && (!finished || timer_after_s < 0); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(finished.load());
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.content_type, "text/event-stream");
  EXPECT_EQ(done.status, 200);
  EXPECT_EQ(done.error, "");
  std::string all;
  for (const std::string& c : heard) all += c;
  EXPECT_EQ(all, "data: 1\n\ndata: 2\n\n");
  EXPECT_GE(timer_after_s.load(), 0.045);
}

TEST(HttpFront, AFetchToAClosedPortFailsSayingSoAndACancelledOneTellsNothing) {
  const int closed = [] {
    Served s([](const std::shared_ptr<HttpCall>& call) { call->Reply(200, "", ""); });
    return s.port;  // closed again when `s` goes
  }();
  // A server that never answers: the cancelled fetch's connection closes.
  std::atomic<bool> upstream_closed{false};
  Served silent([&](const std::shared_ptr<HttpCall>& call) {
    call->OnClose([&] { upstream_closed = true; });
  });
  Served client([](const std::shared_ptr<HttpCall>& call) { call->Reply(404, "", ""); });
  std::atomic<bool> refused_done{false}, cancelled_heard{false};
  FetchReply refused;
  client.front.Post([&] {
    FetchRequest to_closed;
    to_closed.host = "127.0.0.1";
    to_closed.port = closed;
    FetchCallbacks cb;
    cb.done = [&](const FetchReply& r) {
      refused = r;
      refused_done = true;
    };
    client.front.Send(std::move(to_closed), std::move(cb));
    FetchRequest to_silent;
    to_silent.host = "127.0.0.1";
    to_silent.port = silent.port;
    FetchCallbacks quiet;
    quiet.done = [&](const FetchReply&) { cancelled_heard = true; };
    std::shared_ptr<Fetch> fetch = client.front.Send(std::move(to_silent), std::move(quiet));
    client.front.After(0.1, [fetch] { fetch->Cancel(); });
  });
  for (int i = 0; i < 300 && (!refused_done || !upstream_closed); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(refused_done.load());
  EXPECT_EQ(refused.status, 0);
  EXPECT_NE(refused.error, "");
  EXPECT_TRUE(upstream_closed.load()) << "the cancelled fetch's server saw its client go";
  EXPECT_FALSE(cancelled_heard.load());
}

}  // namespace
}  // namespace ppsearch::serve_sim
