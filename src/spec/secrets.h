#pragma once
// Which [engine.env] variables are secrets: a name holding TOKEN, KEY,
// SECRET or PASSWORD (any case), or one [engine] secret_env lists. Their
// values never reach what ppsearch writes or prints (run/redact.h).

#include <string>

#include "spec/spec.h"

namespace ppsearch::spec {

// What a secret's value is written as.
inline constexpr const char* kRedacted = "<redacted>";

bool IsSecretEnvName(const std::string& name, const EngineSpec& engine);

}  // namespace ppsearch::spec
