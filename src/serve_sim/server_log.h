#pragma once
// SGLang's log format (python/sglang/srt/utils/common.py configure_logger:
// "[%Y-%m-%d %H:%M:%S{prefix}] message"): ServerLog writes the lines; their
// texts come from the shared writer in sglang_log/.

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "serve_sim/deployment.h"
#include "sglang_log/sglang_log.h"
#include "util/result.h"

namespace ppsearch::serve_sim {

class ServerLog {
 public:
  // Writes to `out` (not owned; stdout when null).
  explicit ServerLog(std::FILE* out = nullptr);
  ~ServerLog();
  // Appends to `path`, creating it.
  static Result<std::unique_ptr<ServerLog>> Open(const std::string& path);

  // "[YYYY-mm-dd HH:MM:SS<prefix>] message"; `prefix` like " PP1 TP0" or "".
  void Info(const std::string& message, const std::string& prefix = "");
  // Text as is (tracebacks), each line flushed.
  void Raw(const std::string& text);

 private:
  std::mutex mu_;
  std::FILE* out_;
  bool owned_ = false;
};

using sglang_log::BatchLogger;
using sglang_log::LogLine;
using sglang_log::ScopePrefix;

// The shared log writer's inputs for this deployment.
sglang_log::LogSetup LogSetupFor(const Deployment& d);

// The startup lines a node prints for the stages it holds, after
// `server_args=...` and once distributed init is done (sglang_log::StageStartupLines
// for each of its stages, ascending).
std::vector<LogLine> StartupLines(const ServerArgs& args, const Deployment& d, int node);

// A realistic failure block (sglang_log::FaultText) stamped now: "oom",
// "nccl", "traceback", "engine_exit" or "start".
std::string FaultLogText(const std::string& kind, const Deployment& d);

}  // namespace ppsearch::serve_sim
