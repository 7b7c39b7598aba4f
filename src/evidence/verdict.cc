#include "evidence/verdict.h"

namespace ppsearch::evidence {

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kEngineFailedToStart:
      return "engine_failed_to_start";
    case Verdict::kEngineDied:
      return "engine_died";
    case Verdict::kRequestsFailed:
      return "requests_failed";
    case Verdict::kLogFindings:
      return "log_findings";
    case Verdict::kTimeout:
      return "timeout";
    case Verdict::kPreflightFailed:
      return "preflight_failed";
    case Verdict::kInvalidEvidence:
      return "invalid_evidence";
  }
  return "ok";
}

std::optional<Verdict> ParseVerdict(std::string_view name) {
  for (Verdict v : kVerdicts)
    if (name == VerdictName(v)) return v;
  return std::nullopt;
}

const std::vector<std::string>& VerdictNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (Verdict v : kVerdicts) out.push_back(VerdictName(v));
    return out;
  }();
  return names;
}

bool IsEngineVerdict(Verdict verdict) {
  return verdict == Verdict::kEngineFailedToStart || verdict == Verdict::kEngineDied ||
         verdict == Verdict::kTimeout || verdict == Verdict::kPreflightFailed;
}

}  // namespace ppsearch::evidence
