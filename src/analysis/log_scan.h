#pragma once
// Failure patterns in SGLang server logs. A sample whose log holds one of
// these did not run the way its numbers suggest (a rank died, a collective
// timed out, memory ran out), so the decision treats it as failed.

#include <string>
#include <vector>

namespace ppsearch::analysis {

// In order of severity: the first is the one a decision reason names.
enum class FindingKind {
  kCudaOom,
  kNcclFailure,
  kCudaError,
  kTraceback,
  kEngineExit,
  kKvTransfer,  // a disaggregated deployment's KV transfer between its pools
};

// "CUDA out of memory", "NCCL failure", "CUDA error", "Python traceback",
// "engine exit", "KV transfer failure".
const char* FindingKindName(FindingKind kind);

struct LogFinding {
  FindingKind kind = FindingKind::kTraceback;
  std::string file;  // as given to ScanLog, e.g. "service/pp4-tp8-ep4_c8_r1/603.log"
  int line = 0;      // 1-based
  std::string text;  // the matching line, trimmed to 200 characters

  std::string Where() const { return file + ":" + std::to_string(line); }
};

// Every line of `text` that matches a pattern, once per (line, kind). Patterns
// (case-sensitive substrings, as SGLang, PyTorch, NCCL and CPython print them):
//   CUDA out of memory: "CUDA out of memory", "CUDA error: out of memory",
//                       "torch.OutOfMemoryError", "OutOfMemoryError"
//   NCCL failure:       "NCCL error", "Watchdog caught collective operation timeout",
//                       "ncclInternalError", "ncclSystemError", "ncclUnhandledCudaError",
//                       "ncclRemoteError", "ncclInvalidUsage", "unhandled system error",
//                       "unhandled cuda error", "remote process exiting", "remote process
//                       exited", "Some NCCL operations have failed or timed out",
//                       "NCCL communicator was aborted"; and an "NCCL WARN" line that
//                       reports a failure (any case: "error", "failure", "failed",
//                       "timeout", "timed out", "connection closed/reset/refused",
//                       "remote peer", "remote process", "abort", "got completion from
//                       peer"), unless it is a setup note ("NET/Plugin", "libibverbs",
//                       "iommu=pt")
//   CUDA error:         "CUDA error:", "an illegal memory access" (not a line that says
//                       "out of memory": that one is OOM)
//   Python traceback:   "Traceback (most recent call last)"
//   engine exit:        "Received sigquit", "exited with code", "Scheduler hit an exception",
//                       "server process exited", "Watchdog timeout (" (SGLang's scheduler
//                       watchdog), "Fatal Python error:" (faulthandler: a segmentation
//                       fault, an abort), "Child process unexpectedly failed with"
//   KV transfer failure: "Prefill transfer failed for request", "Decode transfer failed for
//                       request", "Prefill bootstrap failed for request", "KVTransferError"
//                       (a disaggregated deployment's request whose KV did not arrive)
// Lines after the runner's stop marker (a line starting with kStopMarker,
// which the real engine appends to each node's log just before it sends
// SIGTERM) are not scanned.
std::vector<LogFinding> ScanLog(const std::string& text, const std::string& file);

inline constexpr const char* kStopMarker = "[ppsearch] stopping the server";

// Whether a finding of `kind` means a rank cannot go on, so a running sample
// should end at once: every kind but a traceback, which SGLang also prints
// for errors it survives (its fatal ones come with one of the other lines),
// and a KV transfer failure, which aborts one request and not the server.
bool EndsTheServer(FindingKind kind);

// The most severe finding (lowest kind, then earliest), or nullptr.
const LogFinding* MostSevere(const std::vector<LogFinding>& findings);

}  // namespace ppsearch::analysis
