// serve-sim against slow clients (slowloris): more connections than it has
// HTTP workers, each trickling one header line now and then and never
// finishing its request. serve-sim must go on answering /health and a real
// completion while they hang on. Loopback only; the slow connections are
// bounded in count and in time and closed by the test.

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <thread>
#include <vector>

#include "serve_sim_fixture.h"

namespace ppsearch::testing {
namespace {

// More than serve-sim's 1,024 HTTP workers, as the attack that held them all.
constexpr int kSlowClients = 1100;

// kSlowClients connections to 127.0.0.1:port that each send a request line,
// then one header line every `every_s`, until Stop(); counts those the
// server cut (end of stream or reset).
class SlowClients {
 public:
  SlowClients(int port, double every_s) {
    for (int i = 0; i < kSlowClients; ++i) {
      const int fd = ConnectLoopback(port, 1);
      if (fd < 0) break;
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      Send(fd, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      fds_.push_back(fd);
    }
    trickle_ = std::thread([this, every_s] {
      int line = 0;
      while (!stop_) {
        std::this_thread::sleep_for(std::chrono::duration<double>(every_s));
        const std::string header = "X-Slow-" + std::to_string(line++) + ": 1\r\n";
        for (int fd : fds_)
          if (!Cut(fd)) Send(fd, header);
      }
    });
  }
  ~SlowClients() {
    stop_ = true;
    trickle_.join();
    for (int fd : fds_) ::close(fd);
  }
  int opened() const { return static_cast<int>(fds_.size()); }
  int cut() const {
    int n = 0;
    for (int fd : fds_) n += Cut(fd) ? 1 : 0;
    return n;
  }

 private:
  static void Send(int fd, const std::string& s) { ::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }
  // The server closed or reset it (it never answers: no request ended).
  static bool Cut(int fd) {
    char c;
    const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::thread trickle_;
};

// Seconds `answer` takes, or -1 when it does not answer 200 within limit_s.
template <typename F>
double SecondsTo200(F answer) {
  const auto t0 = Clock::now();
  const int status = answer();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return status == 200 ? s : -1;
}

// The guard cuts connections still waiting for their headers beyond 128 per
// address once they have waited a second (and all after 10 s), so the
// workers they held answer others. Without it, every worker is held for as
// long as the trickle goes on and /health waits past its limit.
TEST_F(ServeSimE2e, HealthAndACompletionAnswerWhileMoreSlowClientsThanWorkersHangOn) {
  const int port = FreePort();
  Start(Common(port) + " --time-scale 100");
  ASSERT_TRUE(WaitHealthy(port, 20 * LoadFactor())) << Log();
  // The stated limit: a scan (0.25 s) after the slow clients waited a second,
  // and the answer, scaled on a busy machine. The trickle goes on past it.
  const int limit_s = static_cast<int>(std::ceil(4 * LoadFactor()));
  SlowClients slow(port, 0.5);
  ASSERT_EQ(slow.opened(), kSlowClients);
  // Every worker is taken (or queued for) once they are all connected.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  const double health_s = SecondsTo200([&] {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(limit_s, 0);
    c.set_read_timeout(limit_s, 0);
    auto res = c.Get("/health");
    return res ? res->status : -1;
  });
  EXPECT_GE(health_s, 0) << "/health did not answer 200 within " << limit_s << " s; " << slow.cut()
                         << " of " << kSlowClients << " slow connections cut";
  const double generate_s = SecondsTo200([&] {
    auto res = Post(port, "/generate",
                    {{"input_ids", std::vector<int>(16, 7)},
                     {"sampling_params", {{"max_new_tokens", 1}, {"ignore_eos", true}}}},
                    limit_s);
    return res ? res->status : -1;
  });
  EXPECT_GE(generate_s, 0) << "a 1-token completion did not answer 200 within " << limit_s << " s";
  EXPECT_LE(generate_s, limit_s);
  // What freed the workers: all but the 128 an address may keep are cut.
  const auto until = Clock::now() + std::chrono::duration<double>(limit_s);
  while (slow.cut() < kSlowClients - 128 && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GE(slow.cut(), kSlowClients - 128);
  std::cout << "/health answered in " << health_s << " s, a 1-token completion in " << generate_s
            << " s (limit " << limit_s << " s); " << slow.cut() << " of " << kSlowClients
            << " slow connections cut\n";
}

}  // namespace
}  // namespace ppsearch::testing
