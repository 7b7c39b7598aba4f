#include "analysis/log_scan.h"

#include <array>
#include <sstream>

namespace ppsearch::analysis {
namespace {

struct Pattern {
  FindingKind kind;
  std::vector<const char*> needles;
};

const std::array<Pattern, 5>& Patterns() {
  static const std::array<Pattern, 5> patterns = {{
      {FindingKind::kCudaOom, {"CUDA out of memory", "torch.OutOfMemoryError", "OutOfMemoryError"}},
      {FindingKind::kNcclFailure,
       {"NCCL error", "NCCL WARN", "Watchdog caught collective operation timeout",
        "ncclInternalError", "ncclSystemError"}},
      {FindingKind::kCudaError, {"CUDA error:", "an illegal memory access"}},
      {FindingKind::kTraceback, {"Traceback (most recent call last)"}},
      {FindingKind::kEngineExit,
       {"Received sigquit", "exited with code", "Scheduler hit an exception",
        "server process exited"}},
  }};
  return patterns;
}

}  // namespace

const char* FindingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kCudaOom:
      return "CUDA out of memory";
    case FindingKind::kNcclFailure:
      return "NCCL failure";
    case FindingKind::kCudaError:
      return "CUDA error";
    case FindingKind::kTraceback:
      return "Python traceback";
    case FindingKind::kEngineExit:
      return "engine exit";
  }
  return "unknown";
}

std::vector<LogFinding> ScanLog(const std::string& text, const std::string& file) {
  std::vector<LogFinding> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // What a node prints while it is being stopped (peers lost, NCCL teardown)
    // is not a failure of the sample.
    if (line.rfind(kStopMarker, 0) == 0) break;
    for (const Pattern& pattern : Patterns()) {
      for (const char* needle : pattern.needles) {
        if (line.find(needle) == std::string::npos) continue;
        out.push_back({pattern.kind, file, number, line.substr(0, 200)});
        break;
      }
    }
  }
  return out;
}

const LogFinding* MostSevere(const std::vector<LogFinding>& findings) {
  const LogFinding* best = nullptr;
  for (const LogFinding& f : findings)
    if (best == nullptr || f.kind < best->kind) best = &f;
  return best;
}

}  // namespace ppsearch::analysis
