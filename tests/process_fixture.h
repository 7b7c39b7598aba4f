#pragma once
// Processes and ports of the end-to-end tests that start real daemons (sshd,
// Slurm): free loopback ports, daemons as children in their own process
// group with a log file, and finding what a test left running by its
// command line or its environment. Every wait here is bounded.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "testkit/free_port.h"
#include "launch/process.h"

namespace ppsearch::testing {

inline bool CanConnect(const std::string& address, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// Empty when unreadable: a /proc file of a process that exits while it is
// read fails with ESRCH (libstdc++ throws).
inline std::string ReadBinary(const std::filesystem::path& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return "";
  }
}

inline bool IsZombie(pid_t pid) {
  const std::string stat = ReadBinary("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

// Running: it exists and is not a zombie.
inline bool Alive(pid_t pid) { return pid > 0 && ::kill(pid, 0) == 0 && !IsZombie(pid); }

// The start time of `pid` (launch::ProcessStartTicks), 0 when gone. A pid is
// soon given again (pid_max is often 32,768, and serve-sim alone runs a
// thousand threads, whose ids /proc answers for too): a process is its pid
// and this.
inline unsigned long long StartTicks(pid_t pid) {
  return launch::ProcessStartTicks(pid).value_or(0);
}

// The very process that had `start_ticks` still runs.
inline bool AliveSince(pid_t pid, unsigned long long start_ticks) {
  return Alive(pid) && StartTicks(pid) == start_ticks;
}

// Live processes (not this one) whose /proc file `what` ("cmdline" or
// "environ", NUL-separated words) contains every one of `needles`.
inline std::vector<pid_t> ProcessesWhose(const std::string& what,
                                         const std::vector<std::string>& needles) {
  std::vector<pid_t> out;
  // An empty needle is in every command line: what is found here is often
  // killed, so it finds nothing rather than every process.
  for (const auto& n : needles)
    if (n.empty()) return out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    std::string words = ReadBinary(e.path() / what);
    std::replace(words.begin(), words.end(), '\0', ' ');
    bool all = !words.empty();
    for (const auto& n : needles) all = all && words.find(n) != std::string::npos;
    if (all && Alive(pid)) out.push_back(pid);
  }
  return out;
}

inline std::vector<pid_t> ProcessesMentioning(const std::vector<std::string>& needles) {
  return ProcessesWhose("cmdline", needles);
}

// SIGKILL, in bounded rounds, to every live process `find` returns.
template <typename Find>
void KillAll(Find find) {
  for (int round = 0; round < 20; ++round) {
    const std::vector<pid_t> left = find();
    if (left.empty()) return;
    for (pid_t p : left) ::kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Starts `argv` (argv[0] an absolute path) as a child in its own process
// group, stdout and stderr appended to `log`. -1 when fork fails.
inline pid_t StartDaemon(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> words;
  for (const auto& a : argv) words.push_back(const_cast<char*>(a.c_str()));
  words.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid > 0) ::setpgid(pid, pid);  // both sides, so a signal to the group cannot miss it
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  ::execv(words[0], words.data());
  ::_exit(127);
}

// SIGTERM to each daemon's process group, SIGKILL to those still there
// after `grace_s`; reaps them all.
inline void StopDaemons(const std::vector<pid_t>& pids, double grace_s) {
  std::vector<pid_t> left;
  for (pid_t pid : pids) {
    if (pid <= 0) continue;
    ::kill(-pid, SIGTERM);
    ::kill(pid, SIGTERM);
    left.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    left.erase(std::remove_if(left.begin(), left.end(),
                              [](pid_t p) { return ::waitpid(p, nullptr, WNOHANG) == p; }),
               left.end());
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t pid : left) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

// A socket of this process listening on address:port, as another program
// holding a node's port would; close it when done. CLOEXEC: the ppsearch the
// test runs must not inherit it, or it would be named as the holder.
inline int ListenOn(const std::string& address, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Registers this process with smi-sim's state directory of one node as
// "python3" holding `used_mib` on GPU 0, as a stray process would.
inline void HoldGpuMemory(const std::filesystem::path& node_state_dir, int node_rank,
                          int used_mib) {
  std::filesystem::create_directories(node_state_dir);
  std::ofstream(node_state_dir / ("serve-sim-" + std::to_string(::getpid()) + ".json"))
      << "{\"pid\": " << ::getpid()
      << ", \"process_name\": \"python3\", \"node_rank\": " << node_rank
      << ", \"held_until_unix_s\": null, \"gpus\": [{\"index\": 0, \"uuid\": \"GPU-held\", "
         "\"name\": \"NVIDIA RTX 6000D\", \"used_mib\": "
      << used_mib << ", \"total_mib\": 85651}]}";
}

}  // namespace ppsearch::testing
