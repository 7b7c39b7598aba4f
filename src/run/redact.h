#pragma once
// Secrets in the free text ppsearch writes: server logs and the recorded
// command line. (Structured files are redacted by structure, from the spec:
// spec/secrets.h.) Which values are secrets is spec::IsSecretEnvName and
// spec::IsSecretFlag; see docs/cluster.md, "Secrets".
//
// In free text a secret is redacted where it stands as a value: its own
// assignment (HF_TOKEN=..., --api-key ..., SGLang's printed api_key='...',
// a --set engine.args.api-key=...). It is never searched for as a word of
// prose: a key that reads "ppsearch" or "16" would rewrite the log lines
// and numbers the analysis reads.

#include <string>
#include <vector>

#include "spec/secrets.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::run {

using spec::IsSecretEnvName;
using spec::kRedacted;

// The environment variable that hands a Redactor's secrets (ToJsonText) to
// `ppsearch redact-log`, which a server's output passes through on its way
// to live/<sample>/<host>.log: the key never reaches the disk.
inline constexpr const char* kRedactSecretsVariable = "PPSEARCH_REDACT_SECRETS";

class Redactor {
 public:
  Redactor() = default;
  explicit Redactor(const spec::Spec& spec);
  std::string Apply(std::string text) const;
  bool empty() const { return secrets_.empty(); }

  // The secrets and how their assignments are spelled, as JSON, and back.
  std::string ToJsonText() const;
  static Result<Redactor> FromJsonText(const std::string& text);

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
