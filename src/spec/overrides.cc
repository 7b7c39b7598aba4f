#include "spec/overrides.h"

#include <string_view>
#include <vector>

#include "spec/toml_access.h"
#include "util/excerpt.h"

namespace ppsearch::spec {
namespace {

std::string Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

bool IsBareKey(std::string_view segment) {
  if (segment.empty()) return false;
  for (char c : segment) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> SplitKeyPath(const std::string& key_path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (true) {
    size_t dot = key_path.find('.', start);
    segments.push_back(key_path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return segments;
}

std::string QuoteTomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The override as a one-line TOML document, parsed with the label as its
// source path so every node it creates can be traced back to it.
Result<toml::table> ParseOverrideDocument(const std::vector<std::string>& segments,
                                          const std::string& value, const std::string& label) {
  std::string keys;
  for (const auto& segment : segments) {
    if (!keys.empty()) keys += '.';
    keys += QuoteTomlString(segment);
  }
  try {
    return toml::parse(std::string_view(keys + " = " + value), std::string_view(label));
  } catch (const toml::parse_error& e) {
    // Text that starts like a TOML array, table or string was meant as one;
    // anything else (ttft_p50, 0.5.18, ssh) is a bare word, taken as a string.
    char first = value.front();
    if (first == '[' || first == '{' || first == '"' || first == '\'') {
      return MakeError(label + ": invalid TOML value '" + Excerpt(value) +
                       "': " + std::string(e.description()));
    }
  }
  try {
    return toml::parse(std::string_view(keys + " = " + QuoteTomlString(value)),
                       std::string_view(label));
  } catch (const toml::parse_error& e) {
    return MakeError(label + ": invalid value '" + Excerpt(value) +
                     "': " + std::string(e.description()));
  }
}

}  // namespace

// Every message about an override starts with its label: a pasted megabyte
// is cut, while a long path (a few hundred bytes) is kept whole.
std::string OverrideLabel(const std::string& override_text) {
  return "--set " + Excerpt(override_text, 4 * kExcerptBytes);
}

Status ApplyOverride(const std::string& override_text, toml::table* root) {
  const std::string label = OverrideLabel(override_text);
  size_t equals = override_text.find('=');
  if (equals == std::string::npos) {
    return MakeError(label + ": expected key.path=value, e.g. workload.requests=80");
  }
  const std::string key_path = Trim(std::string_view(override_text).substr(0, equals));
  const std::string value = Trim(std::string_view(override_text).substr(equals + 1));
  std::vector<std::string> segments = SplitKeyPath(key_path);
  for (const auto& segment : segments) {
    if (!IsBareKey(segment)) {
      return MakeError(label + ": invalid key path '" + key_path +
                       "' (expected dotted names of letters, digits, '_' or '-')");
    }
  }
  if (value.empty()) return MakeError(label + ": missing value after '='");
  // A newline would let one override smuggle in further keys.
  if (value.find_first_of("\r\n") != std::string::npos) {
    return MakeError(label + ": the value must be on one line");
  }
  PPS_ASSIGN_OR_RETURN(toml::table document, ParseOverrideDocument(segments, value, label));

  // Walk both trees along the path; the first segment the spec lacks (or the
  // leaf) takes the override's whole subtree, which keeps the label as source.
  toml::table* into = root;
  toml::table* from = &document;
  for (size_t i = 0; i < segments.size(); ++i) {
    auto from_entry = from->find(segments[i]);
    toml::node* existing = into->get(segments[i]);
    bool leaf = i + 1 == segments.size();
    if (!leaf && existing != nullptr) {
      if (!existing->is_table()) {
        std::string prefix;
        for (size_t j = 0; j <= i; ++j) prefix = JoinKey(prefix, segments[j]);
        return MakeError(label + ": '" + prefix + "' is " + DescribeType(*existing) +
                         ", not a table");
      }
      into = existing->as_table();
      from = from_entry->second.as_table();
      continue;
    }
    const toml::key& key = from_entry->first;
    from_entry->second.visit([&](auto& node) { into->insert_or_assign(key, std::move(node)); });
    break;
  }
  return Status::Ok();
}

}  // namespace ppsearch::spec
