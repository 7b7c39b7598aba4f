#pragma once
// The one table of what a difference in each setting does to a benchmark
// result: harmful (known to change it, with the reason), relevant (may
// change it; worth a look) or cosmetic (does not change what was measured).
// SGLang server flags, environment variables and every other recorded
// setting are looked up here; a flag or variable the table does not know is
// relevant, never silently cosmetic.

#include <string>

namespace ppsearch::compare {

enum class Severity { kHarmful, kRelevant, kCosmetic };

const char* SeverityName(Severity s);  // "harmful", "relevant", "cosmetic"

struct SettingClass {
  Severity severity = Severity::kRelevant;
  std::string kind;    // the group a reader scans for: "server flag", "workload", "GPU", ...
  std::string label;   // how the setting is named in the report: "pp-max-micro-batch-size"
  std::string reason;  // why it matters (or does not)
};

// The class of a recorded setting key (description.h), e.g.
// "engine.args.moe-runner-backend", "engine.env.NCCL_ALGO", "gpu.driver".
SettingClass ClassifySetting(const std::string& key);

}  // namespace ppsearch::compare
