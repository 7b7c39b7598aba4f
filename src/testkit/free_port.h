#pragma once
// Loopback ports for the tests and benchmarks that start servers, the one
// definition they share.
//
// A port the kernel hands out for bind(0) lies in the ephemeral range, where
// any process in a parallel test (srun, ssh, an HTTP client) may be given the
// same number for its own socket between our pick and the server's bind.
// So the ports come from below that range, which the kernel never hands
// out, and each is reserved for the life of the test process by an flock on
// a file named after it: two test processes never share a port.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace ppsearch::testing {

namespace free_port_detail {

// The lowest port the kernel gives for bind(0), from
// /proc/sys/net/ipv4/ip_local_port_range (32768 when unreadable).
inline int EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  return (in >> low) && low > 0 ? low : 32768;
}

inline bool Bindable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// Holds `port` for this process until it exits: the lock file's descriptor
// is close-on-exec, so no child keeps it, and it is never closed here.
inline bool Reserve(int port) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ppsearch-test-ports";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  // Shared by every user's tests, as /tmp is: anyone may add a file, only
  // its owner remove it.
  std::filesystem::permissions(
      dir, std::filesystem::perms::all | std::filesystem::perms::sticky_bit, ec);
  const std::string file = (dir / std::to_string(port)).string();
  const int fd = ::open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  return true;
}

// `n` distinct ports bind(0) gives on 127.0.0.1, all held at once and then
// released: the fallback when no port lies below the ephemeral range on
// this machine.
inline std::vector<int> KernelPorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    fds.push_back(fd);
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

}  // namespace free_port_detail

// `n` distinct ports on 127.0.0.1 that nothing listens on and no other test
// process holds, reserved for this process.
inline std::vector<int> FreePorts(int n) {
  namespace d = free_port_detail;
  constexpr int kLowest = 10000;
  const int high = d::EphemeralLow();  // exclusive
  std::vector<int> ports;
  if (high - kLowest < 1000) return d::KernelPorts(n);
  // Start where the pid points, so parallel tests rarely probe the same
  // files, and walk the range once at most.
  const int span = high - kLowest;
  const int start = static_cast<int>(std::hash<int>{}(::getpid()) % static_cast<size_t>(span));
  for (int i = 0; i < span && static_cast<int>(ports.size()) < n; ++i) {
    const int port = kLowest + (start + i) % span;
    if (d::Bindable(port) && d::Reserve(port)) ports.push_back(port);
  }
  if (static_cast<int>(ports.size()) < n) {
    const std::vector<int> more = d::KernelPorts(n - static_cast<int>(ports.size()));
    ports.insert(ports.end(), more.begin(), more.end());
  }
  return ports;
}

inline int FreePort() { return FreePorts(1)[0]; }

}  // namespace ppsearch::testing
