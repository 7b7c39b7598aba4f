#pragma once
// A finished sample's verdict, as the manifest line that ends it records it
// ("verdict", with a sentence in "detail"). The engine decides the first
// kind (it saw the servers fail), the evidence the rest (analysis::
// SampleVerdict applies the rules); this is the one list of them and of
// their names on disk.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsearch::evidence {

enum class Verdict {
  kOk,
  kEngineFailedToStart,  // a server exited or never became ready
  kEngineDied,           // a server exited during the benchmark
  kRequestsFailed,       // requests errored or the validity gate failed
  kLogFindings,          // a server log holds a failure (OOM, traceback, NCCL, ...)
  kTimeout,              // the benchmark or a request ran past its limit
  kPreflightFailed,      // a node was not ready for the sample (port, GPUs, reachability)
  kInvalidEvidence,      // the sample's evidence cannot be true (evidence/validation.h)
};

// Every verdict, in the order reports list them.
inline constexpr Verdict kVerdicts[] = {Verdict::kOk,
                                        Verdict::kEngineFailedToStart,
                                        Verdict::kEngineDied,
                                        Verdict::kRequestsFailed,
                                        Verdict::kLogFindings,
                                        Verdict::kTimeout,
                                        Verdict::kPreflightFailed,
                                        Verdict::kInvalidEvidence};

// "ok", "engine_failed_to_start", ...: the manifest's spelling.
const char* VerdictName(Verdict verdict);
std::optional<Verdict> ParseVerdict(std::string_view name);
// The names of kVerdicts, in order.
const std::vector<std::string>& VerdictNames();

// Decided by the engine from what it saw of the servers; such a verdict
// stands whatever the records say.
bool IsEngineVerdict(Verdict verdict);

}  // namespace ppsearch::evidence
