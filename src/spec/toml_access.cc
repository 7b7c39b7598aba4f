#include "spec/toml_access.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "util/did_you_mean.h"
#include "util/excerpt.h"

namespace ppsearch::spec {
namespace {

// Limits at INT_MAX or above only guard the C++ type; they stay out of the
// message unless the value actually hits them.
std::string IntRangeText(int64_t min, int64_t max, int64_t value) {
  if (max < INT_MAX) return "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (value > max) return "<= " + std::to_string(max);
  return ">= " + std::to_string(min);
}

std::string NumberRangeText(double min, double max) {
  if (max == std::numeric_limits<double>::max()) return ">= " + FormatNumber(min);
  return "in [" + FormatNumber(min) + ", " + FormatNumber(max) + "]";
}

}  // namespace

SourceLoc SpecSource::Locate(const toml::source_region& region, std::string key) const {
  SourceLoc loc;
  loc.key = std::move(key);
  if (region.path && *region.path != path_) {
    loc.file = *region.path;  // an override: its text says more than "line 1"
    return loc;
  }
  loc.file = path_;
  loc.line = static_cast<int>(region.begin.line);
  loc.col = static_cast<int>(region.begin.column);
  return loc;
}

std::tuple<int, int, int> SpecSource::WrittenOrder(const toml::source_region& region) const {
  if (region.path && *region.path != path_) {
    auto it = std::find(override_labels_.begin(), override_labels_.end(), *region.path);
    return {1, static_cast<int>(it - override_labels_.begin()), 0};
  }
  return {0, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

std::string DescribeType(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string FormatNumber(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return std::to_string(value);
  const std::string shortest(buffer, end);
  // The shortest form writes 0.0001 as "1e-04"; a spec says 0.0001, so the
  // plain form is kept when it is at most a character longer.
  auto [fixed_end, fixed_ec] =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed);
  if (fixed_ec == std::errc() && static_cast<size_t>(fixed_end - buffer) <= shortest.size() + 1)
    return std::string(buffer, fixed_end);
  return shortest;
}

std::string JoinKey(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return std::string(prefix) + "." + std::string(key);
}

Error KeyError(const SourceLoc& loc, const std::string& what) {
  return MakeError(loc.Where() + ": " + what);
}

Error PositionError(const SourceLoc& loc, const std::string& what) {
  return MakeError(loc.Position() + ": " + what);
}

Result<int64_t> ToInt(const toml::node& node, const SourceLoc& loc, int64_t min, int64_t max) {
  const auto* value = node.as_integer();
  if (value == nullptr) return KeyError(loc, "expected an integer, got " + DescribeType(node));
  int64_t v = value->get();
  if (v < min || v > max) {
    return KeyError(
        loc, "expected an integer " + IntRangeText(min, max, v) + ", got " + std::to_string(v));
  }
  return v;
}

Result<double> ToNumber(const toml::node& node, const SourceLoc& loc, double min, double max) {
  double v = 0;
  if (const auto* i = node.as_integer()) {
    v = static_cast<double>(i->get());
  } else if (const auto* f = node.as_floating_point()) {
    v = f->get();
  } else {
    return KeyError(loc, "expected a number, got " + DescribeType(node));
  }
  // Written as a negated comparison so NaN fails it too.
  if (!(v >= min && v <= max)) {
    return KeyError(loc,
                    "expected a number " + NumberRangeText(min, max) + ", got " + FormatNumber(v));
  }
  return v;
}

Result<double> ToFiniteFloat(const toml::node& node, const SourceLoc& loc) {
  const auto* f = node.as_floating_point();
  if (f == nullptr) return KeyError(loc, "expected a float, got " + DescribeType(node));
  if (!std::isfinite(f->get()))
    return KeyError(loc, "expected a finite number, got " + FormatNumber(f->get()));
  return f->get();
}

Result<std::string> ToString(const toml::node& node, const SourceLoc& loc) {
  const auto* value = node.as_string();
  if (value == nullptr) return KeyError(loc, "expected a string, got " + DescribeType(node));
  return value->get();
}

Result<const toml::table*> ToTable(const toml::node& node, const SourceLoc& loc,
                                   const std::string& example) {
  const auto* table = node.as_table();
  if (table == nullptr) {
    std::string expected = example.empty() ? "a table" : "a table like " + example;
    return KeyError(loc, "expected " + expected + ", got " + DescribeType(node));
  }
  return table;
}

Result<const toml::array*> ToArray(const toml::node& node, const SourceLoc& loc,
                                   const std::string& what) {
  const auto* array = node.as_array();
  if (array == nullptr) {
    return KeyError(loc, "expected an array of " + what + ", got " + DescribeType(node));
  }
  if (array->empty()) return KeyError(loc, "expected a non-empty array of " + what);
  return array;
}

SourceLoc TableReader::origin() const { return source_.Locate(table_.source(), key_path_); }

SourceLoc TableReader::KeyLoc(std::string_view key) const {
  const toml::node* node = Find(key);
  return source_.Locate(node != nullptr ? node->source() : table_.source(),
                        JoinKey(key_path_, key));
}

const toml::node* TableReader::Find(std::string_view key) const { return table_.get(key); }

Status TableReader::CheckKeys(const std::vector<std::string>& known) const {
  const toml::key* first_unknown = nullptr;
  for (const auto& [key, node] : table_) {
    if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
    // Report the unknown key the user wrote first, not the alphabetically first.
    if (first_unknown == nullptr ||
        source_.WrittenOrder(key.source()) < source_.WrittenOrder(first_unknown->source())) {
      first_unknown = &key;
    }
  }
  if (first_unknown == nullptr) return Status::Ok();
  std::string message = "unknown key '" + Excerpt(JoinKey(key_path_, first_unknown->str())) + "'";
  message += DidYouMean(first_unknown->str(), known);
  return PositionError(source_.Locate(first_unknown->source(), ""), message);
}

Error TableReader::Missing(std::string_view key, const std::string& hint) const {
  return PositionError(origin(), "missing required key '" + JoinKey(key_path_, key) + "'" + hint);
}

Status TableReader::Int(std::string_view key, int64_t* out, Need need, int64_t min,
                        int64_t max) const {
  const toml::node* node = Find(key);
  if (node == nullptr) return need == Need::kRequired ? Status(Missing(key)) : Status::Ok();
  PPS_ASSIGN_OR_RETURN(*out, ToInt(*node, KeyLoc(key), min, max));
  return Status::Ok();
}

Status TableReader::Int(std::string_view key, int* out, Need need, int min, int max) const {
  int64_t wide = *out;
  PPS_RETURN_IF_ERROR(Int(key, &wide, need, min, static_cast<int64_t>(max)));
  *out = static_cast<int>(wide);
  return Status::Ok();
}

Status TableReader::Number(std::string_view key, double* out, double min, double max) const {
  const toml::node* node = Find(key);
  if (node == nullptr) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(*out, ToNumber(*node, KeyLoc(key), min, max));
  return Status::Ok();
}

Status TableReader::String(std::string_view key, std::string* out, Need need) const {
  const toml::node* node = Find(key);
  if (node == nullptr) return need == Need::kRequired ? Status(Missing(key)) : Status::Ok();
  PPS_ASSIGN_OR_RETURN(std::string value, ToString(*node, KeyLoc(key)));
  if (need == Need::kRequired && value.empty()) {
    return KeyError(KeyLoc(key), "expected a non-empty string");
  }
  *out = std::move(value);
  return Status::Ok();
}

Status TableReader::Bool(std::string_view key, bool* out) const {
  const toml::node* node = Find(key);
  if (node == nullptr) return Status::Ok();
  const auto* value = node->as_boolean();
  if (value == nullptr) {
    return KeyError(KeyLoc(key), "expected a boolean, got " + DescribeType(*node));
  }
  *out = value->get();
  return Status::Ok();
}

Status TableReader::StringList(std::string_view key, std::vector<std::string>* out,
                               bool non_empty) const {
  const toml::node* node = Find(key);
  if (node == nullptr) return Status::Ok();
  const auto* array = node->as_array();
  if (array == nullptr) {
    return KeyError(KeyLoc(key), "expected an array of strings, got " + DescribeType(*node));
  }
  if (non_empty && array->empty()) return KeyError(KeyLoc(key), "expected a non-empty array");
  std::vector<std::string> values;
  for (size_t i = 0; i < array->size(); ++i) {
    const SourceLoc loc = source_.Locate(array->get(i)->source(),
                                         JoinKey(key_path_, key) + "[" + std::to_string(i) + "]");
    PPS_ASSIGN_OR_RETURN(std::string value, ToString(*array->get(i), loc));
    values.push_back(std::move(value));
  }
  *out = std::move(values);
  return Status::Ok();
}

Status TableReader::Enum(std::string_view key, std::string* out,
                         const std::vector<std::string>& allowed) const {
  std::string value = *out;
  PPS_RETURN_IF_ERROR(String(key, &value, Need::kOptional));
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    std::string choices;
    for (const auto& choice : allowed) choices += (choices.empty() ? "'" : ", '") + choice + "'";
    return KeyError(KeyLoc(key), "expected one of " + choices + ", got '" + Excerpt(value) + "'");
  }
  *out = std::move(value);
  return Status::Ok();
}

Result<const toml::table*> TableReader::Table(std::string_view key, Need need,
                                              const std::string& example) const {
  const toml::node* node = Find(key);
  if (node == nullptr) {
    if (need == Need::kRequired) return Missing(key);
    return static_cast<const toml::table*>(nullptr);
  }
  return ToTable(*node, KeyLoc(key), example);
}

std::vector<std::pair<const toml::key*, const toml::node*>> InWrittenOrder(
    const TableReader& table) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [key, node] : table.table()) entries.emplace_back(&key, &node);
  std::stable_sort(entries.begin(), entries.end(), [&](const auto& a, const auto& b) {
    return table.source().WrittenOrder(a.first->source()) <
           table.source().WrittenOrder(b.first->source());
  });
  return entries;
}

Result<toml::table> ParseToml(const std::string& text, const std::string& path) {
  try {
    return toml::parse(std::string_view(text), std::string_view(path));
  } catch (const toml::parse_error& e) {
    SourceLoc loc;
    loc.file = path;
    loc.line = static_cast<int>(e.source().begin.line);
    loc.col = static_cast<int>(e.source().begin.column);
    return PositionError(loc, std::string(e.description()));
  }
}

}  // namespace ppsearch::spec
