#pragma once
// Secrets in the free text ppsearch writes: server logs and the recorded
// command line. (Structured files are redacted by structure, from the spec:
// spec/secrets.h.) Which values are secrets is spec::IsSecretEnvName and
// spec::IsSecretFlag; see docs/cluster.md, "Secrets".
//
// In free text a secret's own assignment is redacted (HF_TOKEN=..., --api-key
// ..., api_key='...'), and a value of at least kMinWordSecret characters
// wherever it stands as a whole word. A shorter value is not searched for on
// its own: "16" or "true" would rewrite unrelated text.

#include <string>
#include <vector>

#include "spec/secrets.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::run {

using spec::IsSecretEnvName;
using spec::kRedacted;

inline constexpr size_t kMinWordSecret = 8;

class Redactor {
 public:
  Redactor() = default;
  explicit Redactor(const spec::Spec& spec);
  std::string Apply(std::string text) const;
  bool empty() const { return secrets_.empty(); }

 private:
  struct Secret {
    std::vector<std::string> names;  // how its assignment is spelled
    std::string value;
  };
  std::vector<Secret> secrets_;  // longest value first
};

// The variable a redacted [engine.args] flag is restored from on resume:
// api-key -> PPSEARCH_SECRET_API_KEY.
std::string SecretArgVariable(const std::string& flag);

// The run's own spec copy holds kRedacted for secret values; a resume fills
// them from this process's environment ([engine.env] names, and
// SecretArgVariable for flags), or fails naming the variable.
Status RestoreSecrets(spec::Spec& spec);

}  // namespace ppsearch::run
