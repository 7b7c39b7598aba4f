#pragma once
// serve-sim's guard against clients that hold its connections without
// asking anything (slowloris: one header line a second). The HTTP loop
// times out only silence, so a client that trickles its headers keeps its
// connection (a file descriptor) for ever. A watchdog thread looks at the
// server's connections a few times a second and cuts (shutdown) those
// still waiting for their request's headers:
//   - past a total deadline since the connection was first seen, or since
//     its last answer was sent (keep-alive), whoever the client is;
//   - beyond a number per client address, oldest first, counting only
//     those waiting longer than a client sending headers in one go ever
//     does, so one address cannot take every connection the process may
//     open.
// The server tells it when a request's headers were read and when its
// answer was sent; connections are found through /proc/self/fd and named
// by their peer address, so a cut can never reach another socket.

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace ppsearch::serve_sim {

struct ConnectionLimits {
  double header_deadline_s = 10;  // longest wait for a request's headers
  double slow_after_s = 1;        // a client waiting longer is slow
  int slow_per_address = 128;     // slow connections one address may hold
  double scan_interval_s = 0.25;
};

class ConnectionGuard {
 public:
  // Guards the connections accepted on `listen_fd` (a listening TCP socket).
  ConnectionGuard(int listen_fd, ConnectionLimits limits = {});
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // The connection from ip:port has sent its request's headers.
  void RequestStarted(const std::string& ip, int port);
  // Its answer was sent: it now waits for the next request's headers.
  void RequestEnded(const std::string& ip, int port);

  int connections_cut() const { return cut_.load(); }
  // One look at the connections now (the watchdog's step; tests call it).
  void Scan();

 private:
  struct Entry {
    double since_s = 0;  // waiting for headers since (steady seconds)
    bool in_request = false;
    bool seen = false;
    bool cut = false;  // shut down; the server closes it when its worker sees
  };

  void Watch();

  const int listen_fd_;
  const ConnectionLimits limits_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // "ip port" -> state
  std::atomic<int> cut_{0};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace ppsearch::serve_sim
