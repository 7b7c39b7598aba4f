#include "spec/secrets.h"

#include <algorithm>
#include <cctype>

namespace ppsearch::spec {
namespace {

// The words that make a name a secret's.
bool IsSecretWord(const std::string& upper) {
  for (const char* word : {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL",
                           "CREDENTIALS", "AUTH"})
    if (upper == word) return true;
  return false;
}

// Splits at every character that is not a letter or digit.
bool HasSecretWord(const std::string& name) {
  std::string word;
  for (size_t i = 0; i <= name.size(); ++i) {
    const unsigned char c = i < name.size() ? static_cast<unsigned char>(name[i]) : '_';
    if (std::isalnum(c)) {
      word += static_cast<char>(std::toupper(c));
      continue;
    }
    if (IsSecretWord(word)) return true;
    word.clear();
  }
  return false;
}

}  // namespace

bool IsSecretEnvName(const std::string& name, const EngineSpec& engine) {
  return HasSecretWord(name) || std::find(engine.secret_env.begin(), engine.secret_env.end(),
                                          name) != engine.secret_env.end();
}

bool IsSecretFlag(const std::string& flag) { return HasSecretWord(flag); }

Spec WithoutSecrets(const Spec& spec) {
  Spec out = spec;
  for (auto& [name, value] : out.engine.env)
    if (IsSecretEnvName(name, spec.engine) && !value.empty()) value = kRedacted;
  auto redact_args = [](std::vector<std::pair<std::string, ArgValue>>& args) {
    for (auto& [flag, value] : args)
      if (IsSecretFlag(flag)) {
        value.kind = ArgValue::Kind::kString;
        value.text = kRedacted;
      }
  };
  redact_args(out.engine.args);
  // A disaggregated deployment's pools add flags of their own.
  if (out.disaggregation) {
    redact_args(out.disaggregation->prefill.args);
    redact_args(out.disaggregation->decode.args);
  }
  return out;
}

std::string RedactOverride(const std::string& assignment, const EngineSpec& engine) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) return assignment;
  std::string key = assignment.substr(0, eq);
  key.erase(0, key.find_first_not_of(' '));
  key.erase(key.find_last_not_of(' ') + 1);
  const bool env = key.rfind("engine.env.", 0) == 0 &&
                   IsSecretEnvName(key.substr(std::string("engine.env.").size()), engine);
  bool arg = false;
  for (const std::string prefix : {"engine.args.", "sweep.prefill.args.", "sweep.decode.args."})
    arg |= key.rfind(prefix, 0) == 0 && IsSecretFlag(key.substr(prefix.size()));
  return env || arg ? assignment.substr(0, eq + 1) + kRedacted : assignment;
}

}  // namespace ppsearch::spec
