#include "analysis/log_scan.h"

#include <array>
#include <cctype>
#include <sstream>

namespace ppsearch::analysis {
namespace {

struct Pattern {
  FindingKind kind;
  std::vector<const char*> needles;
  std::vector<const char*> unless;  // a line holding one of these is not this kind
};

// Lines SGLang, PyTorch, NCCL and CPython print when a rank cannot go on.
const std::array<Pattern, 6>& Patterns() {
  static const std::array<Pattern, 6> patterns = {{
      {FindingKind::kCudaOom,
       {"CUDA out of memory", "CUDA error: out of memory", "torch.OutOfMemoryError",
        "OutOfMemoryError"},
       {}},
      {FindingKind::kNcclFailure,
       {"NCCL error", "Watchdog caught collective operation timeout", "ncclInternalError",
        "ncclSystemError", "ncclUnhandledCudaError", "ncclRemoteError", "ncclInvalidUsage",
        "unhandled system error", "unhandled cuda error", "remote process exiting",
        "remote process exited", "Some NCCL operations have failed or timed out",
        "NCCL communicator was aborted"},
       {}},
      // A disaggregated deployment's KV transfer that failed: SGLang aborts
      // the request and logs it on either side (disaggregation/prefill.py
      // and decode.py, "... failed for request rank=N req.rid=... with
      // exception KVTransferError(bootstrap_room=...): ...").
      {FindingKind::kKvTransfer,
       {"Prefill transfer failed for request", "Decode transfer failed for request",
        "Prefill bootstrap failed for request", "KVTransferError"},
       {}},
      // A CUDA error that says "out of memory" is the allocator's: OOM only.
      {FindingKind::kCudaError, {"CUDA error:", "an illegal memory access"}, {"out of memory"}},
      {FindingKind::kTraceback, {"Traceback (most recent call last)"}, {}},
      {FindingKind::kEngineExit,
       {"Received sigquit", "exited with code", "Scheduler hit an exception",
        "server process exited", "Watchdog timeout (",
        "Fatal Python error:", "Child process unexpectedly failed with"},
       {}},
  }};
  return patterns;
}

bool HasAny(const std::string& line, const std::vector<const char*>& needles) {
  for (const char* needle : needles)
    if (line.find(needle) != std::string::npos) return true;
  return false;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// NCCL_DEBUG=WARN prints setup notes at WARN level that do not stop it: no
// network plugin, no libibverbs (it falls back to sockets), the iommu=pt
// advice. A WARN line is a failure when it reports an error, a failed call,
// a lost peer or a timeout.
bool NcclWarnIsFailure(const std::string& line) {
  if (line.find("NCCL WARN") == std::string::npos) return false;
  static const std::vector<const char*> kSetupNotes = {"NET/Plugin", "libibverbs", "iommu=pt"};
  if (HasAny(line, kSetupNotes)) return false;
  // (An InfiniBand completion with an error status reads "Got completion
  // from peer ... with status=12 ..." in newer NCCLs.)
  static const std::vector<const char*> kFailures = {"error",
                                                     "failure",
                                                     "failed",
                                                     "timeout",
                                                     "timed out",
                                                     "connection closed",
                                                     "connection reset",
                                                     "connection refused",
                                                     "remote peer",
                                                     "remote process",
                                                     "abort",
                                                     "got completion from peer"};
  return HasAny(Lower(line), kFailures);
}

bool Matches(const Pattern& pattern, const std::string& line) {
  if (HasAny(line, pattern.unless)) return false;
  if (HasAny(line, pattern.needles)) return true;
  return pattern.kind == FindingKind::kNcclFailure && NcclWarnIsFailure(line);
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
    case FindingKind::kKvTransfer:
      return "KV transfer failure";
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
    for (const Pattern& pattern : Patterns())
      if (Matches(pattern, line)) out.push_back({pattern.kind, file, number, line.substr(0, 200)});
  }
  return out;
}

bool EndsTheServer(FindingKind kind) {
  return kind != FindingKind::kTraceback && kind != FindingKind::kKvTransfer;
}

const LogFinding* MostSevere(const std::vector<LogFinding>& findings) {
  const LogFinding* best = nullptr;
  for (const LogFinding& f : findings)
    if (best == nullptr || f.kind < best->kind) best = &f;
  return best;
}

}  // namespace ppsearch::analysis
