#pragma once
// Reading [engine.env] variables the simulator models.

#include <optional>
#include <string>

#include "spec/spec.h"

namespace ppsearch::spec {

inline constexpr char kDynamicChunkSmoothEnv[] = "SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR";

// The value of variable `name` in [engine.env], or nullptr.
const std::string* FindEnv(const EngineSpec& engine, const std::string& name);

// The text as a number in [0, 1]; nullopt otherwise.
std::optional<double> ParseSmoothFactor(const std::string& text);

// SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR from [engine.env] (checked to be a
// number in [0, 1] when the spec is parsed), else SGLang's 0.75 (environ.py).
double DynamicChunkSmoothFactor(const EngineSpec& engine);

}  // namespace ppsearch::spec
