#include "serve_sim/node_group.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <sstream>

namespace ppsearch::serve_sim {
namespace {

// Resolves host (name or address) to an IPv4 address.
bool Resolve(const std::string& host, int port, sockaddr_in* out) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 ||
      res == nullptr)
    return false;
  std::memcpy(out, res->ai_addr, sizeof(sockaddr_in));
  ::freeaddrinfo(res);
  return true;
}

// Reads one '\n'-terminated line, waiting at most timeout_ms in total.
bool ReadLine(int fd, std::string* line, int timeout_ms) {
  line->clear();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (line->size() < 256) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char c;
    if (::recv(fd, &c, 1, 0) != 1) return false;
    if (c == '\n') return true;
    line->push_back(c);
  }
  return false;
}

void SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Blocks until the peer closes or errors (or `closing` is set); calls
// `on_line` at each whole line the peer sends, without its newline.
void WaitForDrop(int fd, const std::atomic<bool>& closing,
                 const std::function<void(const std::string&)>& on_line = {}) {
  // Longer than any line node 0 sends; a peer that sends more is cut off
  // rather than let the line grow.
  constexpr size_t kMaxLine = 256;
  char buf[64];
  std::string line;
  while (!closing) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r < 0) return;
    if (r == 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        line.push_back(buf[i]);
        if (line.size() > kMaxLine) return;
        continue;
      }
      if (on_line) on_line(line);
      line.clear();
    }
  }
}

}  // namespace

NodeGroupLeader::~NodeGroupLeader() { Close(); }

Status NodeGroupLeader::Listen(const std::string& host, int port, int nnodes,
                               std::function<void(int)> on_lost) {
  nnodes_ = nnodes;
  on_lost_ = std::move(on_lost);
  sockaddr_in addr{};
  if (!Resolve(host, port, &addr))
    return MakeError(fmt::format("--dist-init-addr {}:{}: cannot resolve '{}'", host, port, host));
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return MakeError(
        fmt::format("--dist-init-addr {}:{}: cannot listen ({}); is another server using it?", host,
                    port, why));
  }
  threads_.emplace_back([this] { AcceptLoop(); });
  return Status::Ok();
}

int NodeGroupLeader::joined() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(ranks_.size());
}

void NodeGroupLeader::AcceptLoop() {
  while (!closing_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::string line;
    int rank = -1, nnodes = -1, notify_at = 0;
    if (ReadLine(fd, &line, 5000)) {
      std::istringstream in(line);
      std::string word;
      in >> word >> rank >> nnodes;
      if (!(in >> notify_at)) notify_at = 0;
      if (word != "PPSEARCH-JOIN") rank = -1;
    }
    std::lock_guard lock(mu_);
    if (rank < 1 || rank >= nnodes_ || nnodes != nnodes_ || ranks_.count(rank) > 0) {
      SendAll(fd,
              fmt::format("ERR node rank {} (nnodes {}) is not expected by node 0 (nnodes {})\n",
                          rank, nnodes, nnodes_));
      ::close(fd);
      continue;
    }
    SendAll(fd, "OK\n");
    ranks_.insert(rank);
    fds_.push_back(fd);
    if (notify_at > 0) notify_.emplace_back(notify_at, fd);
    threads_.emplace_back([this, fd, rank] { Monitor(fd, rank); });
  }
}

void NodeGroupLeader::Monitor(int fd, int rank) {
  WaitForDrop(fd, closing_);
  if (!closing_ && on_lost_) on_lost_(rank);
}

void NodeGroupLeader::Answered(int answered) {
  std::lock_guard lock(mu_);
  for (const auto& [at, fd] : notify_)
    if (at == answered) SendAll(fd, fmt::format("ANSWERED {}\n", answered));
}

void NodeGroupLeader::Tell(const std::string& line) {
  std::vector<int> fds;
  {
    std::lock_guard lock(mu_);
    fds = fds_;
  }
  // From node 0's serving loop: a node that reads nothing must not stall
  // it. A line that does not fit the socket's buffer is dropped; the next
  // larger batch's line says more.
  const std::string text = line + "\n";
  for (int fd : fds)
    static_cast<void>(::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT));
}

void NodeGroupLeader::Close() {
  if (closing_.exchange(true)) return;
  {
    std::lock_guard lock(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  for (int fd : fds_) ::close(fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

NodeGroupFollower::~NodeGroupFollower() { Close(); }

Status NodeGroupFollower::Join(const std::string& host, int port, int rank, int nnodes,
                               double timeout_s, std::function<void()> on_lost, int notify_at,
                               std::function<void(const std::string&)> on_line) {
  sockaddr_in addr{};
  if (!Resolve(host, port, &addr))
    return MakeError(fmt::format("--dist-init-addr {}:{}: cannot resolve '{}'", host, port, host));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string last_error = "no attempt";
  while (std::chrono::steady_clock::now() < deadline && !closing_) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      SendAll(fd, notify_at > 0 ? fmt::format("PPSEARCH-JOIN {} {} {}\n", rank, nnodes, notify_at)
                                : fmt::format("PPSEARCH-JOIN {} {}\n", rank, nnodes));
      std::string reply;
      if (ReadLine(fd, &reply, 5000) && reply == "OK") {
        fd_ = fd;
        monitor_ = std::thread([this, on_lost = std::move(on_lost), on_line = std::move(on_line)] {
          WaitForDrop(fd_, closing_, on_line);
          if (!closing_ && on_lost) on_lost();
        });
        return Status::Ok();
      }
      ::close(fd);
      return MakeError(fmt::format("node 0 at {}:{} refused node rank {}: {}", host, port, rank,
                                   reply.empty() ? "no answer" : reply));
    }
    last_error = std::strerror(errno);
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return MakeError(fmt::format(
      "could not reach node 0 at --dist-init-addr {}:{} within {:.0f} s ({}); start node 0 "
      "or check the address",
      host, port, timeout_s, last_error));
}

void NodeGroupFollower::Close() {
  if (closing_.exchange(true)) return;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  if (monitor_.joinable()) monitor_.join();
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ppsearch::serve_sim
