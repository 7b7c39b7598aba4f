#pragma once
// The serve-sim end-to-end fixture: starts `ppsearch serve-sim` processes on
// 127.0.0.1 with their logs in the test's scratch directory, bounded waits,
// and TearDown kills what the test started.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "cli_fixture.h"
#include "testkit/free_port.h"

namespace ppsearch::testing {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

inline constexpr const char* kModel = "data/models/qwen3-235b-a22b";

// A raw TCP connection to 127.0.0.1:`port` whose reads give up after
// `recv_timeout_s`; -1 when it cannot connect.
inline int ConnectLoopback(int port, int recv_timeout_s) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{recv_timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

inline std::vector<std::string> SseData(const std::string& body) {
  std::vector<std::string> events;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) break;
    std::string event = body.substr(pos, end - pos);
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    events.push_back(event.substr(6));
    pos = end + 2;
  }
  EXPECT_EQ(pos, body.size()) << "trailing bytes after the last event";
  return events;
}

inline double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class ServeSimE2e : public CliTest {
 protected:
  void TearDown() override {
    // Only children not yet reaped: a reaped one's pid may already name
    // another process.
    for (pid_t pid : children_) {
      if (pid <= 0 || ::waitpid(pid, nullptr, WNOHANG) != 0) continue;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    CliTest::TearDown();
  }

  // Starts `ppsearch serve-sim <args>` with its log in dir_/<name>.log;
  // `env`: "NAME=value ..." set in its environment.
  pid_t Start(const std::string& args, const std::string& name = "server",
              const std::string& env = "") {
    const std::string log = (dir_ / (name + ".log")).string();
    const std::string cmd = (env.empty() ? "" : env + " ") + "exec " + bin_ + " serve-sim " + args +
                            " --log-file " + log + " >" + (dir_ / (name + ".out")).string() +
                            " 2>&1";
    pid_t pid = ::fork();
    if (pid < 0) {
      // A -1 handed to kill() would signal every process this one may
      // signal (all of them, as root): stop the test binary here instead.
      std::perror("fork");
      std::abort();
    }
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    children_.push_back(pid);
    return pid;
  }

  std::string Log(const std::string& name = "server") { return ReadText(dir_ / (name + ".log")); }

  // The exit status once the process ends within `timeout_s`; nullopt if it is still running.
  std::optional<int> WaitExit(pid_t pid, double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        std::erase(children_, pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

  static int Status(int port, const std::string& path) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(1, 0);
    c.set_read_timeout(2, 0);
    auto res = c.Get(path.c_str());
    return res ? res->status : -1;
  }

  // Polls /health until 200 or the deadline.
  static bool WaitHealthy(int port, double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      if (Status(port, "/health") == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  static httplib::Result Post(int port, const std::string& path, const json& body,
                              int read_timeout_s = 20) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(read_timeout_s, 0);
    return c.Post(path.c_str(), body.dump(), "application/json");
  }

  std::string Common(int port) {
    return std::string("--model-path ") + kModel + " --tp-size 8 --host 127.0.0.1 --port " +
           std::to_string(port);
  }

  std::vector<pid_t> children_;
};

}  // namespace ppsearch::testing
