#pragma once
// SGLang's log format (python/sglang/srt/utils/common.py configure_logger:
// "[%Y-%m-%d %H:%M:%S{prefix}] message") and the lines serve-sim prints:
// startup memory lines, the scheduler summary, per-batch lines and the
// injected failures. Line texts are pure functions; ServerLog writes them.

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/deployment.h"
#include "sim/online_engine.h"
#include "util/result.h"

namespace ppsearch::server {

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

// SGLang's scheduler prefix: " PP{pp}" and " TP{tp}", each only when that size > 1.
std::string ScopePrefix(int pp_rank, int pp_size, int tp_rank, int tp_size);

// The startup lines a node prints for the stages it holds, after
// `server_args=...` and once distributed init is done, in SGLang's order
// (distributed init, weights, KV pool, memory pool end, scheduler summary),
// each with its scope prefix.
struct LogLine {
  std::string prefix;
  std::string message;
};
std::vector<LogLine> StartupLines(const ServerArgs& args, const Deployment& d, int node);

// Tracks throughput between per-batch lines and formats them as SGLang's
// metrics_reporter does.
class BatchLogger {
 public:
  BatchLogger(int64_t max_total_tokens, int decode_log_interval)
      : max_total_tokens_(max_total_tokens), decode_log_interval_(decode_log_interval) {}
  // The line to print for this launch, or "" (decode lines every
  // decode_log_interval decode batches).
  std::string Line(const sim::BatchLaunch& launch);

 private:
  int64_t max_total_tokens_;
  int decode_log_interval_;
  int64_t decode_batches_ = 0;
  int64_t last_prefill_ns_ = -1;
  int64_t last_decode_log_ns_ = -1;
  int64_t decode_tokens_since_log_ = 0;
};

// A realistic failure block for --fault-log: "oom" (CUDA out of memory),
// "nccl" (NCCL watchdog timeout), "traceback" (a scheduler exception).
std::string FaultLogText(const std::string& kind, const Deployment& d);

}  // namespace ppsearch::server
