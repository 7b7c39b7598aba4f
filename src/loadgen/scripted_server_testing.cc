#include "loadgen/scripted_server_testing.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>

#include "loadgen/load_loop.h"

namespace ppsearch::loadgen {

std::string NativeChunk(int64_t prompt_tokens, int64_t completion_tokens, bool final) {
  nlohmann::json ids = nlohmann::json::array();
  for (int64_t i = 0; i < completion_tokens; ++i) ids.push_back(100 + i);
  nlohmann::json finish = final ? nlohmann::json{{"type", "length"}, {"length", completion_tokens}}
                                : nlohmann::json(nullptr);
  nlohmann::json chunk = {{"text", std::string(static_cast<size_t>(completion_tokens), 'x')},
                          {"output_ids", ids},
                          {"meta_info",
                           {{"id", "r"},
                            {"finish_reason", finish},
                            {"prompt_tokens", prompt_tokens},
                            {"completion_tokens", completion_tokens},
                            {"cached_tokens", 0}}}};
  return "data: " + chunk.dump() + "\n\n";
}

namespace {

constexpr size_t kMaxRequestBytes = size_t{256} << 20;

struct Connection {
  int fd = -1;
  std::string in;
  std::string out;  // bytes accepted for sending, not yet written
  std::deque<ScriptedResponse::Piece> pending;
  int64_t next_due_ns = 0;
  ScriptedResponse::End end = ScriptedResponse::End::kFinish;
  bool responding = false;
  bool hanging = false;
  bool closing = false;  // close once `out` is written
};

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A complete request at the front of `in`, or false if more bytes are needed.
bool TakeRequest(std::string& in, ScriptedRequest& req) {
  const size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  const std::string head = Lower(in.substr(0, head_end));
  size_t content_length = 0;
  if (size_t p = head.find("\r\ncontent-length:"); p != std::string::npos) {
    content_length = std::strtoull(head.c_str() + p + 17, nullptr, 10);
  }
  if (in.size() < head_end + 4 + content_length) return false;
  const size_t sp1 = in.find(' ');
  const size_t sp2 = in.find(' ', sp1 + 1);
  req.method = in.substr(0, sp1);
  req.path = in.substr(sp1 + 1, sp2 - sp1 - 1);
  req.body = in.substr(head_end + 4, content_length);
  in.erase(0, head_end + 4 + content_length);
  return true;
}

void AppendChunk(std::string& out, const std::string& bytes) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", bytes.size());
  out += size;
  out += bytes;
  out += "\r\n";
}

// Writes what it can; false when the peer is gone.
bool Flush(Connection& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return true;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<ScriptedServer>> ScriptedServer::Start(Handler handler, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(std::string("scripted server: socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 1024) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    return MakeError("scripted server: cannot listen on 127.0.0.1: " + err);
  }
  const int wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return std::unique_ptr<ScriptedServer>(
      new ScriptedServer(fd, wake, ntohs(addr.sin_port), std::move(handler)));
}

ScriptedServer::ScriptedServer(int listen_fd, int wake_fd, int port, Handler handler)
    : listen_fd_(listen_fd), wake_fd_(wake_fd), port_(port), handler_(std::move(handler)) {
  thread_ = std::thread([this] { Serve(); });
}

ScriptedServer::~ScriptedServer() {
  stop_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_fd_);
}

std::vector<int64_t> ScriptedServer::first_token_times_ns() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_token_times_ns_;
}

void ScriptedServer::Serve() {
  std::map<int, Connection> conns;
  std::vector<pollfd> fds;
  while (!stop_) {
    const int64_t now = SteadyNowNs();
    int64_t wait_ns = 100'000'000;
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({wake_fd_, POLLIN, 0});
    for (auto& [fd, c] : conns) {
      short events = POLLIN;
      if (!c.out.empty()) events |= POLLOUT;
      fds.push_back({fd, events, 0});
      if (!c.pending.empty())
        wait_ns = std::min(wait_ns, std::max<int64_t>(0, c.next_due_ns - now));
    }
    const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000),
                      static_cast<long>(wait_ns % 1'000'000'000)};
    if (::ppoll(fds.data(), fds.size(), &ts, nullptr) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      for (int cfd;
           (cfd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
        const int one = 1;
        ::setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        conns[cfd].fd = cfd;
      }
    }
    std::vector<int> dead;
    for (size_t i = 2; i < fds.size(); ++i) {
      Connection& c = conns[fds[i].fd];
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[65536];
        const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
        if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
          dead.push_back(c.fd);
          continue;
        }
        if (n > 0) c.in.append(buf, static_cast<size_t>(n));
        if (c.in.size() > kMaxRequestBytes) dead.push_back(c.fd);
      }
    }
    for (int fd : dead) {
      ::close(fd);
      conns.erase(fd);
    }
    dead.clear();
    for (auto& [fd, c] : conns) {
      ScriptedRequest req;
      if (!c.responding && !c.hanging && TakeRequest(c.in, req)) {
        ++requests_;
        ScriptedResponse resp = handler_(req);
        c.out += "HTTP/1.1 " + std::to_string(resp.status) + " " + Reason(resp.status) +
                 "\r\nContent-Type: " + resp.content_type +
                 "\r\nTransfer-Encoding: chunked\r\n\r\n";
        c.pending.assign(resp.pieces.begin(), resp.pieces.end());
        c.end = resp.end;
        c.responding = true;
        c.next_due_ns = SteadyNowNs() + (c.pending.empty() ? 0 : c.pending.front().delay_ns);
      }
      const int64_t t = SteadyNowNs();
      while (c.responding && !c.pending.empty() && t >= c.next_due_ns) {
        ScriptedResponse::Piece piece = std::move(c.pending.front());
        c.pending.pop_front();
        if (!piece.bytes.empty()) AppendChunk(c.out, piece.bytes);
        if (piece.first_token) {  // just before the write: the client cannot see it earlier
          std::lock_guard<std::mutex> lock(mu_);
          first_token_times_ns_.push_back(SteadyNowNs());
        }
        if (!Flush(c)) break;
        if (!c.pending.empty()) c.next_due_ns = SteadyNowNs() + c.pending.front().delay_ns;
      }
      if (c.responding && c.pending.empty()) {
        c.responding = false;
        if (c.end == ScriptedResponse::End::kFinish) c.out += "0\r\n\r\n";
        if (c.end == ScriptedResponse::End::kHang) c.hanging = true;
        if (c.end == ScriptedResponse::End::kReset) c.closing = true;
      }
      if (!Flush(c) || (c.closing && c.out.empty())) dead.push_back(fd);
    }
    for (int fd : dead) {
      ::close(fd);
      conns.erase(fd);
    }
  }
  for (auto& [fd, c] : conns) ::close(fd);
}

}  // namespace ppsearch::loadgen
