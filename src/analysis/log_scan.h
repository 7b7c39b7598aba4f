#pragma once
// Failure patterns in SGLang server logs. A sample whose log holds one of
// these did not run the way its numbers suggest (a rank died, a collective
// timed out, memory ran out), so the decision treats it as failed.

#include <string>
#include <vector>

namespace ppsearch::analysis {

// In order of severity: the first is the one a decision reason names.
enum class FindingKind { kCudaOom, kNcclFailure, kCudaError, kTraceback, kEngineExit };

// "CUDA out of memory", "NCCL failure", "CUDA error", "Python traceback", "engine exit".
const char* FindingKindName(FindingKind kind);

struct LogFinding {
  FindingKind kind = FindingKind::kTraceback;
  std::string file;  // as given to ScanLog, e.g. "service/pp4-tp8-ep4_c8_r1/603.log"
  int line = 0;      // 1-based
  std::string text;  // the matching line, trimmed to 200 characters

  std::string Where() const { return file + ":" + std::to_string(line); }
};

// Every line of `text` that matches a pattern, once per (line, kind). Patterns
// (case-sensitive substrings, as SGLang, PyTorch and NCCL print them):
//   CUDA out of memory: "CUDA out of memory", "torch.OutOfMemoryError", "OutOfMemoryError"
//   NCCL failure:       "NCCL error", "NCCL WARN", "Watchdog caught collective operation
//                       timeout", "ncclInternalError", "ncclSystemError"
//   CUDA error:         "CUDA error:", "an illegal memory access"
//   Python traceback:   "Traceback (most recent call last)"
//   engine exit:        "Received sigquit", "exited with code", "Scheduler hit an exception",
//                       "server process exited"
// Lines after the runner's stop marker (a line starting with kStopMarker,
// which the real engine appends to each node's log just before it sends
// SIGTERM) are not scanned.
std::vector<LogFinding> ScanLog(const std::string& text, const std::string& file);

inline constexpr const char* kStopMarker = "[ppsearch] stopping the server";

// The most severe finding (lowest kind, then earliest), or nullptr.
const LogFinding* MostSevere(const std::vector<LogFinding>& findings);

}  // namespace ppsearch::analysis
