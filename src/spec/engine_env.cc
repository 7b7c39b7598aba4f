#include "spec/engine_env.h"

#include <charconv>
#include <cstdlib>

namespace ppsearch::spec {

const std::string* FindEnv(const EngineSpec& engine, const std::string& name) {
  for (const auto& [key, value] : engine.env)
    if (key == name) return &value;
  return nullptr;
}

std::optional<double> ParseSmoothFactor(const std::string& text) {
  // Python's float() reads what strtod reads, and SGLang takes it unchecked;
  // a factor outside [0, 1] would push chunks away from the ideal.
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(v >= 0 && v <= 1)) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseTokenCount(const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || v < 0) return std::nullopt;
  return v;
}

int64_t ChunkedPrefixCacheThreshold(const EngineSpec& engine) {
  constexpr int64_t kSglangDefault = 8192;
  const std::string* text = FindEnv(engine, kChunkedPrefixThresholdEnv);
  if (text == nullptr) return kSglangDefault;
  return ParseTokenCount(*text).value_or(kSglangDefault);
}

double DynamicChunkSmoothFactor(const EngineSpec& engine) {
  const std::string* text = FindEnv(engine, kDynamicChunkSmoothEnv);
  if (text == nullptr) return 0.75;
  return ParseSmoothFactor(*text).value_or(0.75);
}

}  // namespace ppsearch::spec
