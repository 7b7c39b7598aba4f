#include "launch/ssh_failure.h"

#include <sstream>
#include <utility>

namespace ppsearch::launch {
namespace {

// ssh's messages (OpenSSH) for each kind of failure; the first kind with a
// matching line wins, so a host key problem is not reported as the
// "Permission denied" that can follow it.
const std::pair<const char*, const char*> kKinds[] = {
    {"REMOTE HOST IDENTIFICATION HAS CHANGED", "host key not accepted"},
    {"Host key verification failed", "host key not accepted"},
    {"host key is known for", "host key not accepted"},
    {"Could not resolve hostname", "unknown host name"},
    {"Connection refused", "connection refused"},
    {"Connection timed out", "unreachable"},
    {"No route to host", "unreachable"},
    {"Network is unreachable", "unreachable"},
    {"Permission denied", "authentication failed"},
    {"Too many authentication failures", "authentication failed"},
    {"Connection closed by", "connection closed by the host"},
    {"Connection reset by", "connection closed by the host"},
};

// A line without the '@' frame ssh draws around its host key warnings.
std::string Unframed(const std::string& line) {
  const size_t b = line.find_first_not_of("@ ");
  const size_t e = line.find_last_not_of("@ \r");
  return b == std::string::npos ? "" : line.substr(b, e - b + 1);
}

bool Informative(const std::string& line) {
  return !line.empty() && line[0] != '@' && line.rfind("Warning: Permanently added", 0) != 0;
}

}  // namespace

std::string DescribeSshFailure(const std::string& ssh_stderr) {
  for (const auto& [needle, kind] : kKinds) {
    std::istringstream lines(ssh_stderr);
    for (std::string line; std::getline(lines, line);)
      if (line.find(needle) != std::string::npos) return std::string(kind) + ": " + Unframed(line);
  }
  std::istringstream lines(ssh_stderr);
  for (std::string line; std::getline(lines, line);)
    if (Informative(line)) return "ssh failed: " + line;
  return "ssh failed without a message";
}

}  // namespace ppsearch::launch
