#pragma once
// Secrets in what ppsearch writes and prints. An [engine.env] variable is a
// secret when its name holds TOKEN, KEY, SECRET or PASSWORD (any case) or
// [engine] secret_env lists it; its value is replaced by "<redacted>" in
// commands.txt, dry runs, run.json, the copy of the spec, spec.resolved.json
// and the report. A resumed run takes the real values from the environment.

#include <string>
#include <vector>

#include "spec/secrets.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::run {

using spec::IsSecretEnvName;
using spec::kRedacted;

class Redactor {
 public:
  Redactor() = default;
  explicit Redactor(const spec::Spec& spec);
  // `text` with every secret value replaced by kRedacted.
  std::string Apply(std::string text) const;
  bool empty() const { return values_.empty(); }

 private:
  std::vector<std::string> values_;  // longest first, so no secret is cut by a shorter one
};

// The run's own spec copy holds kRedacted for secret values; a resume fills
// them from this process's environment, or fails naming the variable.
Status RestoreSecrets(spec::Spec& spec);

}  // namespace ppsearch::run
