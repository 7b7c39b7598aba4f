#include "spec/engine_env.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
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

std::optional<bool> ParseEnvBool(const std::string& text) {
  std::string lower;
  for (const char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true" || lower == "1" || lower == "yes" || lower == "y") return true;
  if (lower == "false" || lower == "0" || lower == "no" || lower == "n") return false;
  return std::nullopt;
}

std::optional<std::vector<int>> ParsePpLayerPartition(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string field = text.substr(start, comma == std::string::npos ? comma : comma - start);
    // int() strips whitespace, takes a leading '+' and single underscores
    // between digits ("1_2" is 12).
    const char* space = " \t\n\r\v\f";
    const size_t first = field.find_first_not_of(space);
    const size_t last = field.find_last_not_of(space);
    if (first == std::string::npos) return std::nullopt;
    field = field.substr(first, last - first + 1);
    if (field.front() == '+') field.erase(0, 1);
    for (size_t i = 0; i < field.size(); ++i) {
      if (field[i] != '_') continue;
      const bool between_digits = i > 0 && i + 1 < field.size() &&
                                  std::isdigit(static_cast<unsigned char>(field[i - 1])) &&
                                  std::isdigit(static_cast<unsigned char>(field[i + 1]));
      if (!between_digits) return std::nullopt;
      field.erase(i--, 1);
    }
    int v = 0;
    const char* end = field.data() + field.size();
    const auto [ptr, ec] = std::from_chars(field.data(), end, v);
    if (field.empty() || ec != std::errc() || ptr != end || v < 1) return std::nullopt;
    out.push_back(v);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::vector<int> PpLayerPartition(const EngineSpec& engine, int pp) {
  if (const auto entry = engine.pp_layer_partitions.find(pp);
      entry != engine.pp_layer_partitions.end())
    return entry->second;
  const std::string* text = FindEnv(engine, kPpLayerPartitionEnv);
  if (text == nullptr) return {};
  return ParsePpLayerPartition(*text).value_or(std::vector<int>{});
}

std::string PpLayerPartitionText(const std::vector<int>& partition) {
  return fmt::format("{}", fmt::join(partition, ","));
}

std::string PpLayerPartitionSource(const EngineSpec& engine, int pp) {
  if (const auto entry = engine.pp_layer_partitions.find(pp);
      entry != engine.pp_layer_partitions.end())
    return fmt::format("[engine.pp_layer_partition] {} = [{}]", pp, fmt::join(entry->second, ", "));
  const std::string* text = FindEnv(engine, kPpLayerPartitionEnv);
  return fmt::format("{} {} = \"{}\"", engine.env_origin, kPpLayerPartitionEnv, text ? *text : "");
}

namespace {

// Each modelled variable with the values SGLang (or the model) takes.
struct EnvCheck {
  const char* name;
  bool (*valid)(const std::string& value);
  const char* expected;
};
const EnvCheck kEnvChecks[] = {
    {kDynamicChunkSmoothEnv, [](const std::string& v) { return ParseSmoothFactor(v).has_value(); },
     "a number from 0 (fixed chunks) to 1 (strict)"},
    {kPpLayerPartitionEnv,
     [](const std::string& v) { return ParsePpLayerPartition(v).has_value(); },
     "each pipeline stage's layer count, whole numbers of at least 1 separated by commas "
     "(\"12,12,11\")"},
    {kMambaSkipDecodeLockEnv, [](const std::string& v) { return ParseEnvBool(v).has_value(); },
     "true, 1, yes, y, false, 0, no or n (SGLang's EnvBool; SGLang would run with the lock "
     "kept, warning that it ignores the value)"},
    {kChunkedPrefixThresholdEnv,
     [](const std::string& v) { return ParseTokenCount(v).has_value(); },
     "a whole number of tokens"},
};

}  // namespace

std::vector<const char*> ModelledEnvNames() {
  std::vector<const char*> names;
  for (const EnvCheck& check : kEnvChecks) names.push_back(check.name);
  return names;
}

const char* ModelledEnvExpected(const std::string& name, const std::string& value) {
  for (const EnvCheck& check : kEnvChecks)
    if (name == check.name && !check.valid(value)) return check.expected;
  return nullptr;
}

bool MambaSkipDecodeLock(const EngineSpec& engine) {
  const std::string* text = FindEnv(engine, kMambaSkipDecodeLockEnv);
  return text != nullptr && ParseEnvBool(*text).value_or(false);
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
