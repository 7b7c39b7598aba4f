#include "nvidia_smi/snapshot_testing.h"

#include <sys/wait.h>

#include <cstdio>

namespace ppsearch::nvidia_smi {

Result<std::string> ShellRunner::Run(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return MakeError("cannot run '" + command + "'");
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return MakeError("'" + command + "' failed (exit status " + std::to_string(code) +
                     "); check that the command works on that node");
  }
  return out;
}

Result<std::vector<GpuMemory>> TakeSnapshot(CommandRunner& runner, const std::string& command) {
  Result<std::string> out = runner.Run(command);
  if (!out) return out.error();
  return ParseGpuMemoryCsv(*out, command);
}

}  // namespace ppsearch::nvidia_smi
