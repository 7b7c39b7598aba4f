#include "spec/secrets.h"

#include <algorithm>
#include <cctype>

namespace ppsearch::spec {

bool IsSecretEnvName(const std::string& name, const EngineSpec& engine) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* word : {"TOKEN", "KEY", "SECRET", "PASSWORD"})
    if (upper.find(word) != std::string::npos) return true;
  return std::find(engine.secret_env.begin(), engine.secret_env.end(), name) !=
         engine.secret_env.end();
}

}  // namespace ppsearch::spec
