#include "run/redact.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ppsearch::run {

bool IsSecretEnvName(const std::string& name, const spec::EngineSpec& engine) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* word : {"TOKEN", "KEY", "SECRET", "PASSWORD"})
    if (upper.find(word) != std::string::npos) return true;
  return std::find(engine.secret_env.begin(), engine.secret_env.end(), name) !=
         engine.secret_env.end();
}

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
