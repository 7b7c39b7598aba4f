#include "serve_sim/connection_guard.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

namespace ppsearch::serve_sim {
namespace {

double SteadyS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Key(const std::string& ip, int port) { return ip + " " + std::to_string(port); }

// The address and port of a socket's end as the HTTP loop names a client
// (numeric host), or false for a socket without one.
bool Name(const sockaddr_storage& a, std::string* ip, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    if (inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text) == nullptr) return false;
    *port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text) == nullptr) return false;
    *port = ntohs(v6->sin6_port);
  } else {
    return false;
  }
  *ip = text;
  return true;
}

int LocalPort(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  std::string ip;
  int port = -1;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || !Name(a, &ip, &port))
    return -1;
  return port;
}

// A connection of the guarded port: a duplicate of its descriptor (so that
// it cannot be closed and reused under the guard), and its peer.
struct Connection {
  int fd = -1;
  std::string ip;
  int port = 0;
};

std::vector<Connection> Connections(int listen_fd, int local_port) {
  std::vector<Connection> out;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return out;
  const int own = ::dirfd(dir);
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || end == e->d_name || fd == own || fd == listen_fd) continue;
    const int dup = ::fcntl(static_cast<int>(fd), F_DUPFD_CLOEXEC, 0);
    if (dup < 0) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    Connection c;
    c.fd = dup;
    if (LocalPort(dup) == local_port &&
        ::getpeername(dup, reinterpret_cast<sockaddr*>(&peer), &len) == 0 &&
        Name(peer, &c.ip, &c.port)) {
      out.push_back(std::move(c));
    } else {
      ::close(dup);
    }
  }
  ::closedir(dir);
  return out;
}

}  // namespace

ConnectionGuard::ConnectionGuard(int listen_fd, ConnectionLimits limits)
    : listen_fd_(listen_fd), limits_(limits), watcher_([this] { Watch(); }) {}

ConnectionGuard::~ConnectionGuard() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  watcher_.join();
}

void ConnectionGuard::RequestStarted(const std::string& ip, int port) {
  std::lock_guard lock(mu_);
  Entry& e = entries_[Key(ip, port)];
  e.in_request = true;
}

void ConnectionGuard::RequestEnded(const std::string& ip, int port) {
  std::lock_guard lock(mu_);
  Entry& e = entries_[Key(ip, port)];
  e.in_request = false;
  e.since_s = SteadyS();
}

void ConnectionGuard::Watch() {
  std::unique_lock lock(stop_mu_);
  while (!stop_) {
    stop_cv_.wait_for(lock, std::chrono::duration<double>(limits_.scan_interval_s));
    if (stop_) break;
    lock.unlock();
    Scan();
    lock.lock();
  }
}

void ConnectionGuard::Scan() {
  const int local_port = LocalPort(listen_fd_);
  if (local_port < 0) return;
  std::vector<Connection> connections = Connections(listen_fd_, local_port);
  const double now = SteadyS();
  std::vector<int> cut;
  {
    std::lock_guard lock(mu_);
    // ip -> (waited, fd, entry) of the connections waiting more than slow_after_s
    std::map<std::string, std::vector<std::tuple<double, int, Entry*>>> slow;
    for (auto& [key, e] : entries_) e.seen = false;
    for (const Connection& c : connections) {
      auto [it, fresh] = entries_.try_emplace(Key(c.ip, c.port));
      Entry& e = it->second;
      if (fresh) e.since_s = now;
      e.seen = true;
      if (e.in_request || e.cut) continue;
      const double waited = now - e.since_s;
      if (waited > limits_.header_deadline_s) {
        cut.push_back(c.fd);
        e.cut = true;
      } else if (waited > limits_.slow_after_s) {
        slow[c.ip].emplace_back(waited, c.fd, &e);
      }
    }
    for (auto& [ip, waiting] : slow) {
      if (static_cast<int>(waiting.size()) <= limits_.slow_per_address) continue;
      std::sort(waiting.rbegin(), waiting.rend());  // the longest waiting first
      for (size_t i = 0; i < waiting.size() - static_cast<size_t>(limits_.slow_per_address); ++i) {
        cut.push_back(std::get<1>(waiting[i]));
        std::get<2>(waiting[i])->cut = true;
      }
    }
    for (auto it = entries_.begin(); it != entries_.end();)
      it = it->second.seen ? std::next(it) : entries_.erase(it);
  }
  for (int fd : cut) ::shutdown(fd, SHUT_RDWR);
  cut_ += static_cast<int>(cut.size());
  for (const Connection& c : connections) ::close(c.fd);
}

}  // namespace ppsearch::serve_sim
