#pragma once
// Typed, error-reporting access to one JSON object of a Hugging Face
// config.json. Every failure names the file, the dotted key path (with the
// "text_config." prefix when the values are nested) and what was expected:
//   data/models/x/config.json: key 'hidden_size': expected a positive integer, got "abc"
//   data/models/x/config.json: missing key 'text_config.hidden_size' (expected a positive integer)
// JSON null counts as "not set", as transformers writes it for absent options.

#include <climits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ppsearch::model {

class ConfigReader {
 public:
  // `object` must outlive the reader. `key_prefix` is "" or ends with '.'.
  ConfigReader(const nlohmann::json& object, std::string file, std::string key_prefix = "");

  const std::string& file() const { return file_; }
  const nlohmann::json& json() const { return *object_; }
  // Present and not null.
  bool Has(std::string_view key) const;
  // "text_config.hidden_size" for key "hidden_size".
  std::string KeyPath(std::string_view key) const;

  Result<int> PositiveInt(std::string_view key) const;
  // A positive integer of at most `max_value` (a count whose every unit the
  // model builds something for: layers).
  Result<int> PositiveIntUpTo(std::string_view key, int max_value) const;
  Result<int> PositiveIntOr(std::string_view key, int fallback) const;
  Result<int> NonNegativeIntOr(std::string_view key, int fallback) const;
  Result<bool> BoolOr(std::string_view key, bool fallback) const;
  Result<std::string> String(std::string_view key) const;
  Result<std::string> StringOr(std::string_view key, std::string fallback) const;
  // Absent or null: an empty list.
  Result<std::vector<int>> IntListOr(std::string_view key) const;
  Result<std::vector<std::string>> StringListOr(std::string_view key) const;
  // A nested object; nullopt when absent or null.
  Result<std::optional<ConfigReader>> OptionalObject(std::string_view key) const;

  // "<file>: key '<path>': <what>".
  Error Invalid(std::string_view key, std::string_view what) const;

 private:
  const nlohmann::json* Find(std::string_view key) const;
  Error Missing(std::string_view key, std::string_view expected) const;
  Error Mismatch(std::string_view key, std::string_view expected, const nlohmann::json& got) const;
  Result<int> IntInRange(std::string_view key, int min_value, std::string_view expected,
                         int max_value = INT_MAX) const;

  const nlohmann::json* object_;
  std::string file_;
  std::string key_prefix_;
};

// Short rendering of a JSON value for messages: strings quoted, long values cut.
std::string DescribeJsonValue(const nlohmann::json& value);

}  // namespace ppsearch::model
