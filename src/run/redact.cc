#include "run/redact.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ppsearch::run {

Redactor::Redactor(const spec::Spec& spec) {
  for (const auto& [name, value] : spec.engine.env)
    if (!value.empty() && value != kRedacted && IsSecretEnvName(name, spec.engine))
      values_.push_back(value);
  std::sort(values_.begin(), values_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Redactor::Apply(std::string text) const {
  for (const std::string& v : values_) {
    for (size_t at = text.find(v); at != std::string::npos; at = text.find(v, at))
      text.replace(at, v.size(), kRedacted);
  }
  return text;
}

Status RestoreSecrets(spec::Spec& spec) {
  for (auto& [name, value] : spec.engine.env) {
    if (value != kRedacted) continue;
    const char* from_env = std::getenv(name.c_str());
    if (from_env == nullptr)
      return MakeError("engine.env." + name +
                       " is a secret and the run's copy of the spec holds it redacted; export " +
                       name + " in the environment of `ppsearch run --resume`");
    value = from_env;
  }
  return Status::Ok();
}

}  // namespace ppsearch::run
