#include "model/config_reader.h"

#include <climits>
#include <utility>

namespace ppsearch::model {
namespace {

constexpr char kPositiveInt[] = "a positive integer";
constexpr char kNonNegativeInt[] = "a non-negative integer";
constexpr size_t kMaxShownChars = 40;

bool IsInteger(const nlohmann::json& value) {
  return value.is_number_integer() || value.is_number_unsigned();
}

}  // namespace

std::string DescribeJsonValue(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > kMaxShownChars) text = text.substr(0, kMaxShownChars - 3) + "...";
  return text;
}

ConfigReader::ConfigReader(const nlohmann::json& object, std::string file, std::string key_prefix)
    : object_(&object), file_(std::move(file)), key_prefix_(std::move(key_prefix)) {}

const nlohmann::json* ConfigReader::Find(std::string_view key) const {
  auto it = object_->find(std::string(key));
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool ConfigReader::Has(std::string_view key) const { return Find(key) != nullptr; }

std::string ConfigReader::KeyPath(std::string_view key) const {
  return key_prefix_ + std::string(key);
}

Error ConfigReader::Invalid(std::string_view key, std::string_view what) const {
  return MakeError(file_ + ": key '" + KeyPath(key) + "': " + std::string(what));
}

Error ConfigReader::Missing(std::string_view key, std::string_view expected) const {
  return MakeError(file_ + ": missing key '" + KeyPath(key) + "' (expected " +
                   std::string(expected) + ")");
}

Error ConfigReader::Mismatch(std::string_view key, std::string_view expected,
                             const nlohmann::json& got) const {
  return Invalid(key, "expected " + std::string(expected) + ", got " + DescribeJsonValue(got));
}

Result<int> ConfigReader::IntInRange(std::string_view key, int min_value, std::string_view expected,
                                     int max_value) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return Missing(key, expected);
  if (!IsInteger(*value)) return Mismatch(key, expected, *value);
  // nlohmann stores non-negative literals as unsigned; check the upper bound
  // there so huge values cannot wrap into range.
  if (value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(INT_MAX)) {
    return Mismatch(key, expected, *value);
  }
  int64_t number = value->get<int64_t>();
  if (number < min_value || number > max_value) return Mismatch(key, expected, *value);
  return static_cast<int>(number);
}

Result<int> ConfigReader::PositiveInt(std::string_view key) const {
  return IntInRange(key, 1, kPositiveInt);
}

Result<int> ConfigReader::PositiveIntUpTo(std::string_view key, int max_value) const {
  return IntInRange(key, 1, "a positive integer up to " + std::to_string(max_value), max_value);
}

Result<int> ConfigReader::PositiveIntOr(std::string_view key, int fallback) const {
  if (!Has(key)) return fallback;
  return IntInRange(key, 1, kPositiveInt);
}

Result<int> ConfigReader::NonNegativeIntOr(std::string_view key, int fallback) const {
  if (!Has(key)) return fallback;
  return IntInRange(key, 0, kNonNegativeInt);
}

Result<bool> ConfigReader::BoolOr(std::string_view key, bool fallback) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) return Mismatch(key, "true or false", *value);
  return value->get<bool>();
}

Result<std::string> ConfigReader::String(std::string_view key) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return Missing(key, "a string");
  if (!value->is_string()) return Mismatch(key, "a string", *value);
  return value->get<std::string>();
}

Result<std::string> ConfigReader::StringOr(std::string_view key, std::string fallback) const {
  if (!Has(key)) return fallback;
  return String(key);
}

Result<std::vector<int>> ConfigReader::IntListOr(std::string_view key) const {
  std::vector<int> out;
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return out;
  constexpr char kExpected[] = "a list of integers from 0 to 2147483647";
  if (!value->is_array()) return Mismatch(key, kExpected, *value);
  for (size_t i = 0; i < value->size(); ++i) {
    const nlohmann::json& item = (*value)[i];
    if (!IsInteger(item) || item.get<int64_t>() < 0 || item.get<int64_t>() > INT_MAX) {
      return Invalid(key, std::string("expected ") + kExpected + ", got " +
                              DescribeJsonValue(item) + " at index " + std::to_string(i));
    }
    out.push_back(item.get<int>());
  }
  return out;
}

Result<std::vector<std::string>> ConfigReader::StringListOr(std::string_view key) const {
  std::vector<std::string> out;
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return out;
  if (!value->is_array()) return Mismatch(key, "a list of strings", *value);
  for (const nlohmann::json& item : *value) {
    if (!item.is_string()) return Mismatch(key, "a list of strings", *value);
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::optional<ConfigReader>> ConfigReader::OptionalObject(std::string_view key) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return std::optional<ConfigReader>();
  if (!value->is_object()) return Mismatch(key, "an object", *value);
  return std::optional<ConfigReader>(ConfigReader(*value, file_, KeyPath(key) + "."));
}

}  // namespace ppsearch::model
