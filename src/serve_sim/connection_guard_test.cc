// The guard on a real loopback listener: connections that send no request
// are cut past the header deadline and beyond the per-address cap, a
// connection inside a request is left alone, and nothing else is touched.

#include "serve_sim/connection_guard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace ppsearch::serve_sim {
namespace {

int Listen(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::listen(fd, 64), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

// A client connection and the server's end of it.
struct Pair {
  int client = -1;
  int served = -1;
  int client_port = 0;
};

Pair Connect(int listen_fd, int port) {
  Pair p;
  p.client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::connect(p.client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  p.served = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  socklen_t len = sizeof a;
  ::getsockname(p.client, reinterpret_cast<sockaddr*>(&a), &len);
  p.client_port = ntohs(a.sin_port);
  return p;
}

// Whether the client sees its connection closed by the server (EOF).
bool CutOff(const Pair& p) {
  char c;
  return ::recv(p.client, &c, 1, MSG_DONTWAIT) == 0;
}

void SleepS(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

TEST(ConnectionGuard, SlowHeadersAreCutByDeadlineAndByTheCapPerAddress) {
  int port = 0;
  const int listen_fd = Listen(&port);
  ConnectionLimits limits;
  limits.header_deadline_s = 1.0;
  limits.slow_after_s = 0.2;
  limits.slow_per_address = 2;
  limits.scan_interval_s = 3600;  // the test scans
  ConnectionGuard guard(listen_fd, limits);
  std::vector<Pair> pairs;
  for (int i = 0; i < 5; ++i) pairs.push_back(Connect(listen_fd, port));
  guard.Scan();  // first seen now
  EXPECT_EQ(guard.connections_cut(), 0);
  guard.RequestStarted("127.0.0.1", pairs[0].client_port);  // its headers arrived
  SleepS(0.3);
  // Four slow ones of one address, two allowed: two are cut.
  guard.Scan();
  EXPECT_EQ(guard.connections_cut(), 2);
  int cut = 0;
  for (const Pair& p : pairs) cut += CutOff(p) ? 1 : 0;
  EXPECT_EQ(cut, 2);
  EXPECT_FALSE(CutOff(pairs[0]));
  // Past the deadline the other two go; the one in a request stays until
  // its answer is sent, and waits for its next headers from then on.
  SleepS(0.9);
  guard.Scan();
  EXPECT_EQ(guard.connections_cut(), 4);
  EXPECT_FALSE(CutOff(pairs[0]));
  guard.RequestEnded("127.0.0.1", pairs[0].client_port);
  guard.Scan();
  EXPECT_FALSE(CutOff(pairs[0]));
  SleepS(1.1);
  guard.Scan();
  EXPECT_TRUE(CutOff(pairs[0]));
  EXPECT_EQ(guard.connections_cut(), 5);
  // The client ends and the listener itself are never touched.
  Pair fresh = Connect(listen_fd, port);
  EXPECT_FALSE(CutOff(fresh));
  for (const Pair& p : pairs) {
    ::close(p.client);
    ::close(p.served);
  }
  ::close(fresh.client);
  ::close(fresh.served);
  ::close(listen_fd);
}

}  // namespace
}  // namespace ppsearch::serve_sim
