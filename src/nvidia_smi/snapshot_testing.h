#pragma once
// Taking a GPU memory snapshot on a node: run the configured command (by
// default nvidia-smi, kDefaultQueryCommand) and parse its output. The command
// runner is the edge; tests substitute a fake.

#include <string>
#include <vector>

#include "nvidia_smi/gpu_memory.h"
#include "util/result.h"

namespace ppsearch::nvidia_smi {

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs `command` in a shell; its stdout, or an error naming the command
  // and its exit status.
  virtual Result<std::string> Run(const std::string& command) = 0;
};

// /bin/sh -c via popen.
class ShellRunner : public CommandRunner {
 public:
  Result<std::string> Run(const std::string& command) override;
};

// Runs `command` (e.g. kDefaultQueryCommand, or `ssh host nvidia-smi ...`,
// or `curl -s http://host:port/gpu_memory` against serve-sim) and parses it.
Result<std::vector<GpuMemory>> TakeSnapshot(CommandRunner& runner, const std::string& command);

}  // namespace ppsearch::nvidia_smi
