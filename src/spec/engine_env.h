#pragma once
// Reading [engine.env] variables the simulator models.

#include <cstdint>
#include <optional>
#include <string>

#include "spec/spec.h"

namespace ppsearch::spec {

inline constexpr char kDynamicChunkSmoothEnv[] = "SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR";
inline constexpr char kChunkedPrefixThresholdEnv[] = "SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD";

// The value of variable `name` in [engine.env], or nullptr.
const std::string* FindEnv(const EngineSpec& engine, const std::string& name);

// The text as a number in [0, 1]; nullopt otherwise.
std::optional<double> ParseSmoothFactor(const std::string& text);

// The text as a whole number of tokens, >= 0 (SGLang reads it with int());
// nullopt otherwise.
std::optional<int64_t> ParseTokenCount(const std::string& text);

// SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD from [engine.env] (checked when the
// spec is parsed), else SGLang's 8,192 (models/deepseek_v2.py): the cached
// prefix a batch needs before MLA prefill goes back to the MHA form.
int64_t ChunkedPrefixCacheThreshold(const EngineSpec& engine);

// SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR from [engine.env] (checked to be a
// number in [0, 1] when the spec is parsed), else SGLang's 0.75 (environ.py).
double DynamicChunkSmoothFactor(const EngineSpec& engine);

}  // namespace ppsearch::spec
